// geerpc: the JSON decoder's cursor, which reads values from a parsed tape (json/tape.hpp) token by
// token and keeps the decode's first failure, and kind_decoder<T>, the class template each decoder
// of json/decode_*.hpp specializes for one kind of codec/type_kind.hpp. Recursion goes through class
// templates only, as in the binary codec (codec/kind_codec.hpp says why). Every allocation is
// charged against the decode's memory budget before it is made, with the binary codec's charges
// (codec/allocation.hpp), and a failure names the field it happened in.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "../codec/allocation.hpp"
#include "../codec/type_kind.hpp"
#include "../config.hpp"
#include "decode_status.hpp"
#include "tape.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {

// Reads values from a parsed tape, token by token, and keeps the decode's first failure: why,
// where, and the path of struct fields to it (added as the failure returns through the structs,
// so a decode that succeeds pays nothing for it). Its tape's budget pays for what decoding takes.
class cursor {
 public:
  explicit cursor(tape& source, std::size_t index = 0) noexcept : tape_(&source), index_(index) {}

  const token& peek() const noexcept { return (*tape_)[index_]; }
  std::size_t index() const noexcept { return index_; }
  void next() noexcept { ++index_; }
  // Past the whole value that starts here, however large: an opening bracket knows its closing one.
  void skip() noexcept {
    const token& at = peek();
    index_ = opens(at.kind) ? at.end() + 1 : index_ + 1;
  }
  std::string_view chars(const token& at) const noexcept { return tape_->chars(at); }
  std::string_view number_text(const token& at) const noexcept { return tape_->number_text(at); }
  // The exact text of the value that starts here (json/raw_value.hpp reads it whole).
  std::string_view value_text() const noexcept { return tape_->value_text(index_); }

  // Records the first failure; returns false, for `return in.fail(...)`.
  bool fail(std::string reason, const token& at) {
    if (reason_.empty()) {
      reason_ = std::move(reason);
      offset_ = at.offset;
    }
    return false;
  }
  bool fail_expected(std::string_view expected, const token& at);
  bool fail_memory(const token& at) { return fail(tape_->memory_reason(), at); }
  bool failed() const noexcept { return !reason_.empty(); }
  // Adds the field that held the failed value to its path; returns false.
  bool in_field(std::string_view name) {
    path_ = path_.empty() ? std::string(name) : std::string(name) + "." + path_;
    return false;
  }
  decode_status status() const {
    if (reason_.empty()) return {};
    return {path_.empty() ? reason_ : "field \"" + path_ + "\": " + reason_, offset_};
  }

  // Charges what the value at `at` is about to allocate; fails when the budget cannot pay.
  bool charge(std::size_t bytes, const token& at) { return tape_->charge(bytes, at.offset) || fail_memory(at); }
  bool charge(std::size_t count, std::size_t each, const token& at) {
    return tape_->charge(count, each, at.offset) || fail_memory(at);
  }
  // What making `count` of each of Made allocates (codec::detail::default_allocation: a deque's).
  template <class... Made>
  bool charge_made(std::size_t count, const token& at) {
    constexpr std::size_t each = (std::size_t{0} + ... + codec::detail::default_allocation<Made>());
    if constexpr (each == 0)
      return true;
    else
      return charge(count, each, at);
  }
  std::size_t memory_left() const noexcept { return tape_->budget().memory_left(); }

 private:
  tape* tape_;
  std::size_t index_;
  std::string reason_;
  std::string path_;
  std::size_t offset_ = 0;
};

namespace detail {
constexpr std::string_view described(token_kind kind) noexcept {
  switch (kind) {
    case token_kind::null:
      return "null";
    case token_kind::boolean:
      return "a boolean";
    case token_kind::int64:
    case token_kind::uint64:
    case token_kind::floating:
      return "a number";
    case token_kind::string:
      return "a string";
    case token_kind::array_begin:
      return "an array";
    case token_kind::object_begin:
      return "an object";
    default:
      return "a key or closing bracket";  // never where a value is read
  }
}
}  // namespace detail

inline bool cursor::fail_expected(std::string_view expected, const token& at) {
  std::string reason = "expected ";
  reason += expected;
  reason += ", got ";
  reason += detail::described(at.kind);
  return fail(std::move(reason), at);
}

// Left undefined for codec::type_kind::unsupported: decode() refuses such a T with
// codec::require_serializable's message.
template <class T, codec::type_kind K = codec::kind_of<T>()>
struct kind_decoder;

// Decodes the value at the cursor into `value` and steps past it; false when it cannot, and then
// `in.status()` says why. `value` must be freshly made: a field the text leaves out keeps what
// `value` holds. This is how a value inside a larger text (a JSON-RPC request's "params") is read.
template <class T>
bool decode_value(cursor& in, T& value) {
  return kind_decoder<T>::decode(in, value);
}

}  // namespace json
GEERPC_END_NAMESPACE
