// geerpc: what the debug page shows (server/debug_page.hpp), gathered from the server once per
// request, so that the HTML and the JSON (server/debug_page_json.hpp) say the same.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../net/peer_identity.hpp"
#include "../wire/metadata.hpp"
#include "connection_view.hpp"
#include "context.hpp"
#include "dispatcher.hpp"
#include "page_text.hpp"
#include "statistics.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// The most of a traceparent value that is shown when it is not W3C's.
inline constexpr std::size_t trace_shown = 128;

// The trace id of a traceparent value (trace_id_of()); `v` may be cut after trace_shown + 1 bytes.
inline std::string trace_id_of_value(std::string_view v) {
  const auto hex = [](std::string_view part) {
    return std::all_of(part.begin(), part.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
  };
  const auto zeros = [](std::string_view part) { return part.find_first_not_of('0') == std::string_view::npos; };
  if (v.size() == 55 && v.starts_with("00-") && v[35] == '-' && v[52] == '-' && hex(v.substr(3, 32)) &&
      hex(v.substr(36, 16)) && hex(v.substr(53, 2)) && !zeros(v.substr(3, 32)) && !zeros(v.substr(36, 16)))
    return std::string(v.substr(3, 32));
  return std::string(v.substr(0, trace_shown));
}

// The trace id a call's `traceparent` metadata carries: its trace-id field when the value is W3C's
// "00-<32 hex>-<16 hex>-<2 hex>" (lowercase, ids not all zeros); else the value itself, its first
// trace_shown bytes (a peer's text: the page and the JSON escape it); empty without one.
inline std::string trace_id_of(std::span<const std::byte> metadata) {
  const std::optional<std::string_view> value =
      metadata.empty() ? std::nullopt : wire::find_metadata(metadata, "traceparent");
  return value ? trace_id_of_value(*value) : std::string();
}

// What the page shows, gathered once so that the HTML and the JSON say the same.
struct debug_snapshot {
  using clock = std::chrono::steady_clock;
  static constexpr std::size_t max_connection_rows = 200;  // the page lists this many; all are counted

  struct error_count {
    std::string_view code;  // errc's name
    std::uint64_t count = 0;
  };
  // Sizes counted in a histogram: how many, their mean, and the bound under which 99% were (the
  // histogram's, so coarse: powers of 4; 0 past the last bound).
  struct size_summary {
    std::uint64_t count = 0;
    std::uint64_t mean = 0;
    std::uint64_t p99_at_most = 0;

    static size_summary of(const size_histogram& h) {
      size_summary out;
      std::array<std::uint64_t, size_histogram::buckets> counts{};
      for (std::size_t i = 0; i < counts.size(); ++i)
        out.count += counts[i] = h.counts[i].load(std::memory_order_relaxed);
      if (out.count == 0) return out;
      out.mean = h.sum.load(std::memory_order_relaxed) / out.count;
      const std::uint64_t rank = (out.count * 99 + 99) / 100;
      std::uint64_t seen = 0;
      for (std::size_t i = 0; i < size_bounds_bytes.size(); ++i) {
        seen += counts[i];
        if (seen >= rank) {
          out.p99_at_most = size_bounds_bytes[i];
          break;
        }
      }
      return out;
    }
  };
  struct method_row {
    std::string name;
    std::string signature;
    std::string fingerprint;  // 8 hex digits; "none" for a method without one
    bool takes_stop_token = false;
    // With statistics: calls received (finished or in flight), their outcomes, what runs now.
    std::uint64_t calls = 0;
    std::uint64_t successes = 0;
    std::uint64_t in_flight = 0;
    std::vector<error_count> errors;
    // Of those errors, requests answered without running the handler (admission.hpp).
    std::uint64_t expired_before_start = 0;  // their deadline passed before a thread took them
    std::uint64_t shed_by_queue_time = 0;    // they waited longer than timeouts.max_queue_time
    std::chrono::nanoseconds oldest{0};      // age of the oldest call in flight
    latency_summary latency;                 // from arrival to answer, over the last minute
    latency_summary ok_latency;              // the same, of successes only
    latency_summary failed_latency;          // and of failures only
    // Since the server began: requests' metadata and arguments, and the payloads of handlers' replies.
    size_summary request_bytes;
    size_summary response_bytes;
  };
  // A call in flight, as the page lists it (with statistics: its arrival is kept then).
  struct call_row {
    std::string method;
    std::string peer;
    clock::time_point arrived;
    std::chrono::nanoseconds age{0};
    // The caller's deadline, if it sent one: when, by the system clock, and how long is left
    // (negative: it passed, and the call has not finished yet).
    std::optional<std::chrono::system_clock::time_point> deadline;
    std::chrono::nanoseconds time_left{0};
    std::string trace_id;  // from its traceparent metadata (trace_id_of()); empty: none
    std::string_view stage;
  };
  struct connection_row {
    std::string peer;
    std::chrono::nanoseconds age{0};
    std::optional<std::chrono::nanoseconds> idle;  // since its last read or reply (with statistics)
    std::size_t in_flight = 0;
    std::size_t pending_output = 0;
    net::peer_identity identity{};  // who it is, if it proved it (TLS), as the connection has it
  };
  struct number {
    const char* key;    // the JSON name
    const char* label;  // the page's words
    std::string text;   // as the page shows it
    std::uint64_t value = 0;
    std::optional<std::uint64_t> turned_away{};  // for a limit: how often it turned something away
  };

  bool statistics = false;
  std::vector<method_row> methods;
  std::vector<error_count> unrouted;  // calls for names the server does not serve
  std::vector<number> pool;
  static constexpr std::size_t max_call_rows = 100;  // the oldest calls in flight listed; all are counted
  std::size_t calls_in_flight = 0;                   // with statistics: counted from the connections
  std::vector<call_row> calls;                       // the oldest max_call_rows of them, oldest first
  std::size_t connection_count = 0;                  // RPC connections
  std::size_t web_connection_count = 0;              // HTTP requests for a page or /metrics being answered, not listed
  std::vector<connection_row> connections;
  std::vector<call_record> recent;  // the last slow or failed calls, newest first
  std::chrono::nanoseconds slow_call{0};
  std::vector<number> now;     // what the server holds at this moment
  std::vector<number> limits;  // server_options in force
  bool listing_calls = true;   // call_rows::listed

  static number count(const char* key, const char* label, std::uint64_t value) {
    return {key, label, std::to_string(value), value};
  }
  static number bytes(const char* key, const char* label, std::uint64_t value) {
    return {key, label, std::to_string(value) + " B", value};
  }
  // A duration: nanoseconds in the JSON, and Go's text on the page.
  static number span(const char* key, const char* label, std::chrono::nanoseconds value) {
    const auto ns = std::max(value, std::chrono::nanoseconds::zero());
    return {key, label, page_duration(ns), static_cast<std::uint64_t>(ns.count())};
  }
  // A timeout: its value in nanoseconds in the JSON (0: none), and Go's text on the page.
  static number timeout(const char* key, const char* label, std::chrono::nanoseconds value) {
    const bool none = value <= std::chrono::nanoseconds::zero();
    return {key, label, none ? "none" : duration_text(value), none ? 0 : static_cast<std::uint64_t>(value.count())};
  }

  static std::vector<error_count> errors_of(const method_statistics& m, std::uint64_t& total) {
    std::vector<error_count> out;
    for (std::size_t code = 1; code < method_statistics::codes; ++code)
      if (const std::uint64_t n = m.errors[code].load(std::memory_order_relaxed); n != 0) {
        out.push_back({errc_name(static_cast<std::uint8_t>(code)), n});
        total += n;
      }
    return out;
  }

  // Whether the calls in flight are listed (the page's), or only counted (/metrics').
  enum class call_rows : std::uint8_t { listed, counted };

  explicit debug_snapshot(const server_context& context, call_rows rows = call_rows::listed) {
    const auto at = clock::now();
    const server_statistics* const stats = context.config.stats();
    statistics = stats != nullptr;
    read_methods(context);
    in_flight_reading flight = read_connections(context, at, rows);
    list_calls(flight, at);
    if (stats != nullptr) read_statistics(*stats, at, flight);
    read_pool(context, at, flight);
    read_now(context);
    read_limits(context);
  }

 private:
  // What the connections have in flight: per method, and waiting for a handler thread.
  struct in_flight_reading {
    clock::time_point runtime_now;  // the runtime's clock, which callers' deadlines are kept by
    std::chrono::system_clock::time_point wall_now;
    std::vector<clock::time_point> oldest;  // per method, its oldest call's arrival
    std::size_t waiting = 0;                // requests no handler thread has taken yet
    clock::time_point oldest_waiting = clock::time_point::max();
    // The calls to list, as copied under the connections' locks: plain fields only, the strings
    // are made once the locks are let go (a scrape must not hold up the calls it reads).
    struct seen_call {
      const handler_entry* handler = nullptr;
      std::size_t peer = 0;  // in peers
      clock::time_point arrived;
      clock::time_point caller_deadline;
      std::string_view stage;
      std::size_t trace_size = 0;                 // of the traceparent's first trace_shown + 1 bytes
      std::array<char, trace_shown + 1> trace{};  // enough to tell a W3C value from a longer one
    };
    std::vector<seen_call> seen;
    std::vector<std::string> peers;  // of the connections with calls seen
  };

  void read_methods(const server_context& context) {
    if (context.config.handlers() == nullptr) return;
    for (const handler_entry& entry : context.config.handlers()->methods()) {
      method_row row;
      row.name = entry.name;
      row.signature = entry.signature;
      row.fingerprint = entry.fingerprint == 0 ? "none" : fingerprint_text(entry.fingerprint);
      row.takes_stop_token = entry.takes_stop_token;
      methods.push_back(std::move(row));
    }
  }

  // The connections' rows, and, with statistics, what each has in flight.
  in_flight_reading read_connections(const server_context& context, clock::time_point at, call_rows rows) {
    in_flight_reading out;
    listing_calls = rows == call_rows::listed;
    out.runtime_now = context.config.scheduler()->now();
    out.wall_now = std::chrono::system_clock::now();
    out.oldest.assign(methods.size(), clock::time_point::max());
    const handler_entry* const first =
        context.config.handlers() != nullptr ? context.config.handlers()->methods().data() : nullptr;
    context.connections.visit([&](std::span<const listed_connection* const> listed) {
      for (const listed_connection* connection : listed) read_connection(*connection, at, first, out);
    });
    return out;
  }

  // One connection's row, and, with statistics, what it has in flight.
  void read_connection(const listed_connection& connection, clock::time_point at, const handler_entry* first,
                       in_flight_reading& out) {
    const connection_view v = connection.describe();
    if (v.web) {  // this page's own request, or another's: not an RPC connection
      ++web_connection_count;
      return;
    }
    ++connection_count;
    if (connections.size() < max_connection_rows) {
      connection_row row{v.peer, at - v.opened, std::nullopt, v.inflight, v.pending_output};
      if (statistics) row.idle = at - v.last_activity;
      if (v.identity != nullptr) row.identity = *v.identity;
      connections.push_back(std::move(row));
    }
    if (!statistics || first == nullptr) return;
    const std::size_t peer = out.peers.size();
    if (listing_calls) {
      out.peers.push_back(v.peer);
      out.seen.reserve(max_call_rows);  // before the ledger's lock
    }
    connection.for_each_request([&](const request_view& request) {
      const auto i = static_cast<std::size_t>(request.handler - first);
      if (i < methods.size()) {
        ++methods[i].in_flight;
        out.oldest[i] = std::min(out.oldest[i], request.arrived);
      }
      if (request.started == clock::time_point{}) {
        ++out.waiting;
        out.oldest_waiting = std::min(out.oldest_waiting, request.arrived);
      }
      ++calls_in_flight;
      if (listing_calls) see_call(request, peer, out);
    });
  }

  // Copies what the page lists of a call in flight, if it is among the oldest max_call_rows seen
  // so far: `seen` is a heap, newest on top, so a newer call costs a comparison.
  static void see_call(const request_view& request, std::size_t peer, in_flight_reading& flight) {
    std::vector<in_flight_reading::seen_call>& seen = flight.seen;
    if (seen.size() == max_call_rows) {
      if (!(request.arrived < seen.front().arrived)) return;
      std::pop_heap(seen.begin(), seen.end(), arrived_before);
      seen.pop_back();
    }
    in_flight_reading::seen_call& call = seen.emplace_back();
    call.handler = request.handler;
    call.peer = peer;
    call.arrived = request.arrived;
    call.caller_deadline = request.caller_deadline;
    // A deferred call's handler returned: once answered, only its responder's release is awaited.
    call.stage = request.handed_on
                     ? (request.answered ? "answered, its responder not yet released" : "deferred to a responder")
                 : request.answered                       ? "answered, its handler runs on"
                 : request.started == clock::time_point{} ? "waiting for a thread"
                                                          : "in the handler";
    const std::optional<std::string_view> trace =
        request.metadata.empty() ? std::nullopt : wire::find_metadata(request.metadata, "traceparent");
    if (trace) {
      call.trace_size = std::min(trace->size(), call.trace.size());
      std::copy_n(trace->data(), call.trace_size, call.trace.data());
    }
    std::push_heap(seen.begin(), seen.end(), arrived_before);
  }
  static bool arrived_before(const in_flight_reading::seen_call& a, const in_flight_reading::seen_call& b) {
    return a.arrived < b.arrived;
  }
  // The rows of the oldest calls seen, made after the connections' locks are let go.
  void list_calls(in_flight_reading& flight, clock::time_point at) {
    std::sort_heap(flight.seen.begin(), flight.seen.end(), arrived_before);
    calls.reserve(flight.seen.size());
    for (const in_flight_reading::seen_call& seen : flight.seen) {
      call_row row{seen.handler->name, flight.peers[seen.peer], seen.arrived, at - seen.arrived, std::nullopt, {}, {},
                   seen.stage};
      if (seen.caller_deadline != clock::time_point{}) {
        row.time_left = seen.caller_deadline - flight.runtime_now;
        row.deadline = flight.wall_now + std::chrono::duration_cast<std::chrono::system_clock::duration>(row.time_left);
      }
      row.trace_id = trace_id_of_value(std::string_view(seen.trace.data(), seen.trace_size));
      calls.push_back(std::move(row));
    }
  }

  void read_statistics(const server_statistics& stats, clock::time_point at, const in_flight_reading& flight) {
    for (std::size_t i = 0; i < methods.size() && i < stats.method_count(); ++i) {
      method_row& row = methods[i];
      const method_statistics& m = stats.method(i);
      std::uint64_t failed = 0;
      row.errors = errors_of(m, failed);
      row.successes = m.successes.load(std::memory_order_relaxed);
      row.expired_before_start = m.expired_before_start.load(std::memory_order_relaxed);
      row.shed_by_queue_time = m.shed_by_queue_time.load(std::memory_order_relaxed);
      row.calls = row.successes + failed + row.in_flight;
      if (row.in_flight != 0) row.oldest = at - flight.oldest[i];
      row.latency = latency_window::read_together({&m.latency, &m.failed_latency}, at);
      row.ok_latency = m.latency.read(at);
      row.failed_latency = m.failed_latency.read(at);
      row.request_bytes = size_summary::of(m.request_bytes);
      row.response_bytes = size_summary::of(m.response_bytes);
    }
    std::uint64_t ignored = 0;
    unrouted = errors_of(stats.unrouted(), ignored);
    recent = stats.recent_calls();
    slow_call = stats.slow_threshold();
  }

  void read_pool(const server_context& context, clock::time_point at, const in_flight_reading& flight) {
    const pool_view p = context.pool.read();
    pool = {count("threads", "threads", p.threads), count("busy", "busy in a handler", p.busy)};
    if (const server_statistics* const stats = context.config.stats()) {
      const latency_summary wait = stats->queue_wait().read(at);
      pool.push_back(count("waiting", "requests waiting for a thread", flight.waiting));
      pool.push_back(span("oldest_waiting_ns", "the oldest has waited",
                          flight.waiting != 0 ? at - flight.oldest_waiting : std::chrono::nanoseconds::zero()));
      pool.push_back(
          span("longest_wait_ns", "longest wait for a thread, last minute", std::chrono::nanoseconds(wait.max_ns)));
      pool.push_back(span("p99_wait_ns", "p99 wait for a thread, last minute", std::chrono::nanoseconds(wait.p99_ns)));
    }
    pool.push_back(count("start_failures", "threads the system would not start", p.start_failures));
    if (!p.reactor_connections.empty())
      pool.push_back(count("budget_refusals", "thread starts refused: max_handlers all taken", p.budget_refusals));
    if (!p.reactor_connections.empty()) read_reactors(p.reactor_connections);
  }

  // The threaded transport's reactors: how many, and the connections of each ("3 / 2" on the page;
  // the busiest's count in the JSON).
  void read_reactors(const std::vector<std::size_t>& per_reactor) {
    pool.push_back(count("reactors", "reactors (epoll sets, each with its own leader)", per_reactor.size()));
    std::string text;
    for (const std::size_t n : per_reactor) text += (text.empty() ? "" : " / ") + std::to_string(n);
    const std::size_t busiest = *std::max_element(per_reactor.begin(), per_reactor.end());
    pool.push_back({"busiest_reactor_connections", "connections per reactor", std::move(text), busiest});
  }

  void read_now(const server_context& context) {
    now = {
        count("connections", "connections", connection_count),
        count("http_connections", "HTTP requests for this page or /metrics, not listed", web_connection_count),
        count("calls_in_flight", "calls in flight", context.requests.inflight(std::memory_order_relaxed)),
        bytes("queued_request_bytes", "request bytes waiting for a handler",
              context.requests.queued_bytes(std::memory_order_relaxed)),
        bytes("pending_output_bytes", "reply bytes waiting to be sent", context.output.now(std::memory_order_relaxed)),
        bytes("pending_output_peak_bytes", "most reply bytes ever waiting",
              context.output.peak(std::memory_order_relaxed)),
        count("refused_connections", "connections refused", context.refused.count()),
    };
  }

  // The adaptive concurrency limit now (concurrency_limit.hpp); 0 in the JSON when it is off.
  static number adaptive_limit(const concurrency_limit& limit) {
    const char* label = "calls in flight, adaptive limit";
    if (!limit.enabled()) return {"adaptive_concurrency", label, "off", 0};
    return count("adaptive_concurrency", label, limit.limit());
  }

  // Each limit, and, with statistics, how often it turned something away.
  void read_limits(const server_context& context) {
    const server_statistics* const stats = context.config.stats();
    const server_options& o = context.config.options();
    const auto with = [stats](number n, std::optional<limit_kind> kind) {
      if (stats != nullptr && kind) n.turned_away = stats->turned_away_count(*kind);
      return n;
    };
    using k = limit_kind;
    limits = {
        with(count("handler_threads", "handler threads kept", o.threads.handlers), std::nullopt),
        with(count("max_handler_threads", "handler threads at most", o.threads.max_handlers), std::nullopt),
        with(count("max_connections", "connections", o.limits.max_connections), k::connections),
        with(count("max_inflight", "calls in flight", o.limits.max_inflight), k::inflight),
        with(count("max_inflight_per_connection", "calls in flight per connection",
                   o.limits.max_inflight_per_connection),
             k::inflight_per_connection),
        with(bytes("max_frame_size", "request frame", o.limits.max_frame_size), k::frame_size),
        with(bytes("max_metadata_bytes", "request metadata", o.limits.max_metadata_bytes), k::metadata_bytes),
        with(bytes("max_pending_output", "reply bytes waiting, per connection", o.limits.max_pending_output),
             k::pending_output),
        with(bytes("max_queued_request_bytes", "request bytes waiting", o.limits.max_queued_request_bytes),
             k::queued_bytes),
        with(bytes("max_queued_request_bytes_per_connection", "request bytes waiting, per connection",
                   o.limits.max_queued_request_bytes_per_connection),
             k::queued_bytes_per_connection),
        with(timeout("handshake_timeout_ns", "handshake", o.timeouts.handshake), k::handshake_timeout),
        with(timeout("frame_timeout_ns", "frame", o.timeouts.frame), k::frame_timeout),
        with(timeout("write_timeout_ns", "write", o.timeouts.write), k::write_timeout),
        // Admission (admission.hpp): requests answered without running their handler.
        with({"deadline_before_start", "the call's deadline, checked before its handler starts", "always", 1},
             k::deadline_before_start),
        with(timeout("max_queue_time_ns", "time waiting for a handler thread", o.timeouts.max_queue_time),
             k::queue_time),
        with(adaptive_limit(context.adaptive), k::adaptive_concurrency),
    };
    if (context.adaptive.enabled())
      limits.push_back(span("adaptive_noload_latency_ns", "no-load latency, as the adaptive limit estimates it",
                            context.adaptive.noload_latency()));
    if (stats != nullptr && stats->turned_away_count(k::threads) != 0)
      limits.push_back(with(count("threads_per_connection", "a thread per connection (blocking)", 1), k::threads));
    if (stats != nullptr && stats->turned_away_count(k::resources) != 0)
      limits.push_back(
          with(count("connection_resources", "memory and an epoll watch for each connection", 1), k::resources));
  }
};

}  // namespace detail
GEERPC_END_NAMESPACE
