// geerpc: graceful shutdown's gate: while it drains, the request that finishes last wakes the
// server waiting for the count of requests in flight to reach 0.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// server_link::shutdown() opens it (begin) and waits (wait_drained); each finishing request passes
// through finish(). The waiter also looks again every `poll`, so no per-request fence is spent
// closing the race between the draining flag and the count.
class drain_gate {
 public:
  // How often wait_drained() looks again by default, besides the wake-up of the last request
  // finishing: a late look costs a stopping server this long at most, an early one a wake-up.
  static constexpr std::chrono::milliseconds default_poll{5};

  explicit drain_gate(std::chrono::nanoseconds poll = default_poll) noexcept : poll_(poll) {}

  void begin() noexcept { draining_.store(true); }
  void end() noexcept { draining_.store(false); }
  bool draining(std::memory_order order = std::memory_order_seq_cst) const noexcept { return draining_.load(order); }

  // Runs `count_out` (which takes one request off the count wait_drained reads): alone while not
  // draining; while draining, under the waiter's lock, then wakes it.
  template <class CountOut>
  void finish(CountOut&& count_out) {
    if (!draining_.load(std::memory_order_relaxed)) [[likely]]
      return count_out();
    std::lock_guard lock(mutex_);
    count_out();
    drained_.notify_all();
  }

  // Waits until `idle()` holds, or `deadline`; true if it holds.
  template <class Idle>
  bool wait_drained(std::chrono::steady_clock::time_point deadline, Idle&& idle) {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (idle()) return true;
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return false;
      drained_.wait_until(lock, now + std::min<std::chrono::nanoseconds>(deadline - now, poll_));
    }
  }

 private:
  std::atomic<bool> draining_{false};
  std::chrono::nanoseconds poll_;
  std::mutex mutex_;
  std::condition_variable drained_;
};

}  // namespace detail
GEERPC_END_NAMESPACE
