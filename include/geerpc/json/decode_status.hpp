// geerpc: what a JSON decode returns (json::decode_status: why it failed and where), and the words
// its reasons share: an untrusted string quoted for a message, and a memory limit's reason.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include "../codec/reader.hpp"
#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {

// Why a decode failed and the byte of the text where it was noticed; empty reason: it did not.
// The reason names the field where it is known: `field "count": expected an integer, got a string`.
struct decode_status {
  std::string reason;
  std::size_t offset = 0;

  explicit operator bool() const noexcept { return reason.empty(); }
  std::string message() const { return reason.empty() ? "ok" : reason + " at byte " + std::to_string(offset); }
};

namespace detail {

constexpr const char* short_escape_of(char c) noexcept {
  switch (c) {
    case '\n':
      return "\\n";
    case '\t':
      return "\\t";
    case '\r':
      return "\\r";
    case '\b':
      return "\\b";
    case '\f':
      return "\\f";
    default:
      return nullptr;
  }
}

// An untrusted string for an error message: quoted, JSON-escaped as the encoder escapes (and DEL),
// and cut after 40 bytes (at a character's start), with "..." after it when cut.
inline std::string quoted(std::string_view text) {
  constexpr std::size_t most = 40;
  std::size_t size = std::min(text.size(), most);
  while (size < text.size() && size > 0 && (static_cast<unsigned char>(text[size]) & 0xc0) == 0x80) --size;
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "\"";
  for (const char c : text.substr(0, size)) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (const char* short_escape = short_escape_of(c); short_escape != nullptr) {
      out += short_escape;
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\u00";
      out += hex[byte >> 4];
      out += hex[byte & 15];
    } else {
      out += c;
    }
  }
  out += '"';
  if (size < text.size()) out += "...";
  return out;
}

// The reason of a value that would pass its memory limit, as codec::decode_status words it.
inline std::string memory_reason(std::size_t limit, std::size_t text_size) {
  const std::string why = limit == codec::default_memory_limit(text_size)
                              ? "limit: " + std::to_string(codec::memory_per_input_byte) + " x " +
                                    std::to_string(text_size) + " input bytes + " + std::to_string(codec::memory_base)
                              : std::string("limit set by the caller");
  return "decoded value would need more than " + std::to_string(limit) + " bytes of memory (" + why + ")";
}

}  // namespace detail
}  // namespace json
GEERPC_END_NAMESPACE
