// geerpc: the adaptive concurrency limit (server_limits::adaptive_concurrency, off by default): how
// many requests a server lets be in flight at once, learnt from their latency, so that an
// overloaded server answers the excess errc::busy at once instead of queueing work whose callers
// give up before it runs.
//
// The algorithm is a latency gradient, as Netflix's Gradient2 limiter and brpc's "auto" limiter
// have it. A sample is one registered request's latency, from its admission (as its frame was
// read) to its retirement (its answer handed to its connection's writer): the time it queued for a
// handler thread counts, since that is what grows with overload. Samples gather in a window (at
// least `window` long and `min_samples` samples); when one closes:
//  - its mean latency is the short-term latency; the no-load estimate starts at the first window's
//    mean and falls toward a lower one a tenth of the way a window (one window of cheap calls, a
//    change of method mix, moves it little), and a probe (below) measures it again, so that a
//    permanent change of latency is learnt; a window whose mean is under 1 ns (samples racing a
//    close) teaches nothing;
//  - if the window's peak in-flight count stayed under half the limit, nothing changes: latency
//    says nothing of a limit the demand never came near (an idle server does not grow its limit);
//  - else gradient = clamp(tolerance × no-load / short, 0.5, 1), and the limit moves a fifth of the
//    way to limit × gradient + √limit: with latency within `tolerance` of the no-load one it grows
//    by about √limit / 5 a window, and as latency climbs with concurrency it settles where the two
//    balance; it shrinks by at most half its step a window, so an outlier window does little;
//  - one window every `probe_every` windows (a probe) runs at `probe_fraction` of the limit (at
//    least min_limit), and its mean becomes the no-load estimate: a queue built at the higher limit
//    drains, and a latency that went up for good (a slower database) is measured anew instead of
//    shrinking the limit to its minimum forever. Its cost: demand above the cut is answered busy
//    for that window (5 s apart by default). A probe lasts at most two window lengths: requests
//    held long (long polls, deferred responders) may keep more than the cut in flight, so that
//    every new one is refused and no sample comes; then the probe ends unmeasured and the limit
//    comes back. A refusal checks that bound too, since no sample arrives while all are refused.
//    The first window is no probe (the second is): a server that starts with long calls held would
//    refuse the rest.
// Why this over brpc's formula (max qps × no-load latency): the gradient needs no throughput
// estimate, whose peak is noisy with few handler threads, and moves smoothly; the probe is brpc's
// remeasurement, bounded in time as brpc's is.
//
// Pure: the caller passes the times (on_sample's and on_refusal's `now`); nothing here reads a
// clock. Cheap: a sample is three relaxed atomic adds (and a compare for the peak, a load for the
// probe's end); the thread whose sample ends a window closes it under a try-lock, while the others
// go on, never waiting. A sample that lands while a window closes may count in either window.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "../config.hpp"
#include "../options.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class concurrency_limit {
 public:
  using clock = std::chrono::steady_clock;
  // The longest latency a sample counts for (a longer one counts as this): the window's sum of
  // nanoseconds cannot overflow.
  static constexpr std::chrono::nanoseconds longest_sample = std::chrono::minutes(1);
  // How far the limit moves toward its target each window.
  static constexpr double smoothing = 0.2;
  // How far the no-load estimate moves toward a lower window mean each window.
  static constexpr double noload_weight = 0.1;
  // Settings above this are brought down to it: a double holds every integer up to it, so the
  // limit's rounding never overflows a size_t.
  static constexpr std::size_t largest_setting = std::size_t{1} << 53;

  concurrency_limit() = default;
  explicit concurrency_limit(const adaptive_concurrency_limit& settings, std::size_t max_inflight) {
    configure(settings, max_inflight);
  }
  concurrency_limit(const concurrency_limit&) = delete;
  concurrency_limit& operator=(const concurrency_limit&) = delete;

  // Starts afresh with `settings` (before serving: not thread-safe), bounded so that nothing below
  // divides by zero or overflows: min_limit at least 1, max_limit (0: `max_inflight`) at least
  // min_limit, both at most largest_setting, tolerance at least 1, a window of at least one sample.
  void configure(const adaptive_concurrency_limit& settings, std::size_t max_inflight) {
    enabled_ = settings.enabled;
    min_ = std::clamp<std::size_t>(settings.min_limit, 1, largest_setting);
    max_ = std::clamp(settings.max_limit != 0 ? settings.max_limit : max_inflight, min_, largest_setting);
    window_ns_ = std::clamp<std::int64_t>(settings.window.count(), 0, std::numeric_limits<std::int64_t>::max() / 4);
    min_samples_ = std::max<std::size_t>(settings.min_samples, 1);
    tolerance_ = settings.tolerance >= 1.0 ? std::min(settings.tolerance, 1e6) : 1.0;  // NaN: 1
    probe_every_ = settings.probe_every;
    probe_fraction_ = settings.probe_fraction > 0 && settings.probe_fraction <= 1 ? settings.probe_fraction : 0.5;
    limit_f_ = static_cast<double>(std::clamp(settings.initial_limit, min_, max_));
    noload_ns_ = 0;
    // The first window, at initial_limit, gives the first estimate; the second is a probe, so
    // that an estimate taken far above what the server bears is soon measured again.
    windows_ = probe_every_ != 0 ? probe_every_ - 1 : 0;
    samples_.store(0, std::memory_order_relaxed);
    latency_sum_ns_.store(0, std::memory_order_relaxed);
    peak_.store(0, std::memory_order_relaxed);
    window_start_ns_.store(no_window, std::memory_order_relaxed);
    probing_ = false;
    probe_until_ns_.store(no_probe, std::memory_order_relaxed);
    publish(limit_f_);
  }

  bool enabled() const noexcept { return enabled_; }
  // The requests that may be in flight now (relaxed: a gauge read once per admission).
  std::size_t limit() const noexcept { return limit_.load(std::memory_order_relaxed); }
  // The no-load latency estimate (0: none yet); for the debug page.
  std::chrono::nanoseconds noload_latency() const noexcept {
    return std::chrono::nanoseconds(noload_published_.load(std::memory_order_relaxed));
  }

  // One request's latency, admitted when `inflight` requests were in flight (itself included),
  // finished at `now`. Any thread. A sample from above the limit now (admitted before the limit
  // fell, or before a probe) is left out: it measures the concurrency the limit no longer allows.
  void on_sample(std::chrono::nanoseconds latency, std::size_t inflight, clock::time_point now) noexcept {
    if (!enabled_ || inflight > limit()) return;
    const std::int64_t t = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    std::int64_t start = window_start_ns_.load(std::memory_order_relaxed);
    if (start == no_window && window_start_ns_.compare_exchange_strong(start, t, std::memory_order_relaxed)) start = t;
    const auto ns = std::clamp(latency, std::chrono::nanoseconds::zero(), longest_sample).count();
    latency_sum_ns_.fetch_add(static_cast<std::uint64_t>(ns), std::memory_order_relaxed);
    const std::size_t counted = samples_.fetch_add(1, std::memory_order_relaxed) + 1;
    std::size_t peak = peak_.load(std::memory_order_relaxed);
    while (inflight > peak && !peak_.compare_exchange_weak(peak, inflight, std::memory_order_relaxed)) {
    }
    if ((counted >= min_samples_ && t - start >= window_ns_) || probe_overdue(t)) try_close(t);
  }

  // A request refused at `now` over this limit. Any thread. While every request is refused no
  // sample comes, so this is what ends a probe held up by long requests.
  void on_refusal(clock::time_point now) noexcept {
    const std::int64_t t = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    if (enabled_ && probe_overdue(t)) try_close(t);
  }

  // busy's text for a request refused at `limit`.
  static std::string refusal(std::size_t limit) {
    return "rpc server: busy: over the adaptive concurrency limit (" + std::to_string(limit) + " calls in flight)";
  }

 private:
  static constexpr std::int64_t no_window = std::numeric_limits<std::int64_t>::min();  // before the first sample
  static constexpr std::int64_t no_probe = std::numeric_limits<std::int64_t>::max();   // none running

  bool probe_overdue(std::int64_t now_ns) const noexcept {
    return now_ns >= probe_until_ns_.load(std::memory_order_relaxed);
  }

  // Closes the window if no other thread is closing it and it is still due, or ends a probe past
  // its time unmeasured; the others go on.
  void try_close(std::int64_t now_ns) noexcept {
    if (closing_.exchange(true, std::memory_order_acquire)) return;
    const std::int64_t start = window_start_ns_.load(std::memory_order_relaxed);
    const bool due = now_ns - start >= window_ns_ && samples_.load(std::memory_order_relaxed) >= min_samples_;
    if (due || (probing_ && probe_overdue(now_ns))) {
      const std::size_t n = samples_.exchange(0, std::memory_order_relaxed);
      const std::uint64_t sum = latency_sum_ns_.exchange(0, std::memory_order_relaxed);
      const std::size_t peak = peak_.exchange(0, std::memory_order_relaxed);
      window_start_ns_.store(now_ns, std::memory_order_relaxed);
      // A sample racing the close may leave its latency in one window and itself in the next: a
      // window whose mean is under 1 ns teaches nothing.
      const double mean_ns = static_cast<double>(sum) / static_cast<double>(std::max<std::size_t>(n, 1));
      if (due && mean_ns >= 1.0) {
        learn(mean_ns, peak, now_ns);
      } else if (probing_) {
        end_probe();
      }
    }
    closing_.store(false, std::memory_order_release);
  }

  // A window closed with mean latency `mean_ns` (at least 1 ns) and in-flight peak `peak`. Under closing_.
  void learn(double mean_ns, std::size_t peak, std::int64_t now_ns) noexcept {
    if (probing_) {  // the latency at the probe's cut
      noload_ns_ = mean_ns;
      return end_probe();
    }
    if (noload_ns_ == 0) {
      noload_ns_ = mean_ns;
    } else if (mean_ns < noload_ns_) {
      noload_ns_ += (mean_ns - noload_ns_) * noload_weight;
    }
    if (static_cast<double>(peak) * 2 >= limit_f_) {
      const double gradient = std::clamp(tolerance_ * noload_ns_ / mean_ns, 0.5, 1.0);
      const double target = limit_f_ * gradient + std::sqrt(limit_f_);
      limit_f_ =
          std::clamp(limit_f_ + (target - limit_f_) * smoothing, static_cast<double>(min_), static_cast<double>(max_));
    }
    if (probe_every_ != 0 && ++windows_ >= probe_every_) return start_probe(now_ns);
    publish(limit_f_);
  }

  // The next window runs at probe_fraction of the limit, and measures the no-load latency; it ends
  // unmeasured two window lengths from now.
  void start_probe(std::int64_t now_ns) noexcept {
    windows_ = 0;
    probing_ = true;
    probe_until_ns_.store(now_ns + 2 * window_ns_, std::memory_order_relaxed);
    publish(std::max(limit_f_ * probe_fraction_, static_cast<double>(min_)));
  }
  void end_probe() noexcept {
    probing_ = false;
    probe_until_ns_.store(no_probe, std::memory_order_relaxed);
    publish(limit_f_);
  }

  void publish(double limit) noexcept {
    // limit is within [min_, max_], at most largest_setting: a double holds it exactly.
    limit_.store(std::clamp(static_cast<std::size_t>(std::llround(limit)), min_, max_), std::memory_order_relaxed);
    noload_published_.store(static_cast<std::int64_t>(noload_ns_), std::memory_order_relaxed);
  }

  // Set by configure(), before serving.
  std::size_t min_ = 1;
  std::size_t max_ = 1;
  std::int64_t window_ns_ = 0;
  std::size_t min_samples_ = 1;
  double tolerance_ = 1.0;
  std::size_t probe_every_ = 0;
  double probe_fraction_ = 0.5;
  bool enabled_ = false;
  // The window being filled, by any thread: every retirement writes these, so a cache line's worth
  // of bytes keeps them apart from limit_, which every admission reads. Bytes, not alignas(64),
  // which would make every object holding a server (a user's too) over-aligned.
  [[maybe_unused]] char apart_from_settings_[64] = {};
  std::atomic<std::int64_t> window_start_ns_{no_window};
  std::atomic<std::size_t> samples_{0};
  std::atomic<std::uint64_t> latency_sum_ns_{0};
  std::atomic<std::size_t> peak_{0};
  // The estimates, read and written only under closing_.
  double limit_f_ = 1;
  double noload_ns_ = 0;
  std::size_t windows_ = 0;           // since the last probe
  std::atomic<bool> closing_{false};  // the try-lock: the thread that sets it closes the window
  bool probing_ = false;
  [[maybe_unused]] char apart_from_window_[64] = {};
  // What the admissions, the refusals and the debug page read; written when a window closes.
  std::atomic<std::size_t> limit_{1};
  std::atomic<std::int64_t> probe_until_ns_{no_probe};  // when a running probe ends unmeasured
  std::atomic<std::int64_t> noload_published_{0};
};

}  // namespace detail
GEERPC_END_NAMESPACE
