// geerpc: the debug page a server serves on its RPC port (GET /debug/geerpc), and the same data as
// JSON (GET /debug/geerpc/stats.json), for someone chasing a timeout in production: its services
// and methods with their types; per method, calls and their outcomes by error code, calls in flight
// and the oldest's age, latency over the last minute (successes apart from failures), request and
// reply sizes; each call in flight (its deadline, time left, trace id, stage); the handler pool; the
// connections; the last
// slow or failed calls; what the server holds now, and its limits with how often each turned
// something away. Plain HTML with no scripts and no external assets, so that it reads anywhere.
// What it shows is gathered in debug_snapshot.hpp; the JSON is written in debug_page_json.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "context.hpp"
#include "debug_page_json.hpp"
#include "debug_snapshot.hpp"
#include "page_text.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// A cell with an id the tests (and scripts of one's own) can find: "<row>/<column>".
inline void append_html_cell(std::string& out, std::string_view row, std::string_view column, std::string_view text,
                             bool numeric = true) {
  out += numeric ? "<td class=\"n\" id=\"" : "<td id=\"";
  append_html_escaped(out, row);
  out += '/';
  out += column;
  out += "\">";
  append_html_escaped(out, text);
  out += "</td>";
}

// "remote_error: 2, handle_timeout: 1", or "none".
inline std::string page_errors_text(const std::vector<debug_snapshot::error_count>& errors) {
  std::string text;
  for (const auto& e : errors) {
    if (!text.empty()) text += ", ";
    text += std::string(e.code) + ": " + std::to_string(e.count);
  }
  return text.empty() ? std::string("none") : text;
}

// Requests answered without running the handler (admission.hpp): "deadline: 2, queue time: 1", or "none".
inline std::string not_run_text(const debug_snapshot::method_row& m) {
  std::string text;
  if (m.expired_before_start != 0) text += "deadline: " + std::to_string(m.expired_before_start);
  if (m.shed_by_queue_time != 0)
    text += (text.empty() ? "" : ", ") + std::string("queue time: ") + std::to_string(m.shed_by_queue_time);
  return text.empty() ? std::string("none") : text;
}

// "812 B, p99 <= 1024 B" (the bound from GET /metrics' buckets; "> 16777216 B" past the last), or "-".
inline std::string sizes_text(const debug_snapshot::size_summary& s) {
  if (s.count == 0) return "-";
  return std::to_string(s.mean) + " B, p99 " +
         (s.p99_at_most != 0 ? "<= " + std::to_string(s.p99_at_most)
                             : "> " + std::to_string(size_bounds_bytes.back())) +
         " B";
}

inline void append_html_method(std::string& out, const debug_snapshot::method_row& m, bool statistics) {
  const auto latency = [&](std::uint64_t ns) {
    return m.latency.count != 0 ? page_duration(std::chrono::nanoseconds(ns)) : std::string("-");
  };
  out += "<tr><td>";
  append_html_escaped(out, m.name);
  out += "</td>";
  append_html_cell(out, m.name, "types", m.signature, false);
  append_html_cell(out, m.name, "fingerprint", m.fingerprint, false);
  append_html_cell(out, m.name, "stop_token", m.takes_stop_token ? "yes" : "no", false);
  if (statistics) {
    append_html_cell(out, m.name, "calls", std::to_string(m.calls));
    append_html_cell(out, m.name, "successes", std::to_string(m.successes));
    append_html_cell(out, m.name, "errors", page_errors_text(m.errors), false);
    append_html_cell(out, m.name, "not_run", not_run_text(m), false);
    append_html_cell(out, m.name, "in_flight", std::to_string(m.in_flight));
    append_html_cell(out, m.name, "oldest", m.in_flight != 0 ? page_duration(m.oldest) : "-");
    append_html_cell(out, m.name, "window_calls", std::to_string(m.latency.count));
    append_html_cell(out, m.name, "p50", latency(m.latency.p50_ns));
    append_html_cell(out, m.name, "p99", latency(m.latency.p99_ns));
    append_html_cell(out, m.name, "max", latency(m.latency.max_ns));
    const auto of = [](const latency_summary& l, std::uint64_t ns) {
      return l.count != 0 ? page_duration(std::chrono::nanoseconds(ns)) : std::string("-");
    };
    append_html_cell(out, m.name, "ok_p50", of(m.ok_latency, m.ok_latency.p50_ns));
    append_html_cell(out, m.name, "ok_p99", of(m.ok_latency, m.ok_latency.p99_ns));
    append_html_cell(out, m.name, "failed_p50", of(m.failed_latency, m.failed_latency.p50_ns));
    append_html_cell(out, m.name, "failed_p99", of(m.failed_latency, m.failed_latency.p99_ns));
    append_html_cell(out, m.name, "request_bytes", sizes_text(m.request_bytes));
    append_html_cell(out, m.name, "response_bytes", sizes_text(m.response_bytes));
  }
  out += "</tr>\n";
}

inline void append_html_methods(std::string& out, const debug_snapshot& s) {
  out +=
      "<h2>Methods</h2>\n<table id=\"methods\"><tr><th>method</th><th>types</th><th>fingerprint</th>"
      "<th>stop_token</th>";
  if (s.statistics)
    out +=
        "<th>calls</th><th>ok</th><th>errors</th><th>not run</th><th>in flight</th><th>oldest in flight</th>"
        "<th>calls, last minute</th><th>p50</th><th>p99</th><th>max</th><th>ok p50</th><th>ok p99</th>"
        "<th>failed p50</th><th>failed p99</th><th>request bytes: mean, p99</th><th>reply bytes: mean, p99</th>";
  out += "</tr>\n";
  for (const auto& m : s.methods) append_html_method(out, m, s.statistics);
  out += "</table>\n";
  if (!s.statistics) return;
  out +=
      "<p>Latency: from a request's arrival to its answer, over the last minute (50 to 60 s, in 10 s steps); "
      "p50 and p99 are within 12.5%, of every call, of successes (ok) and of failures apart. Sizes: since the server "
      "began, a request's metadata and arguments and the payload of a handler's answer (its frame less the header); "
      "their p99 is a bound of "
      "GET /metrics' buckets.</p>\n<p>Calls for names this server does not serve: ";
  out += "<span id=\"unrouted\">";
  out += page_errors_text(s.unrouted);
  out += "</span></p>\n";
}

inline void append_html_numbers(std::string& out, const char* title, const char* id,
                                const std::vector<debug_snapshot::number>& numbers, bool turned_away) {
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
    append_html_cell(out, id, n.key, n.text);
    if (turned_away)
      append_html_cell(out, id, std::string(n.key) + "/turned_away",
                       n.turned_away ? std::to_string(*n.turned_away) : "-");
    out += "</tr>\n";
  }
  out += "</table>\n";
}

// Who a connection's peer is: "-" for a plain connection, "no certificate" for TLS without one,
// else the certificate's subject and its URI SANs (SPIFFE IDs), escaped.
inline void append_html_identity(std::string& out, const net::peer_identity& who) {
  if (!who.encrypted) {
    out += "-";
    return;
  }
  if (!who.verified) {
    out += "no certificate";
    return;
  }
  append_html_escaped(out, who.subject);
  for (const std::string& uri : who.uris) {
    out += ' ';
    append_html_escaped(out, uri);
  }
}

inline void append_html_connections(std::string& out, const debug_snapshot& s) {
  out +=
      "<h2>Connections</h2>\n<p><span id=\"connection_count\">" + std::to_string(s.connection_count) + "</span> open";
  if (s.connection_count > s.connections.size())
    out += ", the first " + std::to_string(s.connections.size()) + " listed";
  out +=
      ".</p>\n<table id=\"connections\"><tr><th>peer</th><th>age</th><th>calls in flight</th>"
      "<th>reply bytes waiting</th><th>last activity</th><th>TLS identity</th></tr>\n";
  for (const auto& c : s.connections) {
    out += "<tr><td>";
    append_html_escaped(out, c.peer.empty() ? std::string_view("?") : std::string_view(c.peer));
    out += "</td><td class=\"n\">" + page_duration(c.age) + "</td><td class=\"n\">" + std::to_string(c.in_flight) +
           "</td><td class=\"n\">" + std::to_string(c.pending_output) + " B</td><td class=\"n\">" +
           (c.idle ? page_duration(*c.idle) + " ago" : std::string("-")) + "</td><td>";
    append_html_identity(out, c.identity);
    out += "</td></tr>\n";
  }
  out += "</table>\n";
}

// A caller's time left: "40.2ms", "-1.2s" once it passed; "none" without a deadline.
inline std::string time_left_text(const debug_snapshot::call_row& c) {
  if (!c.deadline) return "none";
  if (c.time_left < std::chrono::nanoseconds::zero()) return "-" + page_duration(-c.time_left);
  return page_duration(c.time_left);
}

inline void append_html_calls(std::string& out, const debug_snapshot& s) {
  out += "<h2>Calls in flight</h2>\n<p><span id=\"calls_in_flight_count\">" + std::to_string(s.calls_in_flight) +
         "</span> in flight";
  if (s.calls_in_flight > s.calls.size()) out += ", the oldest " + std::to_string(s.calls.size()) + " listed";
  out +=
      ".</p>\n<table id=\"calls\"><tr><th>method</th><th>peer</th><th>age</th><th>caller's deadline</th>"
      "<th>time left</th><th>trace id</th><th>stage</th></tr>\n";
  for (std::size_t i = 0; i < s.calls.size(); ++i) {
    const debug_snapshot::call_row& c = s.calls[i];
    const std::string row = "call" + std::to_string(i);
    out += "<tr>";
    append_html_cell(out, row, "method", c.method, false);
    append_html_cell(out, row, "peer", c.peer, false);
    append_html_cell(out, row, "age", page_duration(c.age));
    append_html_cell(out, row, "deadline", c.deadline ? utc_text(*c.deadline) : std::string("none"), false);
    append_html_cell(out, row, "time_left", time_left_text(c));
    append_html_cell(out, row, "trace_id", c.trace_id.empty() ? std::string_view("-") : c.trace_id, false);
    append_html_cell(out, row, "stage", c.stage, false);
    out += "</tr>\n";
  }
  out += "</table>\n";
}

inline void append_html_recent(std::string& out, const debug_snapshot& s) {
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

inline std::string debug_page_html(const server_context& context) {
  const debug_snapshot s(context);
  std::string out =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>geerpc debug</title>\n"
      "<style>body{font-family:sans-serif;margin:1em 2em}table{border-collapse:collapse;margin-bottom:1.5em}"
      "th,td{border:1px solid #bbb;padding:2px 8px;text-align:left}td.n{text-align:right}"
      "td.bad{color:#a00}</style>\n"
      "</head><body>\n<h1>geerpc debug</h1>\n<p><a href=\"/debug/geerpc/stats.json\">the same as JSON</a>; "
      "<a href=\"/debug/geerpc/services.json\">the methods' JSON Schemas</a></p>\n";
  if (!s.statistics)
    out += "<p id=\"statistics-off\">Statistics are off (server_options.observability.statistics).</p>\n";
  append_html_methods(out, s);
  if (s.statistics) append_html_calls(out, s);
  append_html_numbers(out, "Handler pool", "pool", s.pool, false);
  append_html_connections(out, s);
  if (s.statistics) append_html_recent(out, s);
  append_html_numbers(out, "Now", "now", s.now, false);
  append_html_numbers(out, "Limits in force", "limits", s.limits, s.statistics);
  out += "</body></html>\n";
  return out;
}

}  // namespace detail
GEERPC_END_NAMESPACE
