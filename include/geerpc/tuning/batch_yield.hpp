// geerpc: on one CPU, a server thread woken by the first of several requests reads them all in one
// round if it first lets the other runnable threads run. The usual case is a client whose threads
// were all woken by the replies of the last round: each runs for microseconds and sends its next
// request. A server that reads at once is woken by the first request, takes the CPU from the
// others, and reads one or two requests per round, paying a sleep and a wake-up for each round;
// one that yields once (sched_yield) first reads what all of them sent.
//
// Only after a round that read several requests: a caller that makes one call at a time gains
// nothing from it, and would pay the system call in its latency.
//
// Yielding gives the CPU to whatever else is runnable, though, and a busy process sharing the CPU
// keeps it for a whole time slice (a millisecond or more) per yield. So the gate judges each yield
// by what it bought: one that took longer than `worth` per request read in the round (those that
// were waiting already included), or longer than `longest` whatever it bought, since every request
// of the round waited for it, shuts the gate for a back-off time. The back-off doubles at each
// failure (up to `max_backoff`) and shrinks by an eighth at each yield that pays: a busy neighbour
// is not always running when the server yields, so one yield that pays says little, and one that
// fails says much. Sharing the CPU with busy work then costs a time slice now and then, not one
// per round.
#pragma once

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstddef>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// Not thread-safe: used by one thread at a time (the server's leader).
class batch_yield {
 public:
  using clock = std::chrono::steady_clock;

  // A yield pays when it took at most `worth` per request read in its round (each thread of a
  // pipelining client takes a few microseconds to send its next request), and never more than
  // `longest`.
  static constexpr std::chrono::microseconds worth{20};
  static constexpr std::chrono::milliseconds longest{1};
  static constexpr std::chrono::milliseconds min_backoff{1};
  static constexpr std::chrono::milliseconds max_backoff{1000};

  // Whether to yield before this round's read: the last round read several requests, and the
  // gate is open.
  bool due() const noexcept { return last_round_ > 1 && open_at(clock::now()); }

  // Yields the CPU (`give_way`: a test's stand-in for sched_yield) and notes how long that took.
  void yield(void (*give_way)() = [] { ::sched_yield(); }) noexcept {
    const auto start = clock::now();
    give_way();
    yield_end_ = clock::now();
    yield_took_ = yield_end_ - start;
    yielded_ = true;
  }

  // After every round, with the number of requests it read.
  void after_round(std::size_t requests) noexcept {
    if (yielded_) judge(yield_took_, requests, yield_end_);
    yielded_ = false;
    last_round_ = requests;
  }

  // Judges a yield that took `took` and was followed by a read of `requests` requests, at `now`.
  void judge(clock::duration took, std::size_t requests, clock::time_point now) noexcept {
    const auto bought = worth * static_cast<long>(std::max<std::size_t>(requests, 1));
    if (took <= std::min<clock::duration>(bought, longest)) {
      backoff_ = std::max<clock::duration>(backoff_ - backoff_ / 8, min_backoff);
      return;
    }
    closed_until_ = now + backoff_;
    backoff_ = std::min<clock::duration>(backoff_ * 2, max_backoff);
  }

  // Whether the gate lets a yield through at `now`.
  bool open_at(clock::time_point now) const noexcept { return now >= closed_until_; }

 private:
  std::size_t last_round_ = 0;
  bool yielded_ = false;
  clock::duration yield_took_{};
  clock::time_point yield_end_{};
  clock::time_point closed_until_{};
  clock::duration backoff_ = min_backoff;
};

}  // namespace detail
GEERPC_END_NAMESPACE
