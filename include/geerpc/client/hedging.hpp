// geerpc: a balanced client's hedging policy, and the recent latencies of the methods it hedges
// after their p95. A hedged call of an idempotent method starts a second attempt on another server
// when the first has not answered after a delay; the first answer wins, the other is cancelled.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE

struct hedging_options {
  // Off by default: hedging adds load, and only methods marked idempotent may be hedged.
  bool enabled = false;
  // The wait before the next attempt: this, when not zero; zero: the method's recent p95 latency
  // (of its last 64 calls that succeeded, worked out again every 8), never under `min_delay`. Until
  // 16 calls of a method are measured, its calls are not hedged.
  std::chrono::nanoseconds delay{0};
  std::chrono::nanoseconds min_delay = std::chrono::milliseconds(1);
  // The attempts of one hedged call in all: the first, its hedges, and the retries of attempts
  // answered busy, going_away or broken. At most 5 (more are taken as 5, as gRPC does); under 2,
  // calls are not hedged.
  std::size_t max_attempts = 2;
};

namespace detail {

inline constexpr std::size_t most_hedged_attempts = 5;

// The latencies of each method's last calls, for a p95. Safe to use from several threads at once;
// only hedged calls of methods hedged after their p95 come here. Each hedged call asks for the p95:
// it is kept per method and worked out again only once `recompute_every` more calls are recorded
// (a copy of the window and a partial sort, which every call paid for before), so it may leave out
// the last few latencies of the window.
class latency_windows {
 public:
  static constexpr std::size_t size = 64;
  static constexpr std::size_t enough = 16;
  static constexpr std::size_t recompute_every = 8;

  void record(std::string_view method, std::chrono::nanoseconds took) {
    std::lock_guard lock(mutex_);
    auto it = windows_.find(method);
    if (it == windows_.end()) it = windows_.emplace(std::string(method), window{}).first;
    window& w = it->second;
    w.samples[w.recorded % size] = took.count();
    ++w.recorded;
  }
  // The p95 of the method's recent latencies; none until `enough` are recorded.
  std::optional<std::chrono::nanoseconds> p95(std::string_view method) const {
    std::lock_guard lock(mutex_);
    const auto it = windows_.find(method);
    if (it == windows_.end() || it->second.recorded < enough) return std::nullopt;
    const window& w = it->second;
    if (w.p95_of == 0 || w.recorded - w.p95_of >= recompute_every) {
      const std::size_t count = std::min(w.recorded, size);
      // A copy: nth_element reorders, and the ring's order says which sample goes next.
      std::array<std::int64_t, size> copy = w.samples;
      const std::size_t rank = (count * 95 + 99) / 100 - 1;  // the nearest rank
      std::nth_element(copy.begin(), copy.begin() + static_cast<std::ptrdiff_t>(rank),
                       copy.begin() + static_cast<std::ptrdiff_t>(count));
      w.p95 = copy[rank];
      w.p95_of = w.recorded;
    }
    return std::chrono::nanoseconds(w.p95);
  }

 private:
  struct window {
    std::array<std::int64_t, size> samples{};
    std::size_t recorded = 0;
    // The p95 last worked out, and `recorded` then (0: never). Written by p95(), under mutex_.
    mutable std::int64_t p95 = 0;
    mutable std::size_t p95_of = 0;
  };
  mutable std::mutex mutex_;  // guards windows_ and every field of each window
  std::map<std::string, window, std::less<>> windows_;
};

// The attempts of one hedged call that have completed, in order: told by each attempt's completion
// hook (on the thread that completes it), waited for by the caller. Shared with the hooks, which
// may run after the caller has returned.
class hedge_race {
 public:
  using clock = std::chrono::steady_clock;
  explicit hedge_race(std::size_t attempts) { finished_.reserve(attempts); }

  // `attempt` < the count reserved: a hook allocates nothing.
  void finish(std::size_t attempt) noexcept {
    std::lock_guard lock(mutex_);
    finished_.push_back(attempt);
    changed_.notify_all();
  }
  // The attempt that completed after the `seen` before it, waiting for it until `until` (none: for
  // as long as it takes; each attempt ends by the call's deadline); none if it did not come by then.
  std::optional<std::size_t> next(std::size_t seen, const std::optional<clock::time_point>& until) {
    std::unique_lock lock(mutex_);
    const auto arrived = [&] { return finished_.size() > seen; };
    if (!until)
      changed_.wait(lock, arrived);
    else if (!changed_.wait_until(lock, *until, arrived))
      return std::nullopt;
    return finished_[seen];
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::size_t> finished_;
};

}  // namespace detail
GEERPC_END_NAMESPACE
