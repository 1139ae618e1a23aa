// geerpc: the server's counters in Prometheus's text exposition format 0.0.4 (GET /metrics on the
// RPC port, under the debug page's policy: server/http_door.hpp), named after OpenTelemetry's RPC
// conventions mapped to Prometheus (rpc.server.call.duration -> rpc_server_call_duration_seconds, the
// attributes rpc.system, rpc.service and rpc.method -> labels rpc_system, rpc_service, rpc_method).
// docs/debug_page.md lists every metric. Label values are registered method names and errc's names
// and the limits' keys, never a text a peer sent: calls for names the server does not serve are
// counted by status alone.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "context.hpp"
#include "debug_snapshot.hpp"
#include "page_text.hpp"
#include "statistics.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// `text` as a label value: backslash, double quote and line feed escaped (\\, \", \n), and always
// valid UTF-8: another control character or a byte of no well-formed sequence becomes U+FFFD.
inline void append_label_value(std::string& out, std::string_view text) {
  for_each_printable_run(
      text,
      [&](std::string_view run) {
        for (const char c : run) {
          if (c == '"' || c == '\\') out += '\\';
          out += c;
        }
      },
      [&](unsigned char c) { out += c == '\n' ? "\\n" : "\xef\xbf\xbd"; });
}

// Nanoseconds as seconds, exactly: "0.00025", "2.5", "10".
inline std::string seconds_text(std::uint64_t ns) {
  std::string fraction = std::to_string(ns % 1'000'000'000 + 1'000'000'000).substr(1);
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  return std::to_string(ns / 1'000'000'000) + (fraction.empty() ? "" : "." + fraction);
}

// Writes one metric family at a time: its # HELP and # TYPE lines, then its samples, each with the
// labels set by labels().
class metrics_writer {
 public:
  explicit metrics_writer(std::string& out) : out_(out) {}

  void family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }

  // The labels of the samples that follow, written once: `name="value",` for each pair.
  void labels(std::initializer_list<std::pair<std::string_view, std::string_view>> pairs) {
    labels_.clear();
    for (const auto& [name, value] : pairs) {
      labels_ += name;
      labels_ += "=\"";
      append_label_value(labels_, value);
      labels_ += "\",";
    }
  }

  // Calls f() with one more label on the samples it writes.
  template <class F>
  void with_label(std::string_view name, std::string_view value, F&& f) {
    const std::size_t before = labels_.size();
    labels_ += name;
    labels_ += "=\"";
    append_label_value(labels_, value);
    labels_ += "\",";
    f();
    labels_.resize(before);
  }

  // `name{labels,extra} value`; `extra` is a pair written the same way, or nothing.
  void sample(std::string_view name, const std::string& value, std::string_view extra_name = {},
              std::string_view extra_value = {}) {
    out_ += name;
    out_ += '{';
    out_ += labels_;
    if (!extra_name.empty()) {
      out_ += extra_name;
      out_ += "=\"";
      append_label_value(out_, extra_value);
      out_ += "\",";
    }
    if (out_.back() == ',') out_.pop_back();
    out_ += "} ";
    out_ += value;
    out_ += '\n';
  }
  void sample(std::string_view name, std::uint64_t value) { sample(name, std::to_string(value)); }

  // A histogram's samples: cumulative _bucket{le} for each bound and +Inf, _sum, _count. `text`
  // writes a bound, or the sum, in the family's unit.
  template <std::size_t Bounds, class Text>
  void histogram(std::string_view name, const fixed_histogram<Bounds>& h,
                 const std::array<std::uint64_t, Bounds>& bounds, Text&& text) {
    const std::string bucket = std::string(name) + "_bucket";
    std::uint64_t below = 0;
    for (std::size_t i = 0; i < h.buckets; ++i) {
      below += h.counts[i].load(std::memory_order_relaxed);
      sample(bucket, std::to_string(below), "le", i < Bounds ? text(bounds[i]) : std::string("+Inf"));
    }
    // The sum is read after the buckets: a value added meanwhile may be in it and not in them.
    sample(std::string(name) + "_sum", text(h.sum.load(std::memory_order_relaxed)));
    sample(std::string(name) + "_count", below);
  }

 private:
  std::string& out_;
  std::string labels_;
};

// The service and the method of a "Service.Method" name (GeeRPC splits at the last dot).
inline std::pair<std::string_view, std::string_view> service_and_method(std::string_view name) {
  const auto dot = name.rfind('.');
  if (dot == std::string_view::npos) return {std::string_view(), name};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

// The value of the snapshot's number `key` (0 when it has none).
inline std::uint64_t number_value(const std::vector<debug_snapshot::number>& numbers, std::string_view key) {
  for (const auto& n : numbers)
    if (key == n.key) return n.value;
  return 0;
}

inline constexpr std::string_view metrics_system = "geerpc";

// What is known without statistics: connections, calls in flight, bytes held, the handler pool.
inline void append_metrics_now(metrics_writer& w, const debug_snapshot& s) {
  const struct {
    const char* name;
    const char* type;
    const char* help;
    std::uint64_t value;
  } gauges[] = {
      {"rpc_server_connections", "gauge", "RPC connections open.", s.connection_count},
      {"rpc_server_http_connections", "gauge", "HTTP connections for the debug page or /metrics (this one among them).",
       s.web_connection_count},
      {"rpc_server_connections_refused_total", "counter", "Connections refused since the server began.",
       number_value(s.now, "refused_connections")},
      {"rpc_server_calls_in_flight", "gauge", "Calls registered and not yet finished.",
       number_value(s.now, "calls_in_flight")},
      {"rpc_server_queued_request_bytes", "gauge", "Request bytes waiting for a handler thread.",
       number_value(s.now, "queued_request_bytes")},
      {"rpc_server_pending_output_bytes", "gauge", "Reply bytes waiting to be sent.",
       number_value(s.now, "pending_output_bytes")},
      {"rpc_server_handler_threads", "gauge", "Handler threads.", number_value(s.pool, "threads")},
      {"rpc_server_handler_threads_busy", "gauge", "Handler threads busy in a handler.", number_value(s.pool, "busy")},
  };
  w.labels({{"rpc_system", metrics_system}});
  for (const auto& g : gauges) {
    w.family(g.name, g.type, g.help);
    w.sample(g.name, g.value);
  }
}

// Per method: calls in flight, finished calls by status, their durations by outcome, and sizes.
inline void append_metrics_methods(metrics_writer& w, const debug_snapshot& s, const server_statistics& stats) {
  const auto for_each_method = [&](auto&& f) {
    for (std::size_t i = 0; i < s.methods.size() && i < stats.method_count(); ++i) {
      const auto [service, method] = service_and_method(s.methods[i].name);
      w.labels({{"rpc_system", metrics_system}, {"rpc_service", service}, {"rpc_method", method}});
      f(s.methods[i], stats.method(i));
    }
  };
  const auto seconds = [](std::uint64_t ns) { return seconds_text(ns); };
  const auto bytes = [](std::uint64_t n) { return std::to_string(n); };
  w.family("rpc_server_method_calls_in_flight", "gauge", "Calls of the method registered and not yet finished.");
  for_each_method([&](const debug_snapshot::method_row& row, const method_statistics&) {
    w.sample("rpc_server_method_calls_in_flight", row.in_flight);
  });
  w.family("rpc_server_calls_total", "counter", "Calls finished, by the status they were answered with.");
  for_each_method([&](const debug_snapshot::method_row& row, const method_statistics&) {
    w.sample("rpc_server_calls_total", std::to_string(row.successes), "rpc_geerpc_status", "ok");
    for (const auto& e : row.errors)
      w.sample("rpc_server_calls_total", std::to_string(e.count), "rpc_geerpc_status", e.code);
  });
  w.family("rpc_server_call_duration_seconds", "histogram",
           "Registered calls from arrival to answer, successes (rpc_outcome=ok) apart from failures (error).");
  for_each_method([&](const debug_snapshot::method_row&, const method_statistics& m) {
    for (const bool ok : {true, false})
      w.with_label("rpc_outcome", ok ? "ok" : "error", [&] {
        w.histogram("rpc_server_call_duration_seconds", ok ? m.duration_ok : m.duration_failed, duration_bounds_ns,
                    seconds);
      });
  });
  w.family("rpc_server_request_size_bytes", "histogram", "Registered requests' metadata and arguments.");
  for_each_method([&](const debug_snapshot::method_row&, const method_statistics& m) {
    w.histogram("rpc_server_request_size_bytes", m.request_bytes, size_bounds_bytes, bytes);
  });
  w.family("rpc_server_response_size_bytes", "histogram",
           "Reply payloads (error text and result, no frame header) of a handler's (or its responder's) answer.");
  for_each_method([&](const debug_snapshot::method_row&, const method_statistics& m) {
    w.histogram("rpc_server_response_size_bytes", m.response_bytes, size_bounds_bytes, bytes);
  });
}

// Server-wide, with statistics: the wait for a handler thread, calls for names not served, and
// what each limit turned away.
inline void append_metrics_server(metrics_writer& w, const debug_snapshot& s, const server_statistics& stats) {
  w.labels({{"rpc_system", metrics_system}});
  w.family("rpc_server_queue_wait_seconds", "histogram", "How long requests waited for a handler thread.");
  w.histogram("rpc_server_queue_wait_seconds", stats.queue_wait_total(), duration_bounds_ns,
              [](std::uint64_t ns) { return seconds_text(ns); });
  w.family("rpc_server_unrouted_calls_total", "counter", "Calls for names the server does not serve, by status.");
  for (const auto& e : s.unrouted)
    w.sample("rpc_server_unrouted_calls_total", std::to_string(e.count), "rpc_geerpc_status", e.code);
  w.family("rpc_server_turned_away_total", "counter",
           "What each limit turned away: connections refused or dropped, requests answered without running.");
  for (const auto& limit : s.limits)
    if (limit.turned_away)
      w.sample("rpc_server_turned_away_total", std::to_string(*limit.turned_away), "limit", limit.key);
}

inline std::string metrics_text(const server_context& context) {
  const debug_snapshot s(context, debug_snapshot::call_rows::counted);  // it prints no rows
  std::string out;
  metrics_writer w(out);
  append_metrics_now(w, s);
  if (const server_statistics* stats = context.config.stats()) {
    append_metrics_methods(w, s, *stats);
    append_metrics_server(w, s, *stats);
  }
  return out;
}

}  // namespace detail
GEERPC_END_NAMESPACE
