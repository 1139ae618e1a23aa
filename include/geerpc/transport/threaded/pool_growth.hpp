// geerpc: tuning::automatic's rule (its pool_grow strategy, tuning/automatic_server.hpp) by which
// one reactor's handler pool (reactor.hpp) grows above its core size; tuning::none's pool grows
// whenever requests wait and every thread is busy.
//
// The pool may start a thread at once while it is under its core size (threads.handlers, its share
// of them, plus one to lead). Above it, only while fewer than the core's threads are free of stuck
// handlers (those a look found running the same request as when it was armed, growth_delay before,
// blocked or not), or while stalled: from a look that found handlers newly stuck until a handler
// finishes. Handlers that keep finishing are CPU work, which more threads would only spread over
// the same CPUs; handlers that stop finishing most often wait on something, and so will the
// requests waiting behind them: those get a thread each, one right after another, at the speed
// threads start. When the pool may not grow, a look is armed on the scheduler.
//
// Every member is called with the pool's lock held; the look's callback takes that lock, calls
// look(), then asks the pool again whether it needs a thread. The times it is given and the look's
// timer are the runtime's clock (the scheduler's), so a manual clock drives it in tests.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../../config.hpp"
#include "../../detail/assert.hpp"
#include "../../detail/chrono.hpp"
#include "../../detail/deadline.hpp"
#include "../../scheduler/deadline_scheduler.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class pool_growth {
 public:
  using clock = std::chrono::steady_clock;
  using look_callback = void (*)(void* pool);

  // `core_threads`: the threads that never retire (one more leads); `slots`: the pool's thread
  // slots; `scheduler` null: the pool grows whenever requests wait and every thread is busy.
  pool_growth(std::size_t core_threads, std::size_t slots, std::chrono::nanoseconds delay,
              deadline_scheduler* scheduler, look_callback on_look, void* pool)
      : core_threads_(core_threads),
        delay_(std::max(delay, std::chrono::nanoseconds::zero())),
        scheduler_(scheduler),
        on_look_(on_look),
        pool_(pool),
        slots_(slots) {}

  pool_growth(const pool_growth&) = delete;
  pool_growth& operator=(const pool_growth&) = delete;

  // Whether the pool, holding `threads` threads, may start one more now; if not, a look is armed.
  bool may_grow(std::size_t threads, clock::time_point now) noexcept {
    if (threads < core_threads_ + 1 || delay_ == std::chrono::nanoseconds::zero() || scheduler_ == nullptr) return true;
    if (stalled_ || threads < core_threads_ + 1 + stuck_) return true;
    return !arm_look(saturating_deadline(now, delay_));
  }

  // The look: a handler still running the request it ran when the look was armed is stuck (it has
  // run at least the delay).
  void look() noexcept {
    GEERPC_ASSERT(armed_, "pool_growth: a look ran that was not armed");
    armed_ = false;
    for (handler_slot& h : slots_)
      if (h.running && !h.stuck && h.runs == h.runs_at_look) {
        h.stuck = true;
        ++stuck_;
        stalled_ = true;
      }
    GEERPC_ASSERT(stuck_ <= slots_.size(), "pool_growth: more stuck handlers than threads");
  }

  // What the look reads of one thread's handler.
  void handler_began(std::size_t slot) noexcept {
    handler_slot& h = slots_[slot];
    GEERPC_ASSERT(!h.running && !h.stuck, "pool_growth: a thread began a handler inside another");
    ++h.runs;
    h.running = true;
  }
  void handler_ended(std::size_t slot) noexcept {
    handler_slot& h = slots_[slot];
    GEERPC_ASSERT(h.running, "pool_growth: a handler ended that had not begun");
    if (h.stuck) {
      GEERPC_ASSERT(stuck_ > 0, "threaded server: a stuck handler ended that was not counted");
      h.stuck = false;
      --stuck_;
    }
    h.running = false;
    stalled_ = false;  // handlers finish again
  }

  // Once the pool stops (its lock not held: this waits for a look that runs): nothing arms it again.
  void cancel() {
    if (scheduler_ != nullptr) scheduler_->cancel(timer_);
  }

 private:
  // Arms the look, unless it is armed, and notes which request each thread runs, for the look to
  // compare. Returns false if it could not (no scheduler, or no memory for the timer).
  bool arm_look(clock::time_point when) noexcept {
    if (armed_) return true;
    if (scheduler_ == nullptr) return false;
    try {
      scheduler_->schedule(timer_, when, on_look_, pool_);
    } catch (...) {
      return false;
    }
    armed_ = true;
    for (handler_slot& h : slots_) h.runs_at_look = h.runs;
    return true;
  }

  // Per thread slot: requests begun, and their count when the look was armed; whether a handler
  // runs, and whether the look found it stuck (counted in stuck_).
  struct handler_slot {
    std::uint64_t runs = 0;
    std::uint64_t runs_at_look = 0;
    bool running = false;
    bool stuck = false;
  };

  const std::size_t core_threads_;
  const std::chrono::nanoseconds delay_;
  deadline_scheduler* const scheduler_;
  const look_callback on_look_;
  void* const pool_;
  std::vector<handler_slot> slots_;
  std::size_t stuck_ = 0;  // handlers running that a look found stuck
  bool stalled_ = false;   // a look found handlers newly stuck, and none has finished since
  bool armed_ = false;     // timer_ is queued, or its callback runs
  deadline_scheduler::timer timer_;
};

}  // namespace detail
GEERPC_END_NAMESPACE
