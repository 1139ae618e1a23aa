// geerpc: a clock that moves only when told to, for tests that drive deadlines without waiting for
// them (a runtime made with runtime_options::manual_clock uses one; runtime.hpp). It reads as a
// steady_clock time point, starting where steady_clock was when it was made, so deadlines computed
// from steady_clock::now() (a context's with_timeout) fall due once it has been moved past them.
#pragma once

#include <atomic>

#include "../config.hpp"
#include "../detail/assert.hpp"
#include "../detail/chrono.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class manual_clock {
 public:
  using clock = std::chrono::steady_clock;

  explicit manual_clock(clock::time_point start = clock::now()) noexcept : ticks_(start.time_since_epoch().count()) {}
  manual_clock(const manual_clock&) = delete;
  manual_clock& operator=(const manual_clock&) = delete;

  clock::time_point now() const noexcept {
    return clock::time_point(clock::duration(ticks_.load(std::memory_order_acquire)));
  }

  // Moves the time forward by `by` (not backward: a steady clock never goes back).
  void advance(clock::duration by) noexcept {
    GEERPC_ASSERT(by.count() >= 0, "manual_clock: time moves forward only");
    ticks_.fetch_add(by.count(), std::memory_order_acq_rel);
  }

 private:
  std::atomic<clock::rep> ticks_;
};

}  // namespace detail
GEERPC_END_NAMESPACE
