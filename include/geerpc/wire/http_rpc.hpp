// geerpc: the head of a JSON-RPC 2.0 call over HTTP, `POST /rpc` on the RPC port (docs/protocol.md
// section 11), checked before a byte of its body is read: what the body is (its length), what
// deadline its calls carry (the Geerpc-Timeout header), or why the request is refused, as the HTTP
// status to answer. Pure functions over the head's text: fuzzable, as wire/http.hpp.
//
//   another method than POST          405, Allow: POST (OPTIONS too: no CORS preflight is granted)
//   from a loopback peer, a Host that  403 (DNS rebinding: a web page whose name resolves to
//   is a DNS name, not localhost or    127.0.0.1 posts as same-origin, application/json and all)
//   an address
//   Content-Type not application/json 415 (a browser page can send a cross-origin POST of a form's
//   (a charset=utf-8 may follow)      types without asking: requiring this type is what keeps a
//                                     web page from calling, docs/security.md)
//   Transfer-Encoding (chunked)       411: the body is read by Content-Length only
//   no Content-Length                 411
//   a Content-Length that is no       400
//   number, or two that differ
//   a body longer than max_frame_size 413
//   Geerpc-Timeout not <n>us|ms|s|m   400
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "../config.hpp"
#include "../detail/integer_cast.hpp"
#include "http.hpp"

GEERPC_BEGIN_NAMESPACE
namespace wire::http {

inline constexpr std::string_view rpc_path = "/rpc";
inline constexpr std::string_view timeout_header = "Geerpc-Timeout";

// What a well-formed head says of the body and its calls.
struct rpc_terms {
  std::size_t content_length = 0;
  std::uint64_t budget_us = 0;  // the calls' deadline, from when the body has arrived; 0: none
};

// A head refused: the answer's status, its reason phrase, a text for the body, extra header lines.
struct rpc_refusal {
  int status = 0;
  std::string_view reason;
  std::string text;
  std::string_view extra_headers;
};

namespace detail {

constexpr char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
constexpr bool same_text(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}
constexpr std::string_view trimmed(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "application/json", or "application/json; charset=utf-8" (any case, any spaces around the ';'
// and '=', the charset quoted or not). Nothing else: another parameter is a type we did not agree on.
constexpr bool is_json_type(std::string_view type) noexcept {
  const std::size_t semicolon = type.find(';');
  if (!same_text(trimmed(type.substr(0, semicolon)), "application/json")) return false;
  if (semicolon == std::string_view::npos) return true;
  const std::string_view parameter = trimmed(type.substr(semicolon + 1));
  const std::size_t equals = parameter.find('=');
  if (equals == std::string_view::npos || !same_text(trimmed(parameter.substr(0, equals)), "charset")) return false;
  std::string_view charset = trimmed(parameter.substr(equals + 1));
  if (charset.size() >= 2 && charset.front() == '"' && charset.back() == '"')
    charset = charset.substr(1, charset.size() - 2);
  return same_text(charset, "utf-8");
}

// A decimal of at most 18 digits (no sign, no spaces inside); false if it is none.
constexpr bool parse_count(std::string_view text, std::uint64_t& out) noexcept {
  if (text.empty() || text.size() > 18) return false;
  out = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return true;
}

}  // namespace detail

// "250us", "200ms", "2s", "1m": a positive whole number and a unit, as microseconds (at most
// 2^50, about 35 years); false for anything else.
constexpr bool parse_timeout(std::string_view text, std::uint64_t& us) noexcept {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  std::uint64_t count = 0;
  if (!detail::parse_count(text.substr(0, digits), count) || count == 0) return false;
  const std::string_view unit = text.substr(digits);
  std::uint64_t scale = 0;
  if (unit == "us")
    scale = 1;
  else if (unit == "ms")
    scale = 1'000;
  else if (unit == "s")
    scale = 1'000'000;
  else if (unit == "m")
    scale = 60'000'000;
  else
    return false;
  constexpr std::uint64_t max_us = std::uint64_t{1} << 50;
  if (count > max_us / scale) return false;
  us = count * scale;
  return true;
}

// A Host header's value that names this machine by address or as localhost ("127.0.0.1:7000",
// "[::1]:7000", "localhost"), not by a DNS name: what a loopback peer's request must carry, since
// a web page whose own name resolves to 127.0.0.1 (DNS rebinding) posts to it as same-origin.
constexpr bool is_address_host(std::string_view host) noexcept {
  if (host.starts_with('[')) {  // an IPv6 literal, its port after the ']'
    const std::size_t close = host.find(']');
    return close != std::string_view::npos && (close + 1 == host.size() || host[close + 1] == ':');
  }
  host = host.substr(0, host.find(':'));
  if (detail::same_text(host, "localhost")) return true;
  if (host.empty()) return false;
  for (const char c : host)
    if ((c < '0' || c > '9') && c != '.') return false;
  return true;
}

// Checks the head of a request for rpc_path (`text` is the whole head, as head_parser took it).
// Returns true with `out` set, or false with `refusal` set.
// A loopback peer's Host must be an address or localhost (is_address_host()), or absent.
inline bool check_rpc_head(const request_head& head, std::string_view text, std::size_t max_body, bool loopback,
                           rpc_terms& out, rpc_refusal& refusal) {
  const auto refuse = [&](int status, std::string_view reason, const std::string& why, std::string_view extra = {}) {
    refusal = {status, reason, "geerpc: " + why + "\n", extra};
    return false;
  };
  if (head.method != "POST")
    return refuse(405, "Method Not Allowed", std::string(rpc_path) + " takes POST only", "Allow: POST\r\n");
  std::string_view value;
  if (loopback && find_header(text, "Host", value) != 0 && !is_address_host(value))
    return refuse(403, "Forbidden",
                  std::string(rpc_path) + " takes, from this machine, a Host that is an address or localhost, not \"" +
                      std::string(value.substr(0, 100)) + "\" (a name could be a web page's, rebound to 127.0.0.1)");
  if (find_header(text, "Content-Type", value) != 1 || !detail::is_json_type(value))
    return refuse(415, "Unsupported Media Type",
                  std::string(rpc_path) + " takes Content-Type: application/json (JSON-RPC 2.0)");
  if (find_header(text, "Transfer-Encoding", value) != 0)
    return refuse(411, "Length Required",
                  std::string(rpc_path) + " reads a body of Content-Length bytes: Transfer-Encoding is not read");
  const std::size_t lengths = find_header(text, "Content-Length", value);
  if (lengths == 0) return refuse(411, "Length Required", std::string(rpc_path) + " needs a Content-Length");
  std::uint64_t length = 0;
  if (lengths != 1 || !detail::parse_count(value, length))
    return refuse(400, "Bad Request", "the Content-Length is not one decimal number");
  if (length > max_body)
    return refuse(413, "Content Too Large",
                  "a body of " + std::to_string(length) + " bytes (at most " + std::to_string(max_body) + ")");
  std::uint64_t budget_us = 0;
  if (const std::size_t timeouts = find_header(text, timeout_header, value); timeouts != 0)
    if (timeouts != 1 || !parse_timeout(value, budget_us))
      return refuse(400, "Bad Request",
                    std::string(timeout_header) + " is not a positive whole number of us, ms, s or m (\"200ms\")");
  out = {geerpc::detail::integer_cast<std::size_t>(length), budget_us};  // at most max_body
  return true;
}

}  // namespace wire::http
GEERPC_END_NAMESPACE
