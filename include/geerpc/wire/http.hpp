// geerpc: the HTTP/1.x a server speaks on its RPC port (docs/protocol.md, "HTTP on the RPC port"):
// a request's head parsed, and a response written. Pure functions over text: no I/O, so they can
// be fuzzed. Only what the port serves is understood: a request line and header lines, each
// ending in LF or CRLF, then an empty line; no body is read.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace wire::http {

inline constexpr std::size_t max_head = 8u << 10;  // request line and headers, line ends included

// A geerpc hello begins with 0x5c; an HTTP request with its method's first letter.
inline constexpr bool starts_request(char first) noexcept { return first >= 'A' && first <= 'Z'; }

struct request_head {
  std::string_view method;  // "GET", "CONNECT", ...: views into the parsed text
  std::string_view target;  // "/debug/geerpc?x=1"
  std::size_t size = 0;     // bytes of the head, its empty line included
};

enum class head_status { incomplete, complete, bad, too_large };

namespace detail {

// RFC 9110's tchar: what a method and a header name are made of.
constexpr bool is_token_char(char c) noexcept {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}
constexpr bool is_token(std::string_view s) noexcept {
  if (s.empty()) return false;
  for (const char c : s)
    if (!is_token_char(c)) return false;
  return true;
}
// A field value: visible ASCII, spaces and tabs, and bytes of UTF-8 (obs-text); no control bytes.
constexpr bool is_field_value(std::string_view s) noexcept {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return false;
  }
  return true;
}

// One line without its end (LF, or CRLF); false if a CR stands anywhere but before the LF.
constexpr bool strip_line_end(std::string_view& line) noexcept {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line.find('\r') == std::string_view::npos;
}

constexpr bool parse_request_line(std::string_view line, request_head& out, const char*& why) noexcept {
  const std::size_t first_space = line.find(' ');
  const std::size_t second_space =
      first_space == std::string_view::npos ? first_space : line.find(' ', first_space + 1);
  if (second_space == std::string_view::npos) {
    why = "the request line is not \"METHOD target HTTP/1.x\"";
    return false;
  }
  const std::string_view method = line.substr(0, first_space);
  const std::string_view target = line.substr(first_space + 1, second_space - first_space - 1);
  const std::string_view version = line.substr(second_space + 1);
  if (!is_token(method)) {
    why = "the method is not a token";
    return false;
  }
  if (target.empty()) {
    why = "the request target is empty";
    return false;
  }
  for (const char c : target)
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      why = "the request target holds a byte that is not visible ASCII";
      return false;
    }
  if (version != "HTTP/1.0" && version != "HTTP/1.1") {
    why = "the version is not HTTP/1.0 or HTTP/1.1";
    return false;
  }
  out.method = method;
  out.target = target;
  return true;
}

}  // namespace detail

// Parses a request head as its bytes arrive: `text` is every byte received so far (the head at its
// start), and each call looks only at the lines completed since the last one. complete: `out` is
// set (views into `text`) and `out.size` bytes were the head; what follows is not looked at.
// incomplete: the head has not ended yet. bad and too_large: `why` says what is wrong. A bad
// request line is found as soon as it ends.
class head_parser {
 public:
  constexpr head_status feed(std::string_view text, request_head& out, const char*& why) noexcept {
    for (;;) {
      const std::size_t end = text.find('\n', at_);
      if (end == std::string_view::npos || end + 1 > max_head) {
        if (end == std::string_view::npos && text.size() < max_head) return head_status::incomplete;
        why = "the request head is larger than 8 KiB";
        return head_status::too_large;
      }
      std::string_view line = text.substr(at_, end - at_);
      at_ = end + 1;
      if (!detail::strip_line_end(line)) {
        why = "a CR that does not end a line";
        return head_status::bad;
      }
      if (request_line_end_ == 0) {
        if (!detail::parse_request_line(line, out, why)) return head_status::bad;
        request_line_end_ = at_;
        continue;
      }
      if (line.empty()) {
        std::string_view request_line = text.substr(0, request_line_end_ - 1);
        detail::strip_line_end(request_line);
        detail::parse_request_line(request_line, out, why);  // checked when it arrived
        out.size = at_;
        return head_status::complete;
      }
      const std::size_t colon = line.find(':');
      if (colon == std::string_view::npos || !detail::is_token(line.substr(0, colon))) {
        why = "a header line is not \"name: value\"";  // a folded line (leading space) is one
        return head_status::bad;
      }
      if (!detail::is_field_value(line.substr(colon + 1))) {
        why = "a header value holds a control byte";
        return head_status::bad;
      }
    }
  }

 private:
  std::size_t at_ = 0;                // where the next line starts
  std::size_t request_line_end_ = 0;  // just past the request line's LF; 0: not seen yet
};

// Parses a whole request head at the start of `text` at once (head_parser::feed, once).
constexpr head_status parse_request_head(std::string_view text, request_head& out, const char*& why) noexcept {
  head_parser parser;
  return parser.feed(text, out, why);
}

// The path of a request target: what comes before its query or fragment.
constexpr std::string_view target_path(std::string_view target) noexcept {
  return target.substr(0, target.find_first_of("?#"));
}

// The value of the header `name` (ASCII case ignored) in a whole head `text` (the request line
// first, as head_parser accepted it), its surrounding spaces and tabs trimmed; returns how many
// header lines carry that name (0: `value` is left alone).
constexpr std::size_t find_header(std::string_view text, std::string_view name, std::string_view& value) noexcept {
  const auto same = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
      const char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
      if (x != y) return false;
    }
    return true;
  };
  std::size_t found = 0;
  std::size_t at = text.find('\n');  // past the request line
  while (at != std::string_view::npos && at + 1 < text.size()) {
    const std::size_t end = text.find('\n', at + 1);
    std::string_view line = text.substr(at + 1, (end == std::string_view::npos ? text.size() : end) - at - 1);
    detail::strip_line_end(line);
    if (line.empty()) break;
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos && same(line.substr(0, colon), name)) {
      std::string_view v = line.substr(colon + 1);
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
      if (found++ == 0) value = v;
    }
    at = end;
  }
  return found;
}

// An HTTP/1.0 response that closes the connection after its body. `extra_headers` are whole lines,
// each ending in CRLF. With `head_only` (a HEAD request) the body is left out and its length kept.
inline std::string response(int status, std::string_view reason, std::string_view content_type, std::string_view body,
                            std::string_view extra_headers = {}, bool head_only = false) {
  std::string out;
  out.reserve(128 + extra_headers.size() + (head_only ? 0 : body.size()));
  out += "HTTP/1.0 ";
  out += std::to_string(status);
  out += ' ';
  out += reason;
  out += "\r\nContent-Type: ";
  out += content_type;
  out += "\r\nContent-Length: ";
  out += std::to_string(body.size());
  out += "\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n";
  out += extra_headers;
  out += "\r\n";
  if (!head_only) out += body;
  return out;
}

}  // namespace wire::http
GEERPC_END_NAMESPACE
