// geerpc: the JSON codec's tape: a JSON text parsed whole into a flat list of tokens (one per
// value, key and closing bracket), each with the byte of the text where it starts, and for an
// opening bracket the index of its closing one and how many elements or members it holds; what the
// decoder (json/decode.hpp) reads values from. The parse is compiled once, in geerpc::json's
// src/json_tape.cpp (Boost.JSON's basic_parser, whose headers no header here includes); it
// enforces what docs/protocol.md 8.2 asks beyond Boost's grammar: at most 64 levels of nesting, no
// key twice in an object, no number beyond a double's range, nothing but whitespace after the
// value, and every byte the tape takes charged against the decode's memory budget before it is taken.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../codec/reader.hpp"
#include "../config.hpp"
#include "../detail/assert.hpp"
#include "../detail/integer_cast.hpp"
#include "decode_status.hpp"
#include "number_text.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {

// Arrays and objects nest at most this deep, counted from the text's top (docs/protocol.md 8.2).
inline constexpr std::size_t max_depth = 64;

enum class token_kind : std::uint8_t {
  null,
  boolean,
  int64,     // an integer that fits std::int64_t (all negative ones)
  uint64,    // an integer above std::int64_t's range that fits std::uint64_t
  floating,  // any other number: a fraction, an exponent, or an integer too large for 64 bits
  string,
  key,
  array_begin,
  array_end,
  object_begin,
  object_end,
};

constexpr bool opens(token_kind kind) noexcept {
  return kind == token_kind::array_begin || kind == token_kind::object_begin;
}

// One token, 16 bytes. Offsets and indices are 32-bit: the tape refuses a text of 4 GiB or more.
struct token {
  token_kind kind;
  // A string's or key's characters are the text's own (it had no escapes), not the tape's copy; a
  // floating number was written as an integer (no fraction, no exponent).
  bool flag;
  std::uint32_t offset;   // the byte of the text where the token starts
  std::uint64_t payload;  // the value; a string's place and size; an opening bracket's end and count

  bool boolean() const noexcept { return payload != 0; }
  std::int64_t int64() const noexcept { return static_cast<std::int64_t>(payload); }
  std::uint64_t uint64() const noexcept { return payload; }
  double floating() const noexcept { return std::bit_cast<double>(payload); }
  // An opening bracket's: the index of its closing token, and its elements (members of an object).
  std::size_t end() const noexcept { return static_cast<std::uint32_t>(payload); }
  std::size_t count() const noexcept { return geerpc::detail::integer_cast<std::size_t>(payload >> 32); }
};

namespace detail {
class tape_builder;
}  // namespace detail

// A JSON text parsed into tokens, and the memory budget of its decode: what the tape takes is
// charged to it, and so is what the values decoded from it take (json/decode.hpp). Tokens are
// kept in blocks of 256, so that the tape never copies itself while growing and never holds more
// than one block it does not use: a vector grown by doubling would take up to 4 times its tokens'
// size, all of it charged, and refuse honest texts. The first block is inside the tape (4 KiB), so
// that a small text allocates nothing. Strings without escapes are views of the text; others are
// copied once, into one buffer.
class tape {
 public:
  tape(std::span<const std::byte> text, std::size_t max_memory) noexcept
      : text_(reinterpret_cast<const char*>(text.data()), text.size()), budget_(text, max_memory) {}
  explicit tape(std::span<const std::byte> text) noexcept : tape(text, codec::default_memory_limit(text.size())) {}
  tape(const tape&) = delete;
  tape& operator=(const tape&) = delete;

  // Parses the text, once; the tape is empty again after a failure. (src/json_tape.cpp, as are
  // push, append_chars and grow: the tape builder's.)
  decode_status parse();

  std::size_t size() const noexcept { return size_; }
  const token& operator[](std::size_t index) const noexcept {
    GEERPC_ASSERT(index < size_, "a tape read past its last token");
    return index < block_size ? first_[index] : blocks_[index / block_size - 1][index % block_size];
  }
  // A string's or key's characters.
  std::string_view chars(const token& t) const noexcept {
    GEERPC_ASSERT(t.kind == token_kind::string || t.kind == token_kind::key, "chars of a token that has none");
    const auto begin = static_cast<std::size_t>(static_cast<std::uint32_t>(t.payload));
    const std::string_view from = t.flag ? text_ : std::string_view(chars_.data(), chars_.size());
    return from.substr(begin, t.count());
  }
  // A number's text, as it was written.
  std::string_view number_text(const token& t) const noexcept {
    std::size_t end = t.offset;
    while (end < text_.size() && detail::is_number_char(text_[end])) ++end;
    return text_.substr(t.offset, end - t.offset);
  }
  // The exact text of the value whose first token is at `index` (a string with its quotes, an array
  // or object through its closing bracket), as the parsed text holds it.
  std::string_view value_text(std::size_t index) const noexcept {
    const token& t = (*this)[index];
    std::size_t end = t.offset;
    switch (t.kind) {
      case token_kind::array_begin:
      case token_kind::object_begin:
        end = (*this)[t.end()].offset + std::size_t{1};
        break;
      case token_kind::string:
        for (++end; end < text_.size() && text_[end] != '"'; ++end)
          if (text_[end] == '\\') ++end;  // the escaped character is never the closing quote
        ++end;
        break;
      case token_kind::null:
      case token_kind::boolean:
        end +=
            t.kind == token_kind::boolean && !t.boolean() ? std::size_t{5} : std::size_t{4};  // false, or true and null
        break;
      default:
        return number_text(t);
    }
    return text_.substr(t.offset, end - t.offset);
  }
  std::span<const std::byte> text() const noexcept { return std::as_bytes(std::span(text_.data(), text_.size())); }

  // The decode's memory budget (a codec::reader over the text, used for its charges only).
  codec::reader& budget() noexcept { return budget_; }
  // Charges `bytes` for the value at `offset`; false, with the budget failed, when it cannot pay.
  bool charge(std::size_t bytes, std::size_t offset) noexcept {
    return budget_.charge(bytes, reinterpret_cast<const std::byte*>(text_.data()) + offset);
  }
  bool charge(std::size_t count, std::size_t each, std::size_t offset) noexcept {
    return budget_.charge(count, each, reinterpret_cast<const std::byte*>(text_.data()) + offset);
  }
  std::string memory_reason() const { return detail::memory_reason(budget_.memory_limit(), text_.size()); }

 private:
  friend class detail::tape_builder;
  static constexpr std::size_t block_size = 256;

  token& at(std::size_t index) noexcept {
    return index < block_size ? first_[index] : blocks_[index / block_size - 1][index % block_size];
  }
  bool push(const token& t);
  bool append_chars(std::string_view chars, std::size_t offset);
  template <class U>
  bool grow(std::vector<U>& buffer, std::size_t needed, std::size_t least, std::size_t offset);

  std::string_view text_;
  codec::reader budget_;
  std::array<token, block_size> first_;
  std::vector<std::unique_ptr<token[]>> blocks_;  // the blocks after the first
  std::size_t size_ = 0;
  std::vector<char> chars_;               // the characters of strings that had escapes
  std::vector<std::uint32_t> key_order_;  // a large object's keys, sorted to find a repeat
};

}  // namespace json
GEERPC_END_NAMESPACE
