// geerpc: the JSON codec's writer, which appends JSON text (RFC 8259, docs/protocol.md 8.1) to a
// caller-owned buffer: literals, numbers, strings (checked to be UTF-8 and escaped), base64 strings
// of bytes and punctuation. Which token goes where is the encoder's business (json/encode.hpp); the
// writer only makes each token right.
#pragma once

#include <charconv>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include "../config.hpp"
#include "../detail/base64.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {

// A value that has no JSON form (a NaN, a string that is not UTF-8...). what() is the reason, after
// `field "<path>": ` when the value sits in a struct: `field "user.name": string is not valid UTF-8
// (byte 3)`. The path is added while the exception unwinds through the struct encoders, so a value
// that encodes pays nothing for it. Copying one cannot throw (one string, runtime_error's).
struct encode_error : std::runtime_error {
  explicit encode_error(const std::string& reason) : std::runtime_error(reason) {}
  encode_error(std::string_view path, std::string_view reason)
      : std::runtime_error(with_path(path, reason)), reason_at_(prefix.size() + path.size() + suffix.size()) {}

  // The reason alone, and the dotted path of fields to the value ("" outside any struct).
  std::string_view reason() const noexcept { return std::string_view(what()).substr(reason_at_); }
  std::string_view path() const noexcept {
    if (reason_at_ == 0) return {};
    return std::string_view(what()).substr(prefix.size(), reason_at_ - prefix.size() - suffix.size());
  }

  // The same error, seen from the struct whose field `field` holds the value.
  encode_error in_field(std::string_view field) const {
    if (reason_at_ == 0) return encode_error(field, reason());
    std::string outer(field);
    outer += '.';
    outer += path();
    return encode_error(outer, reason());
  }

 private:
  static constexpr std::string_view prefix = "field \"", suffix = "\": ";  // around the path
  static std::string with_path(std::string_view path, std::string_view reason) {
    std::string text(prefix);
    text += path;
    text += suffix;
    text += reason;
    return text;
  }

  std::size_t reason_at_ = 0;
};

namespace detail {

// The length of the well-formed UTF-8 sequence (RFC 3629) at `text[0..size)`, which starts with a
// byte of 0x80 or more; 0 when there is none: a stray continuation byte, an overlong form (C0, C1,
// E0 80..9F, F0 80..8F), a surrogate (ED A0..BF), a code point past U+10FFFF (F4 90.., F5..FF), a
// sequence cut short. Hand-written: Boost.JSON checks UTF-8 inside its parser, but exposes no
// validator to call on a string of our own.
inline std::size_t utf8_sequence_length(const unsigned char* text, std::size_t size) noexcept {
  const unsigned lead = text[0];
  std::size_t length = 0;
  unsigned low = 0x80, high = 0xbf;  // the range of the second byte; later ones are 80..BF
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (size < length || text[1] < low || text[1] > high) return 0;
  for (std::size_t i = 2; i < length; ++i)
    if ((text[i] & 0xc0u) != 0x80u) return 0;
  return length;
}

// Whether a byte ends a run that is copied as it is: a quote, a backslash, a control character
// (escaped), or the start of a multi-byte sequence (checked).
constexpr bool ends_plain_run(unsigned char c) noexcept { return c < 0x20 || c == '"' || c == '\\' || c >= 0x80; }

// Whether any of the 8 bytes of `word` ends a plain run: the bit tricks of "Bit Twiddling Hacks"
// (has a byte less than n, has a zero byte). A false alarm only costs a look at each byte.
constexpr bool word_ends_plain_run(std::uint64_t word) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101u, highs = ones * 0x80;
  const auto has_zero = [](std::uint64_t w) { return (w - ones) & ~w & highs; };
  const std::uint64_t control = (word - ones * 0x20) & ~word & highs;
  return ((control | has_zero(word ^ (ones * '"')) | has_zero(word ^ (ones * '\\')) | (word & highs)) != 0);
}

// The index of the first byte at or after `at` that ends a plain run; `size` when none does.
// Eight bytes at a time: most strings are plain text.
inline std::size_t plain_run_end(const unsigned char* text, std::size_t at, std::size_t size) noexcept {
  for (; size - at >= 8; at += 8) {
    std::uint64_t word;
    std::memcpy(&word, text + at, 8);
    if (!word_ends_plain_run(word)) continue;
    for (std::size_t i = at; i < at + 8; ++i)
      if (ends_plain_run(text[i])) return i;
  }
  while (at < size && !ends_plain_run(text[at])) ++at;
  return at;
}

}  // namespace detail

// Appends JSON tokens to a caller-owned buffer, so buffers can be reused across calls. Each
// call writes one token, exactly; none writes whitespace. The methods that take a value with no
// JSON form throw encode_error and leave the buffer as it was before the call.
class writer {
 public:
  explicit writer(std::vector<std::byte>& out) noexcept : out_(out) {}

  void null() { raw("null"); }
  void boolean(bool value) { raw(value ? std::string_view("true") : std::string_view("false")); }

  // Any integer type but bool, exactly, in decimal: char and the charN_t types as their numbers.
  template <std::integral I>
  requires(!std::is_same_v<I, bool>) void integer(I value) {
    char text[24];
    const auto end = std::to_chars(text, text + sizeof text, widened(value)).ptr;
    raw(std::string_view(text, static_cast<std::size_t>(end - text)));
  }

  // The shortest text that reads back as the same value (`0.1`, `1e+300`, `-0`); NaN and the
  // infinities have none in JSON.
  template <class F>
  requires(std::is_same_v<F, float> || std::is_same_v<F, double>) void number(F value) {
    if (std::isnan(value)) throw encode_error("JSON cannot carry NaN");
    if (std::isinf(value)) throw encode_error(value > 0 ? "JSON cannot carry infinity" : "JSON cannot carry -infinity");
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, value).ptr;
    raw(std::string_view(text, static_cast<std::size_t>(end - text)));
  }

  // A string: `text` must be UTF-8; `"`, `\` and the control characters are escaped, nothing else.
  void string(std::string_view text);

  // A string of the bytes in base64 (RFC 4648 section 4, padded).
  void base64(std::span<const std::byte> bytes) {
    const std::string text =
        geerpc::detail::base64_encode(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    put('"');
    raw(text);
    put('"');
  }

  void begin_object() { put('{'); }
  void end_object() { put('}'); }
  void begin_array() { put('['); }
  void end_array() { put(']'); }
  void comma() { put(','); }
  void colon() { put(':'); }

  // Text the caller knows to be the JSON it wants (a field's `"name":`, a time point's string).
  void raw(std::string_view text) {
    const auto* bytes = reinterpret_cast<const std::byte*>(text.data());
    if (text.size() <= small_write) {
      for (std::size_t i = 0; i < text.size(); ++i) out_.push_back(bytes[i]);
      return;
    }
    out_.insert(out_.end(), bytes, bytes + text.size());
  }
  void put(char c) { out_.push_back(static_cast<std::byte>(c)); }

  // The bytes in the buffer so far (the caller's included).
  std::size_t size() const noexcept { return out_.size(); }

 private:
  // As in codec::writer: a few bytes go one by one (push_back's inline path), more in one insert.
  static constexpr std::size_t small_write = 8;

  // std::to_chars takes the standard integer types, not char8_t, char16_t, char32_t or wchar_t.
  template <class I>
  static auto widened(I value) noexcept {
    if constexpr (std::is_signed_v<I>)
      return static_cast<long long>(value);
    else
      return static_cast<unsigned long long>(value);
  }

  void escape(unsigned char c);

  std::vector<std::byte>& out_;
};

inline void writer::escape(unsigned char c) {
  static constexpr char hex[] = "0123456789abcdef";
  put('\\');
  switch (c) {
    case '"':
      return put('"');
    case '\\':
      return put('\\');
    case '\n':
      return put('n');
    case '\t':
      return put('t');
    case '\r':
      return put('r');
    case '\b':
      return put('b');
    case '\f':
      return put('f');
    default:
      break;
  }
  const char code[] = {'u', '0', '0', hex[c >> 4], hex[c & 0xfu]};
  raw(std::string_view(code, sizeof code));
}

// Runs of bytes that need nothing are copied in one go; a quote, backslash or control character is
// escaped; a multi-byte sequence is checked and passes as it is (U+2028 included: JSON allows it).
inline void writer::string(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t size = text.size(), before = out_.size();
  put('"');
  std::size_t run = 0, at = 0;
  while ((at = detail::plain_run_end(bytes, at, size)) < size) {
    if (bytes[at] >= 0x80) {
      const std::size_t length = detail::utf8_sequence_length(bytes + at, size - at);
      if (length == 0) {
        out_.resize(before);
        throw encode_error("string is not valid UTF-8 (byte " + std::to_string(at) + ")");
      }
      at += length;
      continue;
    }
    raw(text.substr(run, at - run));
    escape(bytes[at]);
    run = ++at;
  }
  raw(text.substr(run));
  put('"');
}

}  // namespace json
GEERPC_END_NAMESPACE
