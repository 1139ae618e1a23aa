// geerpc: what a server counts of its calls for the debug page (server/debug_page.hpp): per method,
// its outcomes by error code and its latency over the last minute; the time requests waited for a
// handler thread; the last slow or failed calls; and how often each limit turned something away.
//
// Cheap on the call's path: a finished call adds to its method's counters (relaxed atomic adds, on
// lines only that method's calls touch: its outcome, its latency window, and the histograms of its
// duration and sizes that GET /metrics serves) and to the wait for a thread, and takes no lock
// unless it was slow or failed. What is in flight now is not counted here: the page reads it from the connections. Off
// (server_options.observability.statistics = false), the server keeps none of it.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../error.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// errc's own names, as the page and the JSON show them ("deadline_exceeded"); "other" past them.
inline std::string_view errc_name(std::uint8_t status) noexcept {
  static constexpr std::array<std::string_view, static_cast<std::size_t>(last_errc) + 1> names = {"ok",
                                                                                                  "connect_timeout",
                                                                                                  "deadline_exceeded",
                                                                                                  "canceled",
                                                                                                  "handle_timeout",
                                                                                                  "unknown_service",
                                                                                                  "unknown_method",
                                                                                                  "bad_request",
                                                                                                  "remote_error",
                                                                                                  "connection_closed",
                                                                                                  "busy",
                                                                                                  "protocol_error",
                                                                                                  "connect_failed",
                                                                                                  "handshake_rejected",
                                                                                                  "bad_response",
                                                                                                  "invalid_argument",
                                                                                                  "type_mismatch",
                                                                                                  "unauthenticated",
                                                                                                  "permission_denied",
                                                                                                  "going_away",
                                                                                                  "aborted",
                                                                                                  "no_servers"};
  return status < names.size() ? names[status] : "other";
}

// Latencies in log-linear buckets of nanoseconds: eight per doubling, so a percentile read from
// them is within 12.5% (the bucket's upper bound is reported). Up to 2^40 ns (about 18 minutes);
// longer ones land in the last bucket (the exact maximum is kept beside).
struct latency_buckets {
  static constexpr unsigned sub_bits = 3;
  static constexpr unsigned top_bit = 40;
  static constexpr std::size_t count = std::size_t{top_bit - sub_bits + 2} * (std::size_t{1} << sub_bits);

  static std::size_t index(std::uint64_t ns) noexcept {
    constexpr std::uint64_t subs = 1u << sub_bits;
    if (ns < subs) return ns;
    const auto e = static_cast<unsigned>(std::bit_width(ns)) - 1;
    if (e > top_bit) return count - 1;
    const std::uint64_t sub = (ns >> (e - sub_bits)) & (subs - 1);
    return (e - sub_bits + 1) * subs + sub;
  }
  // The largest value bucket `i` holds.
  static std::uint64_t upper(std::size_t i) noexcept {
    constexpr std::uint64_t subs = 1u << sub_bits;
    if (i < subs) return i;
    const std::uint64_t e = i / subs + sub_bits - 1;
    const std::uint64_t sub = i % subs;
    return ((subs + sub + 1) << (e - sub_bits)) - 1;
  }
};

// A latency summary: how many, and the 50th and 99th percentiles and the maximum, in nanoseconds.
struct latency_summary {
  std::uint64_t count = 0;
  std::uint64_t p50_ns = 0;
  std::uint64_t p99_ns = 0;
  std::uint64_t max_ns = 0;
};

// Latencies over the last minute: six slots of ten seconds, the one for now and the five before
// (so 50 to 60 s). A slot is cleared when its ten seconds come round again, under a lock taken
// once per slot per ten seconds; a latency added while it is being cleared may be lost, which a
// statistic can afford.
class latency_window {
 public:
  using clock = std::chrono::steady_clock;
  static constexpr std::size_t slots = 6;
  static constexpr std::chrono::seconds slot_span{10};

  void add(clock::time_point now, clock::duration took) noexcept {
    const std::int64_t epoch = epoch_of(now);
    slot& s = slots_[static_cast<std::size_t>(epoch) % slots];
    if (s.epoch.load(std::memory_order_acquire) != epoch) {
      turn(s, epoch);
      // A latency older than its slot's ten seconds (a call answered by its handle timeout whose
      // handler ran on for a minute) is dropped, not allowed to turn the slot back.
      if (s.epoch.load(std::memory_order_acquire) != epoch) return;
    }
    const auto ns = static_cast<std::uint64_t>(
        std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()));
    s.counts[latency_buckets::index(ns)].fetch_add(1, std::memory_order_relaxed);
    std::uint64_t max = s.max_ns.load(std::memory_order_relaxed);
    while (ns > max && !s.max_ns.compare_exchange_weak(max, ns, std::memory_order_relaxed)) {
    }
  }

  latency_summary read(clock::time_point now) const { return read_together({this}, now); }

  // The summary of several windows' latencies taken together (a method's successes and failures).
  static latency_summary read_together(std::initializer_list<const latency_window*> windows, clock::time_point now) {
    const std::int64_t epoch = epoch_of(now);
    std::array<std::uint64_t, latency_buckets::count> sum{};
    latency_summary out;
    for (const latency_window* window : windows)
      for (const slot& s : window->slots_) {
        const std::int64_t e = s.epoch.load(std::memory_order_acquire);
        if (e < 0 || e > epoch || epoch - e >= static_cast<std::int64_t>(slots)) continue;
        for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += s.counts[i].load(std::memory_order_relaxed);
        out.max_ns = std::max(out.max_ns, s.max_ns.load(std::memory_order_relaxed));
      }
    for (const std::uint64_t n : sum) out.count += n;
    if (out.count == 0) return out;
    out.p50_ns = std::min(percentile(sum, out.count, 50), out.max_ns);
    out.p99_ns = std::min(percentile(sum, out.count, 99), out.max_ns);
    return out;
  }

 private:
  struct slot {
    std::atomic<std::int64_t> epoch{-1};
    std::atomic<std::uint64_t> max_ns{0};
    std::array<std::atomic<std::uint32_t>, latency_buckets::count> counts{};
  };

  static std::int64_t epoch_of(clock::time_point now) noexcept { return now.time_since_epoch() / slot_span; }
  // The upper bound of the bucket holding the pct-th percentile.
  static std::uint64_t percentile(const std::array<std::uint64_t, latency_buckets::count>& sum, std::uint64_t count,
                                  unsigned pct) noexcept {
    const std::uint64_t rank = (count * pct + 99) / 100;  // the rank-th smallest, 1-based
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < sum.size(); ++i) {
      seen += sum[i];
      if (seen >= rank) return latency_buckets::upper(i);
    }
    return latency_buckets::upper(sum.size() - 1);
  }
  void turn(slot& s, std::int64_t epoch) noexcept {
    std::lock_guard lock(turn_mutex_);
    if (s.epoch.load(std::memory_order_relaxed) >= epoch) return;  // another caller turned it, or it is newer
    for (auto& c : s.counts) c.store(0, std::memory_order_relaxed);
    s.max_ns.store(0, std::memory_order_relaxed);
    s.epoch.store(epoch, std::memory_order_release);
  }

  std::array<slot, slots> slots_{};
  std::mutex turn_mutex_;
};

// A histogram over fixed bounds that only grows, for GET /metrics (server/metrics_text.hpp): how
// many values were at most each bound, and their sum. Unlike latency_window it never forgets, as
// a Prometheus counter must not. Adding is two relaxed atomic adds and a scan of the bounds.
template <std::size_t Bounds>
struct fixed_histogram {
  static constexpr std::size_t buckets = Bounds + 1;  // the last holds what is above every bound
  std::array<std::atomic<std::uint64_t>, buckets> counts{};
  std::atomic<std::uint64_t> sum{0};

  void add(const std::array<std::uint64_t, Bounds>& bounds, std::uint64_t value) noexcept {
    std::size_t i = 0;
    while (i < Bounds && value > bounds[i]) ++i;
    counts[i].fetch_add(1, std::memory_order_relaxed);
    sum.fetch_add(value, std::memory_order_relaxed);
  }
};

// The bounds of the histograms GET /metrics serves: durations in nanoseconds, 1-2.5-5 steps from
// 100 us to 10 s; sizes in bytes, powers of 4 from 64 B to 16 MiB. A value equal to a bound is
// counted under it (Prometheus's `le`), exactly: these are not read from latency_buckets.
inline constexpr std::array<std::uint64_t, 16> duration_bounds_ns = {
    100'000,    250'000,     500'000,     1'000'000,   2'500'000,     5'000'000,     10'000'000,    25'000'000,
    50'000'000, 100'000'000, 250'000'000, 500'000'000, 1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000};
inline constexpr std::array<std::uint64_t, 10> size_bounds_bytes = {
    64, 256, 1u << 10, 4u << 10, 16u << 10, 64u << 10, 256u << 10, 1u << 20, 4u << 20, 16u << 20};
using duration_histogram = fixed_histogram<duration_bounds_ns.size()>;
using size_histogram = fixed_histogram<size_bounds_bytes.size()>;

// What one method's finished calls came to. Aligned to its own cache lines: the handler threads
// of different methods do not share them.
struct alignas(64) method_statistics {
  static constexpr std::size_t codes = 32;  // statuses past errc's land in the last ("other")
  std::atomic<std::uint64_t> successes{0};
  std::array<std::atomic<std::uint64_t>, codes> errors{};  // by status; [0] unused
  // From arrival to answer, over the last minute: successes, and failures apart.
  latency_window latency;
  latency_window failed_latency;
  // Since the server began, for GET /metrics: the same durations, and the sizes of the request
  // (its metadata block and arguments) and of the reply's payload (its frame less prefix and header).
  duration_histogram duration_ok;
  duration_histogram duration_failed;
  size_histogram request_bytes;
  size_histogram response_bytes;
  // Requests answered without running their handler (admission.hpp): their deadline (the caller's
  // or the handle timeout) passed before a handler thread took them, or they waited longer than
  // timeouts.max_queue_time. Also counted in `errors`, by the status they got.
  std::atomic<std::uint64_t> expired_before_start{0};
  std::atomic<std::uint64_t> shed_by_queue_time{0};

  void add_error(std::uint8_t status) noexcept {
    errors[std::min<std::size_t>(status, codes - 1)].fetch_add(1, std::memory_order_relaxed);
  }
};

// The limits that can turn something away, in the order the page lists them.
enum class limit_kind : std::uint8_t {
  connections,                  // max_connections: a connection refused
  inflight,                     // max_inflight: a request answered busy
  inflight_per_connection,      // max_inflight_per_connection: a request answered busy
  frame_size,                   // max_frame_size: a connection dropped for a frame too large
  metadata_bytes,               // max_metadata_bytes: a request answered bad_request
  pending_output,               // max_pending_output: a connection dropped for not reading
  queued_bytes,                 // max_queued_request_bytes: a request answered busy
  queued_bytes_per_connection,  // max_queued_request_bytes_per_connection: a request answered busy
  handshake_timeout,            // a connection dropped before its hello
  frame_timeout,                // a connection dropped mid-frame
  write_timeout,                // a connection dropped for not reading its replies
  threads,                      // blocking transport: a connection refused for want of a thread
  resources,                    // threaded transport: a connection closed for want of memory or an epoll watch
  deadline_before_start,        // a request whose deadline passed before its handler started: not run
  queue_time,                   // timeouts.max_queue_time: a request answered busy, not run
  adaptive_concurrency,         // limits.adaptive_concurrency: a request answered busy (concurrency_limit.hpp)
  count
};

// One call among the last slow or failed ones.
struct call_record {
  std::chrono::system_clock::time_point finished;
  std::string method;
  std::string peer;
  std::chrono::nanoseconds queued{0};    // from arrival until a handler thread took it
  std::chrono::nanoseconds handling{0};  // from then until its handler returned (0: it never ran)
  std::chrono::nanoseconds latency{0};   // from arrival until its answer went out
  std::uint8_t status = 0;
  std::string message;
};

class server_statistics {
 public:
  using clock = std::chrono::steady_clock;
  static constexpr std::size_t kept_calls = 100;
  // The most of a kept call's message held (and shown on the debug page): a handler's message may
  // echo what a peer sent, as long as it likes.
  static constexpr std::size_t kept_message_bytes = 1024;

  server_statistics(std::size_t methods, std::chrono::nanoseconds slow)
      : methods_(std::make_unique<method_statistics[]>(methods)), method_count_(methods), slow_(slow) {}

  std::size_t method_count() const noexcept { return method_count_; }
  method_statistics& method(std::size_t index) noexcept { return methods_[index]; }
  const method_statistics& method(std::size_t index) const noexcept { return methods_[index]; }
  // Calls for names the server does not serve: their errors only.
  method_statistics& unrouted() noexcept { return unrouted_; }
  const method_statistics& unrouted() const noexcept { return unrouted_; }
  // How long requests waited for a handler thread.
  latency_window& queue_wait() noexcept { return queue_wait_; }
  const latency_window& queue_wait() const noexcept { return queue_wait_; }
  // The same waits since the server began, for GET /metrics.
  duration_histogram& queue_wait_total() noexcept { return queue_wait_total_; }
  const duration_histogram& queue_wait_total() const noexcept { return queue_wait_total_; }

  void turned_away(limit_kind kind) noexcept {
    turned_away_[static_cast<std::size_t>(kind)].fetch_add(1, std::memory_order_relaxed);
  }
  std::uint64_t turned_away_count(limit_kind kind) const noexcept {
    return turned_away_[static_cast<std::size_t>(kind)].load(std::memory_order_relaxed);
  }

  bool slow(std::chrono::nanoseconds latency) const noexcept {
    return slow_ > std::chrono::nanoseconds::zero() && latency >= slow_;
  }
  std::chrono::nanoseconds slow_threshold() const noexcept { return slow_; }

  // Keeps a slow or failed call among the last kept_calls. noexcept: no memory for the record
  // loses it, never the call.
  void keep(call_record record) noexcept {
    try {
      cut_message(record.message);
      std::lock_guard lock(calls_mutex_);
      if (calls_.size() == kept_calls) calls_.pop_front();
      calls_.push_back(std::move(record));
    } catch (...) {
    }
  }
  std::vector<call_record> recent_calls() const {
    std::lock_guard lock(calls_mutex_);
    return {calls_.rbegin(), calls_.rend()};  // the newest first
  }

  // A message past kept_message_bytes keeps its start, cut where a UTF-8 sequence begins, and says
  // how long it was: "... (1048576 bytes in all)". Its memory goes.
  static void cut_message(std::string& message) {
    if (message.size() <= kept_message_bytes) return;
    const std::size_t size = message.size();
    std::size_t cut = kept_message_bytes;
    for (int back = 0; back < 3 && (static_cast<unsigned char>(message[cut]) & 0xc0U) == 0x80; ++back) --cut;
    message.resize(cut);
    message += "... (" + std::to_string(size) + " bytes in all)";
    message.shrink_to_fit();
  }

 private:
  // (In the order clang-tidy's padding check finds tightest.)
  method_statistics unrouted_;
  std::unique_ptr<method_statistics[]> methods_;
  const std::size_t method_count_;
  const std::chrono::nanoseconds slow_;
  mutable std::mutex calls_mutex_;
  std::deque<call_record> calls_;
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(limit_kind::count)> turned_away_{};
  latency_window queue_wait_;
  duration_histogram queue_wait_total_;
};

}  // namespace detail
GEERPC_END_NAMESPACE
