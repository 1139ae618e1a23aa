// geerpc: replies that a server thread holds back while it runs more requests of the same
// connection, so that requests read together are answered together: one send instead of one per
// reply, and the client's reading thread wakes once for the lot.
//
// A reply must not wait for a slow handler, and the thread holding it may be running one. So a
// watchdog (watchdog.hpp) sends whatever a thread has held for longer than max_hold. It looks
// every max_hold while holds keep happening: a server that never reads two requests of a
// connection at once pays nothing.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../scheduler/deadline_scheduler.hpp"
#include "../server/connection.hpp"
#include "watchdog.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class reply_holds {
 public:
  // The most a held reply waits: the thread that holds it sends it sooner unless the handler it
  // runs next is slow; then the watchdog sends it within max_hold to 2 * max_hold.
  static constexpr std::chrono::microseconds max_hold{500};

  // One slot per thread that runs requests; thread `index` alone holds and releases through slot `index`.
  reply_holds(std::size_t threads, deadline_scheduler& scheduler)
      : slots_(std::make_unique<slot[]>(threads)), count_(threads), watchdog_(scheduler, max_hold, &look, this) {}
  ~reply_holds() { stop(); }

  reply_holds(const reply_holds&) = delete;
  reply_holds& operator=(const reply_holds&) = delete;

  // A held reply may wait up to about twice max_hold; a caller whose deadline is nearer than this
  // margin gets its reply now, so that holding never turns an answer given in time into a timeout.
  static constexpr std::chrono::milliseconds hold_margin{5};
  static bool deadline_allows(const server_request& request) {
    return !request.caller_deadline || *request.caller_deadline - clock::now() > hold_margin;
  }

  // The connection whose replies thread `index` holds, or null. Only that thread calls it, and
  // only that thread changes the answer, so it reads without the lock.
  const server_connection* held(std::size_t index) const noexcept { return slots_[index].connection.get(); }

  // Thread `index` is about to hold a reply of `connection` (server_connection::run with hold).
  // Its slot is empty or already holds `connection`: the pool releases a hold before it runs a
  // request of another connection. noexcept, as watchdog::request() is.
  void hold(std::size_t index, const std::shared_ptr<server_connection>& connection) noexcept {
    slot& s = slots_[index];
    if (s.connection == connection) return;
    {
      std::lock_guard lock(s.mutex);
      s.connection = connection;
      s.since = clock::now();
    }
    for (std::size_t used = used_.load(std::memory_order_relaxed);
         used <= index && !used_.compare_exchange_weak(used, index + 1, std::memory_order_release);) {
    }
    watchdog_.request();
  }

  // Sends what thread `index` held and forgets the connection.
  void release(std::size_t index) {
    slot& s = slots_[index];
    std::shared_ptr<server_connection> connection;
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
    std::shared_ptr<server_connection> connection;
    clock::time_point since;  // when holding began, or when the watchdog last sent
  };

  // The watchdog's look: sends what has been held too long; returns whether anything is held.
  static bool look(void* context) {
    auto& self = *static_cast<reply_holds*>(context);
    const auto now = clock::now();
    bool any = false;
    // Up to the highest slot that ever held: a pool that grew once does not cost every look.
    const std::size_t used = std::min(self.used_.load(std::memory_order_acquire), self.count_);
    for (std::size_t i = 0; i < used; ++i) {
      slot& s = self.slots_[i];
      std::shared_ptr<server_connection> stale;
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
  std::atomic<std::size_t> used_{0};  // 1 + the highest slot that ever held
  watchdog watchdog_;                 // last: its looks use the slots
};

}  // namespace detail
GEERPC_END_NAMESPACE
