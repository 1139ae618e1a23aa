// geerpc: the JSON decoder's scalars and strings (docs/protocol.md 8.1, 8.2): booleans, integers
// exact to their type, floats correctly rounded, enums, durations, strings, bytes from base64,
// bitsets, and time points from RFC 3339 text (json/rfc3339.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "../codec/allocation.hpp"
#include "../codec/type_kind.hpp"
#include "../config.hpp"
#include "../detail/base64.hpp"
#include "../detail/chrono.hpp"
#include "cursor.hpp"
#include "decode_status.hpp"
#include "number_text.hpp"
#include "rfc3339.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {

// ============================================================================ scalars

namespace detail {
// Whether an integer read from the text fits I.
template <class I>
constexpr bool fits(std::int64_t value) noexcept {
  using limits = std::numeric_limits<I>;
  if constexpr (std::is_signed_v<I>)
    return value >= static_cast<std::int64_t>(limits::min()) && value <= static_cast<std::int64_t>(limits::max());
  else
    return value >= 0 && static_cast<std::uint64_t>(value) <= static_cast<std::uint64_t>(limits::max());
}
template <class I>
constexpr bool fits(std::uint64_t value) noexcept {
  return value <= static_cast<std::uint64_t>(std::numeric_limits<I>::max());
}

// "-128 to 127": I's range, for the reason of a number beyond it.
template <class I>
std::string integer_range() {
  using limits = std::numeric_limits<I>;
  if constexpr (std::is_signed_v<I>)
    return std::to_string(static_cast<long long>(limits::min())) + " to " +
           std::to_string(static_cast<long long>(limits::max()));
  else
    return "0 to " + std::to_string(static_cast<unsigned long long>(limits::max()));
}

// A number's text for an error message: at most 40 characters of it.
inline std::string excerpt(std::string_view number) {
  constexpr std::size_t most = 40;
  return number.size() <= most ? std::string(number) : std::string(number.substr(0, most)) + "...";
}
}  // namespace detail

template <class T>
struct kind_decoder<T, codec::type_kind::boolean> {
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != token_kind::boolean) return in.fail_expected("true or false", at);
    value = at.boolean();
    in.next();
    return true;
  }
};

// A number without fraction or exponent whose value fits T exactly; -0 is 0.
template <class T>
struct kind_decoder<T, codec::type_kind::integer> {
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind == token_kind::int64 && detail::fits<T>(at.int64()))
      value = static_cast<T>(at.int64());
    else if (at.kind == token_kind::uint64 && detail::fits<T>(at.uint64()))
      value = static_cast<T>(at.uint64());
    else
      return refuse(in, at);
    in.next();
    return true;
  }

 private:
  static bool refuse(cursor& in, const token& at) {
    // A floating token written as an integer is one beyond 64 bits.
    if (at.kind == token_kind::int64 || at.kind == token_kind::uint64 || (at.kind == token_kind::floating && at.flag))
      return in.fail("integer out of range (" + detail::integer_range<T>() + ")", at);
    if (at.kind == token_kind::floating)
      return in.fail("expected an integer, got " + detail::excerpt(in.number_text(at)), at);
    return in.fail_expected("an integer", at);
  }
};

// Any number; one beyond a float's range is an error, never infinity. A float is read from the
// number's text, not from the double (which would round twice). "-0", the shortest text of -0.0,
// is -0.0 (an integer field reads it as 0).
template <class T>
struct kind_decoder<T, codec::type_kind::floating> {
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind == token_kind::int64)
      value = at.int64() == 0 && in.number_text(at).starts_with('-') ? -T{0} : static_cast<T>(at.int64());
    else if (at.kind == token_kind::uint64)
      value = static_cast<T>(at.uint64());
    else if (at.kind != token_kind::floating)
      return in.fail_expected("a number", at);
    else if (!from_floating(in, at, value))
      return in.fail("number out of range for a float", at);
    in.next();
    return true;
  }

 private:
  static bool from_floating(cursor& in, const token& at, T& value) noexcept {
    if constexpr (std::is_same_v<T, double>) {
      value = at.floating();  // the tape read it from the text, and refused it beyond range
      return true;
    } else {
      return detail::read_number(in.number_text(at), at.floating(), value);
    }
  }
};

// Its underlying integer; true/false over bool.
template <class T>
struct kind_decoder<T, codec::type_kind::enumeration> {
  using underlying = std::underlying_type_t<T>;
  static bool decode(cursor& in, T& value) {
    underlying number{};
    if (!kind_decoder<underlying>::decode(in, number)) return false;
    value = static_cast<T>(number);
    return true;
  }
};

// Its count, as its representation is read.
template <class T>
struct kind_decoder<T, codec::type_kind::duration> {
  static bool decode(cursor& in, T& value) {
    typename T::rep count{};
    if (!kind_decoder<typename T::rep>::decode(in, count)) return false;
    value = T(count);
    return true;
  }
};

// ============================================================================ strings and bytes

namespace detail {
// A string's characters assigned, charged as the binary codec charges (codec/strings.hpp).
template <class S>
bool assign_string(cursor& in, const token& at, std::string_view chars, S& target) {
  if (chars.size() > target.capacity()) {
    if (!in.charge(codec::detail::string_allocation(chars.size()), at)) return false;
    S empty(target.get_allocator());  // a heap buffer let go first, as in codec/strings.hpp
    if (target.capacity() > empty.capacity()) target.swap(empty);
  }
  target.assign(chars.data(), chars.size());
  return true;
}

// The bytes a base64 string holds (RFC 4648 section 4, padded), charged.
inline bool decode_base64(cursor& in, const token& at, std::optional<std::string>& bytes) {
  const std::string_view text = in.chars(at);
  const std::size_t most = text.size() / 4 * 3;
  if (most > std::string().capacity() && !in.charge(codec::detail::string_allocation(most), at)) return false;
  bytes = geerpc::detail::base64_decode(text);
  return bytes.has_value() || in.fail("invalid base64", at);
}

template <class Element>
inline constexpr bool is_byte_element = std::is_same_v<Element, std::byte> || std::is_same_v<Element, unsigned char>;

// std::vector<std::byte> and std::vector<unsigned char>: a base64 string, as Go writes []byte.
template <class T>
struct byte_string_decoder {
  using element = typename T::value_type;
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != token_kind::string) return in.fail_expected("a base64 string", at);
    std::optional<std::string> decoded;
    if (!decode_base64(in, at, decoded)) return false;
    // Read through one reference: clang-analyzer takes each optional::operator-> for a reallocation.
    const std::string& bytes = *decoded;
    if (bytes.size() > value.capacity()) {
      if (!in.charge(bytes.size(), sizeof(element), at)) return false;
      value.clear();
      value.reserve(bytes.size());
    }
    value.resize(bytes.size());
    if (!bytes.empty()) std::memcpy(value.data(), bytes.data(), bytes.size());
    in.next();
    return true;
  }
};
}  // namespace detail

template <class T>
struct kind_decoder<T, codec::type_kind::string> {
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != token_kind::string) return in.fail_expected("a string", at);
    if (!detail::assign_string(in, at, in.chars(at), value)) return false;
    in.next();
    return true;
  }
};

// A string of N '0'/'1' characters, bit N-1 first (std::bitset::to_string's order).
template <class T>
struct kind_decoder<T, codec::type_kind::bitset> {
  static constexpr std::size_t bits = T{}.size();

  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != token_kind::string) return in.fail_expected(expected(), at);
    const std::string_view text = in.chars(at);
    if (text.size() != bits || text.find_first_not_of("01") != std::string_view::npos)
      return in.fail("expected " + expected() + ", got " + detail::quoted(text), at);
    value.reset();
    for (std::size_t i = 0; i < bits; ++i)
      if (text[i] == '1') value.set(bits - 1 - i);
    in.next();
    return true;
  }

 private:
  static std::string expected() { return "a string of " + std::to_string(bits) + " '0' or '1' characters"; }
};

// ============================================================================ time points

// RFC 3339: "YYYY-MM-DDTHH:MM:SS[.fraction]" then "Z" or an offset; digits finer than the
// duration's period are dropped (the time rounds towards the past).
template <class T>
struct kind_decoder<T, codec::type_kind::time_point> {
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != token_kind::string) return in.fail_expected("an RFC 3339 time", at);
    const std::string_view text = in.chars(at);
    detail::rfc3339_time time;
    if (!detail::parse_rfc3339(text, time)) return in.fail("invalid RFC 3339 time " + detail::quoted(text), at);
    // An offset may move a time just past the years RFC 3339 writes: JSON could not carry it back.
    if (time.seconds < detail::earliest_rfc3339_second || time.seconds > detail::latest_rfc3339_second)
      return in.fail("time " + detail::quoted(text) + " is outside the years 0000 to 9999 in UTC", at);
    typename T::rep ticks{};
    if (!detail::ticks_since_epoch<typename T::duration>(time, ticks))
      return in.fail("time " + detail::quoted(text) + " is beyond the range of its type", at);
    value = T(typename T::duration(ticks));
    in.next();
    return true;
  }
};

}  // namespace json
GEERPC_END_NAMESPACE
