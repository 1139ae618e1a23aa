// geerpc: text for the debug page and its JSON: HTML and JSON string escaping (of names a peer or
// a user chose, so never trusted), and durations, times and fingerprints as people read them.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>
#include <string_view>

#include "../config.hpp"
#include "../detail/duration_text.hpp"

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

}  // namespace detail
GEERPC_END_NAMESPACE
