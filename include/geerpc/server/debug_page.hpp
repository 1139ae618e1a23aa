// geerpc: the debug page a server serves on its RPC port (GET /debug/geerpc), and the same data as
// JSON (GET /debug/geerpc/stats.json), for someone chasing a timeout in production: its services
// and methods with their types; per method, calls and their outcomes by error code, calls in flight
// and the oldest's age, latency over the last minute; the handler pool; the connections; the last
// slow or failed calls; what the server holds now, and its limits with how often each turned
// something away. Plain HTML with no scripts and no external assets, so that it reads anywhere.
//
// The JSON is written here rather than by a JSON library: the core depends on Boost alone, and
// what is written is a fixed shape of numbers and escaped strings.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../detail/duration_text.hpp"
#include "connection_view.hpp"
#include "context.hpp"
#include "dispatcher.hpp"
#include "statistics.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

inline void append_html_escaped(std::string& out, std::string_view text) {
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
}

inline void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(u));
      out += escaped;
    } else {
      out += c;  // UTF-8 passes as it is (method names are the program's own text)
    }
  }
  out += '"';
}

inline std::string fingerprint_text(std::uint32_t fingerprint) {
  char text[16];
  std::snprintf(text, sizeof text, "%08x", fingerprint);
  return text;
}

// A duration to three significant digits, for people: "28.7us", "40.2ms", "2.05s"; from a minute
// up, Go's "1m30s" to the second.
inline std::string page_duration(std::chrono::nanoseconds d) {
  const std::int64_t ns = std::max<std::int64_t>(0, d.count());
  if (ns < 1'000) return std::to_string(ns) + "ns";
  if (ns >= 60'000'000'000) return duration_text(std::chrono::seconds(ns / 1'000'000'000));
  // Units change where three digits would round up to the next one (999.6us is "1ms").
  const bool us = ns < 999'500, ms = !us && ns < 999'500'000;
  const double unit = us ? 1e3 : ms ? 1e6 : 1e9;
  char text[32];
  std::snprintf(text, sizeof text, "%.3g%s", static_cast<double>(ns) / unit, us ? "us" : ms ? "ms" : "s");
  return text;
}

// "2026-12-03 18:04:47.120 UTC"
inline std::string utc_text(std::chrono::system_clock::time_point when) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count();
  const std::time_t seconds = ms / 1000;
  std::tm parts{};
  ::gmtime_r(&seconds, &parts);
  char text[48];
  std::snprintf(text, sizeof text, "%04d-%02d-%02d %02d:%02d:%02d.%03d UTC", parts.tm_year + 1900, parts.tm_mon + 1,
                parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, static_cast<int>(ms % 1000));
  return text;
}

// What the page shows, gathered once so that the HTML and the JSON say the same.
struct debug_snapshot {
  using clock = std::chrono::steady_clock;
  static constexpr std::size_t max_connection_rows = 200;  // the page lists this many; all are counted

  struct error_count {
    std::string_view code;  // errc's name
    std::uint64_t count = 0;
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
    std::chrono::nanoseconds oldest{0};  // age of the oldest call in flight
    latency_summary latency;             // from arrival to answer, over the last minute
  };
  struct connection_row {
    std::string peer;
    std::chrono::nanoseconds age{0};
    std::optional<std::chrono::nanoseconds> idle;  // since its last read or reply (with statistics)
    std::size_t in_flight = 0;
    std::size_t pending_output = 0;
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
  std::size_t connection_count = 0;
  std::vector<connection_row> connections;
  std::vector<call_record> recent;  // the last slow or failed calls, newest first
  std::chrono::nanoseconds slow_call{0};
  std::vector<number> now;     // what the server holds at this moment
  std::vector<number> limits;  // server_options in force

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

  explicit debug_snapshot(const server_context& context) {
    const auto at = clock::now();
    const server_statistics* const stats = context.stats.get();
    statistics = stats != nullptr;
    const std::vector<handler_entry>* entries = context.handlers != nullptr ? &context.handlers->methods() : nullptr;
    if (entries != nullptr)
      for (const handler_entry& entry : *entries) {
        method_row row;
        row.name = entry.name;
        row.signature = entry.signature;
        row.fingerprint = entry.fingerprint == 0 ? "none" : fingerprint_text(entry.fingerprint);
        row.takes_stop_token = entry.takes_stop_token;
        methods.push_back(std::move(row));
      }

    // What is in flight now, read from the connections.
    std::vector<clock::time_point> oldest(methods.size(), clock::time_point::max());
    std::size_t waiting = 0;  // requests no handler thread has taken yet
    clock::time_point oldest_waiting = clock::time_point::max();
    {
      std::lock_guard lock(context.connections_mutex);
      connection_count = context.connections.size();
      for (const listed_connection* connection : context.connections) {
        const connection_view v = connection->describe();
        if (connections.size() < max_connection_rows) {
          connection_row row{v.peer, at - v.opened, std::nullopt, v.inflight, v.pending_output};
          if (statistics) row.idle = at - v.last_activity;
          connections.push_back(std::move(row));
        }
        if (!statistics || entries == nullptr) continue;
        connection->for_each_request(
            [&](const handler_entry& handler, clock::time_point arrived, clock::time_point started) {
              const auto i = static_cast<std::size_t>(&handler - entries->data());
              if (i < methods.size()) {
                ++methods[i].in_flight;
                oldest[i] = std::min(oldest[i], arrived);
              }
              if (started == clock::time_point{}) {
                ++waiting;
                oldest_waiting = std::min(oldest_waiting, arrived);
              }
            });
      }
    }
    if (stats != nullptr) {
      for (std::size_t i = 0; i < methods.size() && i < stats->method_count(); ++i) {
        method_row& row = methods[i];
        const method_statistics& m = stats->method(i);
        std::uint64_t failed = 0;
        row.errors = errors_of(m, failed);
        row.successes = m.successes.load(std::memory_order_relaxed);
        row.calls = row.successes + failed + row.in_flight;
        if (row.in_flight != 0) row.oldest = at - oldest[i];
        row.latency = m.latency.read(at);
      }
      std::uint64_t ignored = 0;
      unrouted = errors_of(stats->unrouted(), ignored);
      recent = stats->recent_calls();
      slow_call = stats->slow_threshold();
    }

    pool_view p;
    if (context.pool_probe != nullptr) p = context.pool_probe(context.pool_engine);
    pool = {count("threads", "threads", p.threads), count("busy", "busy in a handler", p.busy)};
    if (stats != nullptr) {
      const latency_summary wait = stats->queue_wait().read(at);
      pool.push_back(count("waiting", "requests waiting for a thread", waiting));
      pool.push_back(span("oldest_waiting_ns", "the oldest has waited",
                          waiting != 0 ? at - oldest_waiting : std::chrono::nanoseconds::zero()));
      pool.push_back(
          span("longest_wait_ns", "longest wait for a thread, last minute", std::chrono::nanoseconds(wait.max_ns)));
      pool.push_back(span("p99_wait_ns", "p99 wait for a thread, last minute", std::chrono::nanoseconds(wait.p99_ns)));
    }
    pool.push_back(count("start_failures", "threads the system would not start", p.start_failures));

    now = {
        count("connections", "connections", connection_count),
        count("calls_in_flight", "calls in flight", context.inflight.load(std::memory_order_relaxed)),
        bytes("queued_request_bytes", "request bytes waiting for a handler",
              context.queued_request_bytes.load(std::memory_order_relaxed)),
        bytes("pending_output_bytes", "reply bytes waiting to be sent",
              context.output.now.load(std::memory_order_relaxed)),
        bytes("pending_output_peak_bytes", "most reply bytes ever waiting",
              context.output.peak.load(std::memory_order_relaxed)),
        count("refused_connections", "connections refused", context.refused.load(std::memory_order_relaxed)),
    };
    const server_options& o = context.options;
    // Each limit, and what it turns away (with statistics).
    const auto with = [stats](number n, std::optional<limit_kind> kind) {
      if (stats != nullptr && kind) n.turned_away = stats->turned_away_count(*kind);
      return n;
    };
    using k = limit_kind;
    limits = {
        with(count("handler_threads", "handler threads kept", o.handler_threads), std::nullopt),
        with(count("max_handler_threads", "handler threads at most", o.max_handler_threads), std::nullopt),
        with(count("max_connections", "connections", o.max_connections), k::connections),
        with(count("max_inflight", "calls in flight", o.max_inflight), k::inflight),
        with(count("max_inflight_per_connection", "calls in flight per connection", o.max_inflight_per_connection),
             k::inflight_per_connection),
        with(bytes("max_frame_size", "request frame", o.max_frame_size), k::frame_size),
        with(bytes("max_metadata_bytes", "request metadata", o.max_metadata_bytes), k::metadata_bytes),
        with(bytes("max_pending_output", "reply bytes waiting, per connection", o.max_pending_output),
             k::pending_output),
        with(bytes("max_queued_request_bytes", "request bytes waiting", o.max_queued_request_bytes), k::queued_bytes),
        with(bytes("max_queued_request_bytes_per_connection", "request bytes waiting, per connection",
                   o.max_queued_request_bytes_per_connection),
             k::queued_bytes_per_connection),
        with(timeout("handshake_timeout_ns", "handshake", o.handshake_timeout), k::handshake_timeout),
        with(timeout("frame_timeout_ns", "frame", o.frame_timeout), k::frame_timeout),
        with(timeout("write_timeout_ns", "write", o.write_timeout), k::write_timeout),
    };
    if (stats != nullptr && stats->turned_away_count(k::threads) != 0)
      limits.push_back(with(count("threads_per_connection", "a thread per connection (blocking)", 1), k::threads));
  }
};

inline void append_json_numbers(std::string& out, const std::vector<debug_snapshot::number>& numbers) {
  out += '{';
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    if (i != 0) out += ',';
    append_json_string(out, numbers[i].key);
    out += ':';
    out += std::to_string(numbers[i].value);
  }
  out += '}';
}

inline void append_json_errors(std::string& out, const std::vector<debug_snapshot::error_count>& errors) {
  out += '{';
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (i != 0) out += ',';
    append_json_string(out, errors[i].code);
    out += ':';
    out += std::to_string(errors[i].count);
  }
  out += '}';
}

inline std::string debug_page_json(const server_context& context) {
  const debug_snapshot s(context);
  const auto field = [](std::string& out, const char* key, std::uint64_t value) {
    out += ",\"";
    out += key;
    out += "\":";
    out += std::to_string(value);
  };
  const auto ns = [](std::chrono::nanoseconds d) {
    return static_cast<std::uint64_t>(std::max<std::int64_t>(0, d.count()));
  };
  std::string out = "{\"statistics\":";
  out += s.statistics ? "true" : "false";
  out += ",\"methods\":[";
  for (std::size_t i = 0; i < s.methods.size(); ++i) {
    const auto& m = s.methods[i];
    if (i != 0) out += ',';
    out += "{\"name\":";
    append_json_string(out, m.name);
    out += ",\"signature\":";
    append_json_string(out, m.signature);
    out += ",\"fingerprint\":";
    append_json_string(out, m.fingerprint);
    out += ",\"takes_stop_token\":";
    out += m.takes_stop_token ? "true" : "false";
    if (s.statistics) {
      field(out, "calls", m.calls);
      field(out, "successes", m.successes);
      out += ",\"errors\":";
      append_json_errors(out, m.errors);
      field(out, "in_flight", m.in_flight);
      field(out, "oldest_in_flight_ns", ns(m.oldest));
      out += ",\"latency_last_minute\":{\"calls\":" + std::to_string(m.latency.count);
      field(out, "p50_ns", m.latency.p50_ns);
      field(out, "p99_ns", m.latency.p99_ns);
      field(out, "max_ns", m.latency.max_ns);
      out += '}';
    }
    out += '}';
  }
  out += ']';
  if (s.statistics) {
    out += ",\"unrouted_errors\":";
    append_json_errors(out, s.unrouted);
  }
  out += ",\"pool\":";
  append_json_numbers(out, s.pool);
  field(out, "connection_count", s.connection_count);
  out += ",\"connections\":[";
  for (std::size_t i = 0; i < s.connections.size(); ++i) {
    const auto& c = s.connections[i];
    if (i != 0) out += ',';
    out += "{\"peer\":";
    append_json_string(out, c.peer);
    field(out, "age_ns", ns(c.age));
    if (c.idle) field(out, "idle_ns", ns(*c.idle));
    field(out, "in_flight", c.in_flight);
    field(out, "pending_output_bytes", c.pending_output);
    out += '}';
  }
  out += ']';
  if (s.statistics) {
    field(out, "slow_call_ns", ns(s.slow_call));
    out += ",\"recent_calls\":[";
    for (std::size_t i = 0; i < s.recent.size(); ++i) {
      const call_record& r = s.recent[i];
      if (i != 0) out += ',';
      out += "{\"finished_unix_ms\":";
      out +=
          std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(r.finished.time_since_epoch()).count());
      out += ",\"method\":";
      append_json_string(out, r.method);
      out += ",\"peer\":";
      append_json_string(out, r.peer);
      field(out, "queued_ns", ns(r.queued));
      field(out, "handler_ns", ns(r.handling));
      field(out, "latency_ns", ns(r.latency));
      out += ",\"outcome\":";
      append_json_string(out, errc_name(r.status));
      out += ",\"message\":";
      append_json_string(out, r.message);
      out += '}';
    }
    out += ']';
  }
  out += ",\"now\":";
  append_json_numbers(out, s.now);
  out += ",\"limits\":";
  append_json_numbers(out, s.limits);
  if (s.statistics) {
    out += ",\"turned_away\":{";
    bool first = true;
    for (const auto& limit : s.limits) {
      if (!limit.turned_away) continue;
      if (!first) out += ',';
      first = false;
      append_json_string(out, limit.key);
      out += ':';
      out += std::to_string(*limit.turned_away);
    }
    out += '}';
  }
  out += "}\n";
  return out;
}

inline std::string debug_page_html(const server_context& context) {
  const debug_snapshot s(context);
  // A cell with an id the tests (and scripts of one's own) can find: "<row>/<column>".
  const auto cell = [](std::string& out, std::string_view row, std::string_view column, std::string_view text,
                       bool numeric = true) {
    out += numeric ? "<td class=\"n\" id=\"" : "<td id=\"";
    append_html_escaped(out, row);
    out += '/';
    out += column;
    out += "\">";
    append_html_escaped(out, text);
    out += "</td>";
  };
  const auto latency = [](std::uint64_t ns) { return page_duration(std::chrono::nanoseconds(ns)); };
  const auto errors_text = [](const std::vector<debug_snapshot::error_count>& errors) {
    std::string text;
    for (const auto& e : errors) {
      if (!text.empty()) text += ", ";
      text += std::string(e.code) + ": " + std::to_string(e.count);
    }
    return text.empty() ? std::string("none") : text;
  };
  std::string out =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>geerpc debug</title>\n"
      "<style>body{font-family:sans-serif;margin:1em 2em}table{border-collapse:collapse;margin-bottom:1.5em}"
      "th,td{border:1px solid #bbb;padding:2px 8px;text-align:left}td.n{text-align:right}"
      "td.bad{color:#a00}</style>\n"
      "</head><body>\n<h1>geerpc debug</h1>\n<p><a href=\"/debug/geerpc/stats.json\">the same as JSON</a></p>\n";
  if (!s.statistics) out += "<p id=\"statistics-off\">Statistics are off (server_options::statistics).</p>\n";

  out +=
      "<h2>Methods</h2>\n<table id=\"methods\"><tr><th>method</th><th>types</th><th>fingerprint</th>"
      "<th>stop_token</th>";
  if (s.statistics)
    out +=
        "<th>calls</th><th>ok</th><th>errors</th><th>in flight</th><th>oldest in flight</th>"
        "<th>calls, last minute</th><th>p50</th><th>p99</th><th>max</th>";
  out += "</tr>\n";
  for (const auto& m : s.methods) {
    out += "<tr><td>";
    append_html_escaped(out, m.name);
    out += "</td>";
    cell(out, m.name, "types", m.signature, false);
    cell(out, m.name, "fingerprint", m.fingerprint, false);
    cell(out, m.name, "stop_token", m.takes_stop_token ? "yes" : "no", false);
    if (s.statistics) {
      cell(out, m.name, "calls", std::to_string(m.calls));
      cell(out, m.name, "successes", std::to_string(m.successes));
      cell(out, m.name, "errors", errors_text(m.errors), false);
      cell(out, m.name, "in_flight", std::to_string(m.in_flight));
      cell(out, m.name, "oldest", m.in_flight != 0 ? page_duration(m.oldest) : "-");
      cell(out, m.name, "window_calls", std::to_string(m.latency.count));
      const bool any = m.latency.count != 0;
      cell(out, m.name, "p50", any ? latency(m.latency.p50_ns) : "-");
      cell(out, m.name, "p99", any ? latency(m.latency.p99_ns) : "-");
      cell(out, m.name, "max", any ? latency(m.latency.max_ns) : "-");
    }
    out += "</tr>\n";
  }
  out += "</table>\n";
  if (s.statistics) {
    out +=
        "<p>Latency: from a request's arrival to its answer, over the last minute (50 to 60 s, in 10 s steps); "
        "p50 and p99 are within 12.5%.</p>\n<p>Calls for names this server does not serve: ";
    out += "<span id=\"unrouted\">";
    out += errors_text(s.unrouted);
    out += "</span></p>\n";
  }

  const auto number_table = [&](const char* title, const char* id, const std::vector<debug_snapshot::number>& numbers,
                                bool turned_away) {
    out += "<h2>";
    out += title;
    out += "</h2>\n<table id=\"";
    out += id;
    out += "\">\n";
    if (turned_away) out += "<tr><th>limit</th><th>in force</th><th>turned away</th></tr>\n";
    for (const auto& n : numbers) {
      out += "<tr><th>";
      out += n.label;
      out += "</th>";
      cell(out, id, n.key, n.text);
      if (turned_away)
        cell(out, id, std::string(n.key) + "/turned_away", n.turned_away ? std::to_string(*n.turned_away) : "-");
      out += "</tr>\n";
    }
    out += "</table>\n";
  };
  number_table("Handler pool", "pool", s.pool, false);

  out +=
      "<h2>Connections</h2>\n<p><span id=\"connection_count\">" + std::to_string(s.connection_count) + "</span> open";
  if (s.connection_count > s.connections.size())
    out += ", the first " + std::to_string(s.connections.size()) + " listed";
  out +=
      ".</p>\n<table id=\"connections\"><tr><th>peer</th><th>age</th><th>calls in flight</th>"
      "<th>reply bytes waiting</th><th>last activity</th></tr>\n";
  for (const auto& c : s.connections) {
    out += "<tr><td>";
    append_html_escaped(out, c.peer.empty() ? std::string_view("?") : std::string_view(c.peer));
    out += "</td><td class=\"n\">" + page_duration(c.age) + "</td><td class=\"n\">" + std::to_string(c.in_flight) +
           "</td><td class=\"n\">" + std::to_string(c.pending_output) + " B</td><td class=\"n\">" +
           (c.idle ? page_duration(*c.idle) + " ago" : std::string("-")) + "</td></tr>\n";
  }
  out += "</table>\n";

  if (s.statistics) {
    out += "<h2>Last slow or failed calls</h2>\n<p>The last " + std::to_string(server_statistics::kept_calls) +
           " calls that failed" +
           (s.slow_call > std::chrono::nanoseconds::zero() ? " or took " + page_duration(s.slow_call) + " or more"
                                                           : std::string()) +
           ", newest first.</p>\n<table id=\"recent\"><tr><th>finished</th><th>method</th><th>peer</th>"
           "<th>waited for a thread</th><th>in the handler</th><th>answered after</th><th>outcome</th>"
           "<th>message</th></tr>\n";
    for (const call_record& r : s.recent) {
      out += "<tr><td>" + utc_text(r.finished) + "</td><td>";
      append_html_escaped(out, r.method);
      out += "</td><td>";
      append_html_escaped(out, r.peer);
      out += "</td><td class=\"n\">" + page_duration(r.queued) + "</td><td class=\"n\">" +
             (r.handling > std::chrono::nanoseconds::zero() ? page_duration(r.handling) : std::string("-")) +
             "</td><td class=\"n\">" + page_duration(r.latency) + "</td><td" + (r.status != 0 ? " class=\"bad\"" : "") +
             ">" + std::string(errc_name(r.status)) + "</td><td>";
      append_html_escaped(out, r.message);
      out += "</td></tr>\n";
    }
    out += "</table>\n";
  }
  number_table("Now", "now", s.now, false);
  number_table("Limits in force", "limits", s.limits, s.statistics);
  out += "</body></html>\n";
  return out;
}

}  // namespace detail
GEERPC_END_NAMESPACE
