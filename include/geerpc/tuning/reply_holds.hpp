// geerpc: replies that a server thread holds back while it runs more requests of the same
// connection, so that requests read together are answered together: one send instead of one per
// reply, and the client's reading thread wakes once for the lot.
//
// A reply must not wait for a slow handler, and the thread holding it may be running one. So a
// watchdog (watchdog.hpp) sends whatever a thread has held for longer than max_hold. It looks
// every max_hold while holds keep happening: a server that never reads two requests of a
// connection at once pays nothing. Time is the runtime's clock (the scheduler's now()), so that a
// runtime with a manual clock drives holds and their release in tests; and the connection is a
// template parameter (server_connection in the server: anything with flush_replies() in a test).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>

#include "../config.hpp"
#include "../detail/assert.hpp"
#include "../detail/chrono.hpp"
#include "../scheduler/deadline_scheduler.hpp"
#include "../server/connection.hpp"
#include "watchdog.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

template <class Connection>
class basic_reply_holds {
 public:
  using clock = std::chrono::steady_clock;

  // The most a held reply waits: the thread that holds it sends it sooner unless the handler it
  // runs next is slow; then the watchdog sends it within max_hold to 2 * max_hold.
  static constexpr std::chrono::microseconds max_hold{500};

  // One slot per thread that runs requests; thread `index` alone holds and releases through slot `index`.
  basic_reply_holds(std::size_t threads, deadline_scheduler& scheduler)
      : slots_(std::make_unique<slot[]>(threads)),
        count_(threads),
        scheduler_(scheduler),
        watchdog_(scheduler, max_hold, &look, this) {}
  ~basic_reply_holds() { stop(); }

  basic_reply_holds(const basic_reply_holds&) = delete;
  basic_reply_holds& operator=(const basic_reply_holds&) = delete;

  // A held reply may wait up to about twice max_hold; a caller whose deadline is nearer than this
  // margin gets its reply now, so that holding never turns an answer given in time into a timeout.
  static constexpr std::chrono::milliseconds hold_margin{5};
  bool deadline_allows(const server_request& request) const {
    return !request.caller_deadline || *request.caller_deadline - scheduler_.now() > hold_margin;
  }

  // The connection whose replies thread `index` holds, or null. Only that thread calls it, and
  // only that thread changes the answer, so it reads without the lock.
  const Connection* held(std::size_t index) const noexcept { return slots_[index].connection.get(); }

  // Thread `index` is about to hold a reply of `connection` (server_connection::run with hold).
  // Its slot is most often empty or already holds `connection`: the pool releases a hold before
  // it runs a request of another connection, unless one of the held connection was next.
  // noexcept, as watchdog::request() is.
  void hold(std::size_t index, const std::shared_ptr<Connection>& connection) noexcept {
    GEERPC_ASSERT(index < count_ && connection != nullptr, "reply_holds: a hold outside the slots, or of nothing");
    slot& s = slots_[index];
    // Then the other connection's held replies leave with the answer to that next request (a
    // write sends what the writer holds), or by the hold of whichever thread runs it.
    if (s.connection == connection) return;
    {
      std::lock_guard lock(s.mutex);
      s.connection = connection;
      s.since = scheduler_.now();
    }
    for (std::size_t used = used_.load(std::memory_order_relaxed);
         used <= index && !used_.compare_exchange_weak(used, index + 1, std::memory_order_release);) {
    }
    watchdog_.request();
  }

  // Sends what thread `index` held and forgets the connection.
  void release(std::size_t index) {
    slot& s = slots_[index];
    std::shared_ptr<Connection> connection;
    {
      std::lock_guard lock(s.mutex);
      connection.swap(s.connection);
    }
    if (connection) connection->flush_replies();
  }

  // Once no thread holds or will hold anything: after this, no watchdog runs.
  void stop() { watchdog_.stop(); }

 private:
  struct alignas(64) slot {  // one cache line each: the owners write theirs often
    std::mutex mutex;        // the owner writes `connection` and the watchdog reads it under it
    std::shared_ptr<Connection> connection;
    clock::time_point since;  // when holding began, or when the watchdog last sent
  };

  // The watchdog's look: sends what has been held too long; returns whether anything is held.
  static bool look(void* context) {
    auto& self = *static_cast<basic_reply_holds*>(context);
    const auto now = self.scheduler_.now();
    bool any = false;
    // Up to the highest slot that ever held: a pool that grew once does not cost every look.
    const std::size_t used = std::min(self.used_.load(std::memory_order_acquire), self.count_);
    for (std::size_t i = 0; i < used; ++i) {
      slot& s = self.slots_[i];
      std::shared_ptr<Connection> stale;
      {
        std::lock_guard lock(s.mutex);
        if (!s.connection) continue;
        any = true;
        if (now - s.since < max_hold) continue;
        stale = s.connection;
        s.since = now;
      }
      stale->flush_replies();  // concurrent with the owner's writes: frame_writer orders them
    }
    return any;
  }

  std::unique_ptr<slot[]> slots_;
  const std::size_t count_;
  deadline_scheduler& scheduler_;     // its now(): the runtime's clock
  std::atomic<std::size_t> used_{0};  // 1 + the highest slot that ever held
  watchdog watchdog_;                 // last: its looks use the slots
};

using reply_holds = basic_reply_holds<server_connection>;

}  // namespace detail
GEERPC_END_NAMESPACE
