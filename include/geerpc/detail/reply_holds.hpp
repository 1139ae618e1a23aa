// geerpc: replies that a server thread holds back while it runs more requests of the same
// connection, so that requests read together are answered together: one send instead of one per
// reply, and the client's reading thread wakes once for the lot.
//
// A reply must not wait for a slow handler, and the thread holding it may be running one. So a
// watchdog on the deadline scheduler sends whatever a thread has held for longer than max_hold. It
// looks again every max_hold while holds keep happening, and stops after a period without one: an
// idle server, or one that never reads two requests of a connection at once, pays nothing; a busy
// one, a scheduler wake-up per max_hold.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>

#include "../config.hpp"
#include "deadline_scheduler.hpp"
#include "server_connection.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class reply_holds {
 public:
  // The most a held reply waits: the thread that holds it sends it sooner unless the handler it
  // runs next is slow; then the watchdog sends it within max_hold to 2 * max_hold.
  static constexpr std::chrono::microseconds max_hold{500};

  // One slot per thread that runs requests; thread `index` alone holds and releases through slot `index`.
  reply_holds(std::size_t threads, deadline_scheduler& scheduler)
      : slots_(std::make_unique<slot[]>(threads)), count_(threads), scheduler_(scheduler) {}
  ~reply_holds() { stop(); }

  reply_holds(const reply_holds&) = delete;
  reply_holds& operator=(const reply_holds&) = delete;

  // The connection whose replies thread `index` holds, or null. Only that thread calls it, and
  // only that thread changes the answer, so it reads without the lock.
  const server_connection* held(std::size_t index) const noexcept { return slots_[index].connection.get(); }

  // Thread `index` is about to hold a reply of `connection` (server_connection::run with hold).
  // Its slot is empty or already holds `connection`: the pool releases a hold before it runs a
  // request of another connection. noexcept: arming the watchdog may need memory, and a server
  // out of memory here ends, as when any of its threads cannot queue a deadline, rather than
  // keep a reply with no watchdog to send it.
  void hold(std::size_t index, const std::shared_ptr<server_connection>& connection) noexcept {
    slot& s = slots_[index];
    if (s.connection == connection) return;
    {
      std::lock_guard lock(s.mutex);
      s.connection = connection;
      s.since = clock::now();
    }
    if (!recent_.load(std::memory_order_relaxed)) recent_.store(true, std::memory_order_relaxed);
    arm_watchdog();
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
  void stop() { scheduler_.cancel(watchdog_); }

 private:
  struct alignas(64) slot {  // one cache line each: the owners write theirs often
    std::mutex mutex;        // the owner writes `connection` and the watchdog reads it under it
    std::shared_ptr<server_connection> connection;
    clock::time_point since;  // when holding began, or when the watchdog last sent
  };

  // Arms the watchdog unless it is armed. A watchdog that finds nothing held does not arm itself
  // again, so whoever holds next arms it; armed_ is cleared before the slots are looked at, so a
  // hold that the watchdog misses is one whose owner sees armed_ clear and arms it.
  void arm_watchdog() noexcept {
    if (!armed_.load() && !armed_.exchange(true))
      scheduler_.schedule(watchdog_, clock::now() + max_hold, &on_watchdog, this);
  }

  static void on_watchdog(void* context) {
    auto& self = *static_cast<reply_holds*>(context);
    self.armed_.store(false);
    const auto now = clock::now();
    bool any = false;
    for (std::size_t i = 0; i < self.count_; ++i) {
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
    // Holds come and go many times per max_hold on a busy server; keep watching until a whole
    // period passes without one, instead of being armed again (a wake-up) by the next hold.
    if (self.recent_.exchange(false, std::memory_order_relaxed)) any = true;
    if (any) self.arm_watchdog();
  }

  std::unique_ptr<slot[]> slots_;
  const std::size_t count_;
  deadline_scheduler& scheduler_;
  deadline_scheduler::timer watchdog_;
  std::atomic<bool> armed_{false};
  std::atomic<bool> recent_{false};  // a hold began since the watchdog last looked
};

}  // namespace detail
GEERPC_END_NAMESPACE
