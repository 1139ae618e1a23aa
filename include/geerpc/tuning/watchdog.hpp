// geerpc: a periodic look, on the deadline scheduler's thread, at something a busy thread may have
// left undone. It runs only while it is asked for: each request() makes sure a look comes within
// one to two periods, and a look that finds nothing to watch and no request since the last one
// does not come again. An idle server pays nothing; a busy one, a scheduler wake-up per period,
// rather than a timer set and cancelled per request.
#pragma once

#include <atomic>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../scheduler/deadline_scheduler.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class watchdog {
 public:
  // Runs on the scheduler thread at each look; returns whether there is still something to watch.
  using look_fn = bool (*)(void* context);

  watchdog(deadline_scheduler& scheduler, std::chrono::microseconds period, look_fn look, void* context)
      : scheduler_(scheduler), period_(period), look_(look), context_(context) {}
  ~watchdog() { stop(); }

  watchdog(const watchdog&) = delete;
  watchdog& operator=(const watchdog&) = delete;

  // Something needs watching from now on. noexcept: arming may need memory, and a server out of
  // memory here ends, as when any of its threads cannot queue a deadline, rather than run unwatched.
  void request() noexcept {
    if (!recent_.load(std::memory_order_relaxed)) recent_.store(true, std::memory_order_relaxed);
    arm();
  }

  // While nobody calls request(): after this, no look runs until the next request().
  void stop() {
    scheduler_.cancel(timer_);
    armed_.store(false);
  }

 private:
  // Arms the timer unless it is armed. A look clears armed_ before it looks, so a request that the
  // look misses is one whose caller sees armed_ clear and arms it.
  void arm() noexcept {
    if (!armed_.load() && !armed_.exchange(true))
      scheduler_.schedule(timer_, scheduler_.now() + period_, &on_timer, this);  // the runtime's clock
  }

  static void on_timer(void* context) {
    auto& self = *static_cast<watchdog*>(context);
    self.armed_.store(false);
    bool busy = self.look_(self.context_);
    // Requests come and go many times per period on a busy server: keep looking until a whole
    // period passes without one, instead of being armed again (a wake-up) by the next request.
    if (self.recent_.exchange(false, std::memory_order_relaxed)) busy = true;
    if (busy) self.arm();
  }

  deadline_scheduler& scheduler_;
  const std::chrono::microseconds period_;
  const look_fn look_;
  void* const context_;
  deadline_scheduler::timer timer_;
  std::atomic<bool> armed_{false};
  std::atomic<bool> recent_{false};  // a request came since the last look
};

}  // namespace detail
GEERPC_END_NAMESPACE
