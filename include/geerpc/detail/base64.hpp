// geerpc: base64 (RFC 4648 section 4, with padding), which etcd's JSON gateway uses for keys and
// values and the JSON codec for bytes. Written here because no library geerpc uses exposes it
// (libcurl keeps its own private; Boost's sits in beast::detail), and it is twenty lines with a
// test of every byte.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

inline std::string base64_encode(std::string_view bytes) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto n = static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16 |
                   static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8 |
                   static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 2]));
    out += alphabet[n >> 18];
    out += alphabet[(n >> 12) & 63u];
    out += alphabet[(n >> 6) & 63u];
    out += alphabet[n & 63u];
  }
  if (const std::size_t left = bytes.size() - i; left > 0) {
    auto n = static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16;
    if (left == 2) n |= static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out += alphabet[n >> 18];
    out += alphabet[(n >> 12) & 63u];
    out += left == 2 ? alphabet[(n >> 6) & 63u] : '=';
    out += '=';
  }
  return out;
}

// The bytes, or nothing when text is not the padded base64 of some bytes (the canonical text only).
inline std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  const auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=' && text[i + 3] == '=') : 0;
    unsigned n = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const int v = k >= static_cast<std::size_t>(4 - pad) ? 0 : value(text[i + k]);
      if (v < 0) return std::nullopt;
      n = n << 6 | static_cast<unsigned>(v);
    }
    // The bits a padded group's last character carries beyond its bytes are zero in the one
    // canonical text of those bytes: "QR==" is refused, not read as "QQ==" is.
    if ((pad == 1 && (n & 0xffu) != 0) || (pad == 2 && (n & 0xffffu) != 0)) return std::nullopt;
    out += static_cast<char>(n >> 16);
    if (pad < 2) out += static_cast<char>((n >> 8) & 0xffu);
    if (pad < 1) out += static_cast<char>(n & 0xffu);
  }
  return out;
}

}  // namespace detail
GEERPC_END_NAMESPACE
