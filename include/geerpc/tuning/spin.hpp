// geerpc: a short, bounded spin before a caller sleeps. On a virtual machine an idle CPU halts,
// and waking a thread onto it costs tens of microseconds, more than a whole call over loopback.
// A caller waiting for its reply therefore looks for it a little longer before it sleeps, but
// only when that cannot cost anyone else: when its process may run on more than one CPU (with
// one, it would only delay the very thread it waits for) and when it is the only caller of its
// process waiting (with more, the CPUs are busy serving them, and a spinner would take one away
// from the work it waits for; sleeping costs nothing there, since the CPUs are not idle).
//
// The count of waiting callers is the one piece of state geerpc keeps for the whole process, on
// purpose: what it guards, the process's CPUs, is shared by every client in the process, so a
// count per client would let each of a hundred clients' lone callers spin at once. It decides only
// whether a caller spins, never what any call returns.
#pragma once

#include <atomic>
#include <optional>
#include <utility>

#include "../config.hpp"
#include "../detail/assert.hpp"
#include "../detail/chrono.hpp"
#include "cpu_budget.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// How long a caller spins before it sleeps, by default (tuning::settings::spin): about one wake-up
// of a halted virtual CPU. A longer spin wins little more and burns a CPU the peer may need.
inline constexpr std::chrono::microseconds spin_budget{50};

// The clock a spin is measured by: steady_clock's, or a test's.
struct steady_now {
  std::chrono::steady_clock::time_point operator()() const noexcept { return std::chrono::steady_clock::now(); }
};

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Held by a caller for as long as it waits for its reply, asleep or not: counts the waiting
// callers of its runtime (runtime::waiting_callers()), so that a lone one may spin.
class reply_wait {
 public:
  // `waiting`: the count of waiting callers it joins; `budget`: the longest spin (0: never);
  // `several`: whether the runtime has CPUs to spare.
  reply_wait(std::atomic<int>& waiting, std::chrono::microseconds budget, bool several) noexcept
      : waiting_(waiting), budget_(budget), several_(several) {
    GEERPC_ASSERT(budget.count() >= 0, "reply_wait: a negative spin budget");
    waiting_.fetch_add(1, std::memory_order_relaxed);
  }
  ~reply_wait() { waiting_.fetch_sub(1, std::memory_order_relaxed); }
  reply_wait(const reply_wait&) = delete;
  reply_wait& operator=(const reply_wait&) = delete;

  // Whether spinning pays now: several CPUs, and no other caller of the runtime waiting.
  bool may_spin() const noexcept {
    const int waiting = waiting_.load(std::memory_order_relaxed);
    // This waiter counts itself from its construction to its end.
    GEERPC_ASSERT(waiting >= 1, "reply_wait: a waiter that the count of waiting callers misses");
    return several_ && budget_.count() > 0 && waiting == 1;
  }

  // Polls `done` for up to the budget, by `now` (a clock: steady_clock's unless a test's), when
  // spinning pays; returns its last answer. `done` may make a system call: the clock is read
  // after each poll.
  template <class Done, class Now = steady_now>
  bool spin_until(Done&& done, Now now = {}) const {
    return spin_within(std::forward<Done>(done), std::nullopt, now);
  }
  // The same, and never past `deadline` where there is one: a call's, for a caller that spins on
  // its own socket, which nothing else would stop at its deadline.
  template <class Done, class Now = steady_now>
  bool spin_within(Done&& done, const std::optional<std::chrono::steady_clock::time_point>& deadline,
                   Now now = {}) const {
    if (!may_spin()) return done();
    auto until = now() + budget_;
    if (deadline && *deadline < until) until = *deadline;
    for (;;) {
      if (done()) return true;
      if (now() >= until) return done();
      cpu_relax();
    }
  }

 private:
  std::atomic<int>& waiting_;
  const std::chrono::microseconds budget_;
  const bool several_;
};

}  // namespace detail
GEERPC_END_NAMESPACE
