// geerpc: text for the debug page and its JSON: HTML and JSON string escaping (of names a peer or
// a user chose, so never trusted), and durations, times and fingerprints as people read them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>
#include <string_view>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../detail/duration_text.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// The length of the well-formed UTF-8 sequence at the start of `text` (RFC 3629: no overlong
// forms, no surrogates, nothing past U+10FFFF), or 0 when it starts with none.
inline std::size_t utf8_sequence_length(std::string_view text) noexcept {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;   // overlong below
    if (lead == 0xed) high = 0x9f;  // surrogates above
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;   // overlong below
    if (lead == 0xf4) high = 0x8f;  // past U+10FFFF above
  } else {
    return 0;
  }
  if (text.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  return length;
}

// Calls `text_run(part)` for each run of well-formed, printable UTF-8 in `text` and `odd(byte)` for
// each byte that is neither (a control character, DEL, or a byte of no well-formed sequence).
template <class TextRun, class Odd>
void for_each_printable_run(std::string_view text, TextRun&& text_run, Odd&& odd) {
  std::size_t run = 0;  // where the current run starts
  for (std::size_t at = 0; at < text.size();) {
    const auto c = static_cast<unsigned char>(text[at]);
    const std::size_t length = (c < 0x20 || c == 0x7f) ? 0 : utf8_sequence_length(text.substr(at));
    if (length != 0) {
      at += length;
      continue;
    }
    if (at > run) text_run(text.substr(run, at - run));
    odd(c);
    run = ++at;
  }
  if (run < text.size()) text_run(text.substr(run));
}

// `text` for HTML: markup characters escaped; a byte that is not printable UTF-8 becomes U+FFFD.
// What a peer sent (a method name it made up, its address) is shown this way, never as markup.
inline void append_html_escaped(std::string& out, std::string_view text) {
  for_each_printable_run(
      text,
      [&](std::string_view run) {
        for (const char c : run) {
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
      },
      [&](unsigned char) { out += "&#xfffd;"; });
}

// `text` as a JSON string, always valid UTF-8: quotes and backslashes escaped, control characters
// and DEL as \u00XX, and a byte of no well-formed UTF-8 sequence as \ufffd.
inline void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for_each_printable_run(
      text,
      [&](std::string_view run) {
        for (const char c : run) {
          if (c == '"' || c == '\\') out += '\\';
          out += c;
        }
      },
      [&](unsigned char c) {
        if (c >= 0x80) {
          out += "\\ufffd";
          return;
        }
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
        out += escaped;
      });
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
