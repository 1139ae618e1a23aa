// geerpc: what the server answers when a request names a "Service.Method" it does not serve. The
// name is the peer's, so untrusted: any bytes, as many as a frame holds. It is echoed printable
// (\xHH for other bytes) and cut short; the registered name closest to it by edit distance is
// suggested when one is close ("did you mean Arith.Sum?"); an unknown method's error also lists the
// service's methods, as many as fit a bounded text. The work is bounded by the registered names'
// lengths, whatever the peer sent.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

inline constexpr std::size_t echoed_name_limit = 64;      // bytes of a peer's name shown in an error
inline constexpr std::size_t listed_methods_limit = 200;  // bytes of method names listed in one

// `text`'s first `limit` bytes, printable ASCII kept and any other byte (and '\') as \xHH, then
// "..." if it was longer.
inline void append_printable(std::string& out, std::string_view text, std::size_t limit = echoed_name_limit) {
  constexpr std::string_view hex = "0123456789abcdef";
  for (const char c : text.substr(0, limit)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f && c != '\\') {
      out += c;
    } else {
      out += "\\x";
      out += hex[byte >> 4];
      out += hex[byte & 0xfU];
    }
  }
  if (text.size() > limit) out += "...";
}

// The edit distance (Levenshtein; ASCII letters compared without case) between `a` and `b`, or
// `limit + 1` when it is more than `limit`. Names whose lengths differ by more than `limit` are not
// compared at all, so the cost is bounded by `b`'s length (`limit` is a fraction of it).
inline std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t limit) {
  const std::size_t gap = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (gap > limit) return limit + 1;
  const auto folded = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  std::vector<std::size_t> row(b.size() + 1);  // distances from a's first i bytes to each prefix of b
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    std::size_t smallest = row[0];
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t replace = diagonal + (folded(a[i - 1]) == folded(b[j - 1]) ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, replace});
      diagonal = above;
      smallest = std::min(smallest, row[j]);
    }
    if (smallest > limit) return limit + 1;  // no later row gets smaller
  }
  return std::min(row[b.size()], limit + 1);
}

// The index of the candidate closest to `name`, if one is close: within a third of the candidate's
// length, so that "Sun" finds "Sum", "sum" finds "Sum" and "x" finds "X", but "Delete" finds no
// "Slow" and "Z" no "X". The first of equally close ones; npos when none is close.
inline std::size_t closest_name(std::string_view name, const std::vector<std::string_view>& candidates) {
  std::size_t best = std::string_view::npos;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::size_t limit = candidates[i].size() / 3;
    const std::size_t distance = edit_distance(name, candidates[i], limit);
    if (distance <= limit && distance < best_distance) {
      best = i;
      best_distance = distance;
    }
  }
  return best;
}

// "rpc server: service/method request ill-formed: <name>" (GeeRPC's words): no '.' in the name.
inline std::string ill_formed_name_message(std::string_view name) {
  std::string out = "rpc server: service/method request ill-formed: ";
  append_printable(out, name);
  return out;
}

// "rpc server: can't find service Arth; did you mean Arith.Sum?": `service` is the part of `name`
// before its last '.', `registered` every "Service.Method" served.
inline std::string unknown_service_message(std::string_view name, std::string_view service,
                                           const std::vector<std::string_view>& registered) {
  std::string out = "rpc server: can't find service ";
  append_printable(out, service);
  if (const std::size_t at = closest_name(name, registered); at != std::string_view::npos)
    out.append("; did you mean ").append(registered[at]).append("?");
  return out;
}

// "rpc server: can't find method Sun; did you mean Arith.Sum? (Arith has: Echo, Sum)": `methods`
// are the service's method names (without "Service."), in the order to list them; those past
// listed_methods_limit bytes are counted ("Echo, 3 more").
inline std::string unknown_method_message(std::string_view service, std::string_view method,
                                          const std::vector<std::string_view>& methods) {
  std::string out = "rpc server: can't find method ";
  append_printable(out, method);
  if (const std::size_t at = closest_name(method, methods); at != std::string_view::npos)
    out.append("; did you mean ").append(service).append(".").append(methods[at]).append("?");
  if (methods.empty()) return out;
  out.append(" (").append(service).append(" has: ");
  std::size_t room = listed_methods_limit;
  for (std::size_t i = 0; i < methods.size(); ++i) {
    if (i > 0) out += ", ";
    if (methods[i].size() + 2 > room) {
      out.append(std::to_string(methods.size() - i)).append(" more");
      break;
    }
    out.append(methods[i]);
    room -= methods[i].size() + 2;
  }
  return out + ")";
}

}  // namespace detail
GEERPC_END_NAMESPACE
