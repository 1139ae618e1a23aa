// geerpc: the debug page a server serves on its RPC port (GET /debug/geerpc), and the same data as
// JSON (GET /debug/geerpc/stats.json): its services and methods, what it holds now, and the limits
// in force. Plain HTML with no scripts and no external assets, so that it reads anywhere.
//
// The JSON is written here rather than by a JSON library: the core depends on Boost alone, and
// what is written is a fixed shape of numbers and escaped strings.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../detail/duration_text.hpp"
#include "context.hpp"
#include "dispatcher.hpp"

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

// What the page shows, gathered once so that the HTML and the JSON say the same.
struct debug_snapshot {
  struct method_row {
    std::string name;
    std::string fingerprint;  // 8 hex digits; "none" for a method without one
    bool takes_stop_token = false;
  };
  struct number {
    const char* key;    // the JSON name
    const char* label;  // the page's words
    std::string text;   // as the page shows it
    std::uint64_t value = 0;
  };
  std::vector<method_row> methods;
  std::vector<number> now;     // what the server holds at this moment
  std::vector<number> limits;  // server_options in force

  static number count(const char* key, const char* label, std::uint64_t value) {
    return {key, label, std::to_string(value), value};
  }
  static number bytes(const char* key, const char* label, std::uint64_t value) {
    return {key, label, std::to_string(value) + " B", value};
  }
  // A timeout: its value in nanoseconds in the JSON (0: none), and Go's text on the page.
  static number timeout(const char* key, const char* label, std::chrono::nanoseconds value) {
    const bool none = value <= std::chrono::nanoseconds::zero();
    return {key, label, none ? "none" : duration_text(value), none ? 0 : static_cast<std::uint64_t>(value.count())};
  }

  explicit debug_snapshot(const server_context& context) {
    if (context.handlers != nullptr)
      for (const handler_entry& entry : context.handlers->methods())
        methods.push_back({entry.name, entry.fingerprint == 0 ? "none" : fingerprint_text(entry.fingerprint),
                           entry.takes_stop_token});
    now = {
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
    limits = {
        count("handler_threads", "handler threads kept", o.handler_threads),
        count("max_handler_threads", "handler threads at most", o.max_handler_threads),
        count("max_connections", "connections", o.max_connections),
        count("max_inflight", "calls in flight", o.max_inflight),
        count("max_inflight_per_connection", "calls in flight per connection", o.max_inflight_per_connection),
        bytes("max_frame_size", "request frame", o.max_frame_size),
        bytes("max_metadata_bytes", "request metadata", o.max_metadata_bytes),
        bytes("max_pending_output", "reply bytes waiting, per connection", o.max_pending_output),
        bytes("max_queued_request_bytes", "request bytes waiting", o.max_queued_request_bytes),
        bytes("max_queued_request_bytes_per_connection", "request bytes waiting, per connection",
              o.max_queued_request_bytes_per_connection),
        timeout("handshake_timeout_ns", "handshake", o.handshake_timeout),
        timeout("frame_timeout_ns", "frame", o.frame_timeout),
        timeout("write_timeout_ns", "write", o.write_timeout),
    };
  }
};

inline std::string debug_page_json(const server_context& context) {
  const debug_snapshot s(context);
  std::string out = "{\"methods\":[";
  for (std::size_t i = 0; i < s.methods.size(); ++i) {
    if (i != 0) out += ',';
    out += "{\"name\":";
    append_json_string(out, s.methods[i].name);
    out += ",\"fingerprint\":";
    append_json_string(out, s.methods[i].fingerprint);
    out += ",\"takes_stop_token\":";
    out += s.methods[i].takes_stop_token ? "true" : "false";
    out += '}';
  }
  out += ']';
  for (const auto& [name, numbers] : {std::pair{"now", &s.now}, std::pair{"limits", &s.limits}}) {
    out += ",\"";
    out += name;
    out += "\":{";
    for (std::size_t i = 0; i < numbers->size(); ++i) {
      if (i != 0) out += ',';
      append_json_string(out, (*numbers)[i].key);
      out += ':';
      out += std::to_string((*numbers)[i].value);
    }
    out += '}';
  }
  out += "}\n";
  return out;
}

inline std::string debug_page_html(const server_context& context) {
  const debug_snapshot s(context);
  std::string out =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>geerpc debug</title>\n"
      "<style>body{font-family:sans-serif;margin:1em 2em}table{border-collapse:collapse;margin-bottom:1.5em}"
      "th,td{border:1px solid #bbb;padding:2px 8px;text-align:left}td.n{text-align:right}</style>\n"
      "</head><body>\n<h1>geerpc debug</h1>\n<p><a href=\"/debug/geerpc/stats.json\">the same as JSON</a></p>\n";
  out +=
      "<h2>Methods</h2>\n<table id=\"methods\"><tr><th>method</th><th>type fingerprint</th>"
      "<th>takes a stop_token</th></tr>\n";
  for (const auto& m : s.methods) {
    out += "<tr><td>";
    append_html_escaped(out, m.name);
    out += "</td><td>" + m.fingerprint + "</td><td>" + (m.takes_stop_token ? "yes" : "no") + "</td></tr>\n";
  }
  out += "</table>\n";
  for (const auto& [title, id, numbers] :
       {std::tuple{"Now", "now", &s.now}, std::tuple{"Limits in force", "limits", &s.limits}}) {
    out += "<h2>";
    out += title;
    out += "</h2>\n<table id=\"";
    out += id;
    out += "\">\n";
    for (const auto& n : *numbers) {
      out += "<tr><th>";
      out += n.label;
      out += "</th><td class=\"n\" id=\"";
      out += n.key;
      out += "\">" + n.text + "</td></tr>\n";
    }
    out += "</table>\n";
  }
  out += "</body></html>\n";
  return out;
}

}  // namespace detail
GEERPC_END_NAMESPACE
