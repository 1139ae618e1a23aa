// geerpc: on one CPU, a threaded server thread runs a handler without first waking a follower to
// lead the I/O. Waking one costs two context switches and buys nothing unless the handler blocks:
// on one CPU the follower cannot run until then. So while no handler has lately blocked, a thread
// runs its request unled, and a watchdog (watchdog.hpp) makes the engine wake a follower if nobody
// has led for a whole period meanwhile: a slow handler leaves the I/O unled for 0.5 to 1 ms at
// most. A handler found blocked makes the requests of the next calm_period wake followers again,
// so that handlers that block run side by side. A handler counts as blocked when the watchdog
// finds one run that lasted a whole period (no thread began to lead and no handler started since
// its previous look), or, in a random one unled run out of blocking_sample, when its thread made a
// voluntary context switch (getrusage): one that blocks for less than a period is never found by
// the watchdog, yet makes the requests queued behind it wait. Waits inside the library count too
// (a contended lock, cancelling a deadline). Time is the runtime's clock (the scheduler's now()),
// so that a runtime with a manual clock drives the decision in tests.
#pragma once

#include <sys/resource.h>

#include <cstddef>
#include <cstdint>

#include "../config.hpp"
#include "../detail/assert.hpp"
#include "../detail/chrono.hpp"
#include "../scheduler/deadline_scheduler.hpp"
#include "watchdog.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class unled_runs {
 public:
  using clock = std::chrono::steady_clock;
  // The engine's look: with its pool locked, it asks look() below and wakes a follower when told
  // to. Returns whether the I/O is unled while a handler runs.
  using engine_look_fn = bool (*)(void* engine);

  static constexpr std::chrono::milliseconds calm_period{200};
  static constexpr unsigned blocking_sample = 8;
  // How long the I/O may stay unled behind a slow handler: one to two periods.
  static constexpr std::chrono::microseconds lead_watch_period{500};

  // `enabled`: the process has one CPU (more: a woken follower runs at once, and this buys nothing).
  unled_runs(deadline_scheduler& scheduler, bool enabled, engine_look_fn engine_look, void* engine)
      : enabled_(enabled), scheduler_(scheduler), watch_(scheduler, lead_watch_period, engine_look, engine) {}

  unled_runs(const unled_runs&) = delete;
  unled_runs& operator=(const unled_runs&) = delete;

  // The rest are called with the engine's pool lock held, except where said.

  // Whether a thread about to run a request may leave the I/O unled meanwhile.
  bool may_run_unled() const noexcept { return enabled_ && scheduler_.now() - last_blocked_ >= calm_period; }
  void lead_round_began() noexcept { ++lead_rounds_; }
  void run_began() noexcept { ++runs_started_; }

  // The watchdog's look, with whether the I/O is unled while a handler runs: returns whether the
  // engine must wake a follower to lead (nobody has led since the previous look), and notes a
  // handler found blocked if no handler started meanwhile either (a thread working through a queue
  // of quick requests is not blocked).
  bool look(bool unled) noexcept {
    // The counts only grow, and the look's copies only catch up with them.
    GEERPC_ASSERT(lead_rounds_ >= lead_rounds_seen_ && runs_started_ >= runs_started_seen_,
                  "unled_runs: a count went back since the watchdog's last look");
    bool wake = false;
    if (unled && lead_rounds_ == lead_rounds_seen_) {
      if (runs_started_ == runs_started_seen_) note_blocked();
      wake = true;
    }
    lead_rounds_seen_ = lead_rounds_;
    runs_started_seen_ = runs_started_;
    return wake;
  }

  // Without the lock: a thread is about to run a request unled. `draw` is that thread's own
  // random state. Returns the probe to hand to blocked() afterwards.
  struct probe {
    bool sampled = false;
    long switches_before = 0;
  };
  probe unled_run_begins(std::uint32_t& draw) noexcept {
    watch_.request();
    const bool sampled = next_draw(draw) % blocking_sample == 0;
    return {sampled, sampled ? voluntary_switches() : 0};
  }
  // Without the lock, after the run: whether it blocked.
  static bool blocked(const probe& p) noexcept { return p.sampled && voluntary_switches() != p.switches_before; }
  // With the lock: a handler was found blocked.
  void found_blocked() noexcept { note_blocked(); }

  void stop() { watch_.stop(); }

 private:
  void note_blocked() noexcept {
    const clock::time_point now = scheduler_.now();
    // The runtime's clock is steady: a blocked handler is never found before the last one.
    GEERPC_ASSERT(now >= last_blocked_, "unled_runs: the clock went back");
    last_blocked_ = now;
  }
  // One step of xorshift32: a draw cheap enough for every run, random enough to pick samples.
  static std::uint32_t next_draw(std::uint32_t& state) noexcept {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  }
  // This thread's voluntary context switches so far: it blocked if the count moved.
  static long voluntary_switches() noexcept {
    rusage usage{};
    return ::getrusage(RUSAGE_THREAD, &usage) == 0 ? usage.ru_nvcsw : 0;
  }

  const bool enabled_;
  deadline_scheduler& scheduler_;      // its now(): the runtime's clock
  clock::time_point last_blocked_{};   // when a handler was last found blocked
  std::size_t lead_rounds_ = 0;        // times a thread began to lead
  std::size_t lead_rounds_seen_ = 0;   // lead_rounds_ at the watchdog's last look
  std::size_t runs_started_ = 0;       // handler runs begun
  std::size_t runs_started_seen_ = 0;  // runs_started_ at the watchdog's last look
  watchdog watch_;                     // last: its looks use everything above
};

}  // namespace detail
GEERPC_END_NAMESPACE
