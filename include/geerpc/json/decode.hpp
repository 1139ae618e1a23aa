// geerpc: the JSON codec's decoder: a value from JSON text, by the rules of docs/protocol.md 8.2,
// read from the text's tape (json/tape.hpp) through a cursor. kind_decoder<T> reads the values of
// one kind (a string, a map, an aggregate...), one specialization per kind of codec/type_kind.hpp;
// recursion goes through class templates only, as in the binary codec (codec/kind_codec.hpp says
// why). Every allocation is charged against the decode's memory budget before it is made, with
// the binary codec's charges (codec/allocation.hpp), and a failure names the field it happened in.
#pragma once

#include <array>
#include <boost/pfr/core.hpp>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "../codec/allocation.hpp"
#include "../codec/custom.hpp"
#include "../codec/field_names.hpp"
#include "../codec/reader.hpp"
#include "../codec/serializable.hpp"
#include "../codec/type_kind.hpp"
#include "../config.hpp"
#include "../detail/assert.hpp"
#include "../detail/base64.hpp"
#include "../detail/chrono.hpp"
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
    std::optional<std::string> bytes;
    if (!decode_base64(in, at, bytes)) return false;
    if (bytes->size() > value.capacity()) {
      if (!in.charge(bytes->size(), sizeof(element), at)) return false;
      value.clear();
      value.reserve(bytes->size());
    }
    value.resize(bytes->size());
    if (!bytes->empty()) std::memcpy(value.data(), bytes->data(), bytes->size());
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

// ============================================================================ sequences

namespace detail {
inline std::string elements(std::size_t count) {
  return std::to_string(count) + (count == 1 ? " element" : " elements");
}

// Fails unless `at` opens an array of exactly `size` elements; `expected` says what is wanted
// ("an array of <size> elements" when empty: the text is made only for a failure).
inline bool expect_array(cursor& in, const token& at, std::size_t size, std::string_view expected = {}) {
  if (at.kind == token_kind::array_begin && at.count() == size) return true;
  const std::string wanted = expected.empty() ? "an array of " + elements(size) : std::string(expected);
  if (at.kind != token_kind::array_begin) return in.fail_expected(wanted, at);
  return in.fail("expected " + wanted + ", got an array of " + elements(at.count()), at);
}

// Charged, then reserved exactly, so that growth never takes more than was charged; each element
// made where it stays and decoded there (codec/sequences.hpp says why by index, and resize).
template <class T>
struct vector_decoder {
  using element = typename T::value_type;
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != token_kind::array_begin) return in.fail_expected("an array", at);
    const std::size_t size = at.count();
    if (size > value.capacity()) {
      if (!in.charge(size, sizeof(element), at)) return false;
      value.clear();
      value.reserve(size);
    }
    if (!in.charge_made<element>(size, at)) return false;
    value.clear();
    value.resize(size);
    in.next();
    for (std::size_t i = 0; i < size; ++i)
      if (!kind_decoder<element>::decode(in, value[i])) return false;
    in.next();
    return true;
  }
};

template <class T>
struct bool_vector_decoder {
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != token_kind::array_begin) return in.fail_expected("an array", at);
    const std::size_t size = at.count();
    value.clear();
    if (size > value.capacity()) {
      if (!in.charge(codec::detail::bool_vector_allocation(size), at)) return false;
      value.reserve(size);
    }
    in.next();
    for (std::size_t i = 0; i < size; ++i) {
      bool item = false;
      if (!kind_decoder<bool>::decode(in, item)) return false;
      value.push_back(item);
    }
    in.next();
    return true;
  }
};
}  // namespace detail

template <class T>
struct kind_decoder<T, codec::type_kind::vector>
    : std::conditional_t<detail::is_byte_element<typename T::value_type>, detail::byte_string_decoder<T>,
                         std::conditional_t<std::is_same_v<typename T::value_type, bool>,
                                            detail::bool_vector_decoder<T>, detail::vector_decoder<T>>> {};

// Exactly N elements.
template <class T>
struct kind_decoder<T, codec::type_kind::array> {
  using element = typename T::value_type;
  static constexpr std::size_t size = std::tuple_size_v<T>;

  static bool decode(cursor& in, T& value) {
    if (!detail::expect_array(in, in.peek(), size)) return false;
    in.next();
    for (std::size_t i = 0; i < size; ++i)
      if (!kind_decoder<element>::decode(in, value[i])) return false;
    in.next();
    return true;
  }
};

// A deque or a list, from an array, as codec/sequences.hpp makes them.
template <class T>
struct kind_decoder<T, codec::type_kind::sequence> {
  using element = typename T::value_type;
  static constexpr bool is_deque = requires(T & d) {
    d.push_front(std::declval<element>());
    d.shrink_to_fit();
  };

  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != token_kind::array_begin) return in.fail_expected("an array", at);
    if constexpr (is_deque)
      return decode_deque(in, value, at);
    else
      return decode_list(in, value, at);
  }

 private:
  static bool decode_deque(cursor& in, T& value, const token& at) {
    const std::size_t size = at.count();
    if (size > codec::detail::deque_limit<element>()) return in.fail_memory(at);
    if (!in.charge(codec::detail::deque_allocation<element>(size), at) || !in.charge_made<element>(size, at))
      return false;
    T filled(size, value.get_allocator());  // made at its size in one go
    in.next();
    for (std::size_t i = 0; i < size; ++i)
      if (!kind_decoder<element>::decode(in, filled[i])) return false;
    in.next();
    value.swap(filled);
    return true;
  }
  static bool decode_list(cursor& in, T& value, const token& at) {
    const std::size_t size = at.count();
    if (!in.charge(size, codec::detail::list_node_allocation<element>(), at) || !in.charge_made<element>(size, at))
      return false;
    value.clear();
    in.next();
    for (std::size_t i = 0; i < size; ++i)
      if (!kind_decoder<element>::decode(in, value.emplace_back())) return false;
    in.next();
    return true;
  }
};

// ============================================================================ alternatives

template <class T>
struct kind_decoder<T, codec::type_kind::optional> {
  using element = typename T::value_type;
  // null is the outer one empty, for an optional of an optional.
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind == token_kind::null) {
      value.reset();
      in.next();
      return true;
    }
    if (!in.charge_made<element>(1, at)) return false;
    return kind_decoder<element>::decode(in, value.emplace());
  }
};

template <class T>
struct kind_decoder<T, codec::type_kind::pointer> {
  using element = typename T::element_type;
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind == token_kind::null) {
      value.reset();
      in.next();
      return true;
    }
    if (!value) {
      if (!in.charge(codec::detail::round_up(sizeof(element), alignof(std::max_align_t)), at) ||
          !in.charge_made<element>(1, at))
        return false;
      value = std::make_unique<element>();
    }
    return kind_decoder<element>::decode(in, *value);
  }
};

// [index, value].
template <class T>
struct kind_decoder<T, codec::type_kind::variant> {
  static constexpr std::size_t alternatives = std::variant_size_v<T>;

  static bool decode(cursor& in, T& value) {
    if (!detail::expect_array(in, in.peek(), 2, "an array [index, value]")) return false;
    in.next();
    const token& index = in.peek();
    if (index.kind == token_kind::int64 && index.int64() >= 0 &&
        static_cast<std::uint64_t>(index.int64()) < alternatives) {
      in.next();
      if (!decode_alternative(in, value, static_cast<std::size_t>(index.int64()),
                              std::make_index_sequence<alternatives>{}))
        return false;
      in.next();
      return true;
    }
    if (index.kind == token_kind::int64 || index.kind == token_kind::uint64 || index.kind == token_kind::floating)
      return in.fail("variant index out of range", index);
    return in.fail_expected("a variant index", index);
  }

 private:
  // Makes alternative `chosen` and decodes into it.
  template <std::size_t... I>
  static bool decode_alternative(cursor& in, T& value, std::size_t chosen, std::index_sequence<I...>) {
    bool decoded = false;
    (void)((chosen == I &&
            (decoded = in.charge_made<std::variant_alternative_t<I, T>>(1, in.peek()) &&
                       kind_decoder<std::variant_alternative_t<I, T>>::decode(in, value.template emplace<I>()),
             true)) ||
           ...);
    return decoded;
  }
};

// ============================================================================ maps and sets

namespace detail {
enum class map_keys { string, integer, pair };

// How a map's keys are read: from an object's keys, as they are (strings) or in decimal (integers,
// and enums not over bool, as Go writes map[int]T); any other map is an array of [key, value].
template <class K>
constexpr map_keys map_keys_of() {
  constexpr codec::type_kind kind = codec::kind_of<K>();
  if constexpr (kind == codec::type_kind::string)
    return map_keys::string;
  else if constexpr (kind == codec::type_kind::integer)
    return map_keys::integer;
  else if constexpr (kind == codec::type_kind::enumeration)
    return std::is_same_v<std::underlying_type_t<K>, bool> ? map_keys::pair : map_keys::integer;
  else
    return map_keys::pair;
}

// An object's key as a map's key.
template <class K, map_keys Form = map_keys_of<K>()>
struct object_key_decoder {
  static bool decode(cursor& in, const token& at, K& key) { return assign_string(in, at, in.chars(at), key); }
};
// Strictly decimal: no '+', no sign for an unsigned type, no spaces, within the type's range.
template <class K>
struct object_key_decoder<K, map_keys::integer> {
  using number = typename std::conditional_t<std::is_enum_v<K>, std::underlying_type<K>, std::type_identity<K>>::type;
  using wide = std::conditional_t<std::is_signed_v<number>, std::int64_t, std::uint64_t>;

  static bool decode(cursor& in, const token& at, K& key) {
    const std::string_view text = in.chars(at);
    wide parsed = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (error != std::errc{} || end != text.data() + text.size() || !fits<number>(parsed))
      return in.fail("map key " + quoted(text) + ": expected an integer from " + integer_range<number>(), at);
    key = static_cast<K>(parsed);
    return true;
  }
};

// An unordered container's buckets reserved once, charged (codec/associative.hpp).
template <class T>
bool reserve_buckets(cursor& in, T& value, std::size_t size, const token& at) {
  if constexpr (requires { value.reserve(size); }) {
    if (size != 0) {
      if (!in.charge(codec::detail::bucket_allocation(size), at)) return false;
      value.reserve(size);
    }
  }
  return true;
}
}  // namespace detail

// An object, or an array of [key, value] pairs (detail::map_keys_of); a key twice is an error.
template <class T>
struct kind_decoder<T, codec::type_kind::map> {
  using key_type = typename T::key_type;
  using mapped_type = typename T::mapped_type;
  static constexpr bool as_object = detail::map_keys_of<key_type>() != detail::map_keys::pair;

  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != (as_object ? token_kind::object_begin : token_kind::array_begin))
      return in.fail_expected(as_object ? "an object" : "an array of [key, value] pairs", at);
    const std::size_t size = at.count();
    // Every node is charged before the first is made, as codec/associative.hpp does.
    if (!in.charge(size, codec::detail::map_node_allocation<typename T::value_type>(), at) ||
        !in.charge_made<key_type, mapped_type>(size, at))
      return false;
    value.clear();
    if (!detail::reserve_buckets(in, value, size, at)) return false;
    in.next();
    for (std::size_t i = 0; i < size; ++i)
      if (!decode_entry(in, value)) return false;
    in.next();
    return true;
  }

 private:
  static bool decode_entry(cursor& in, T& value) {
    const token& at = in.peek();
    key_type key{};
    mapped_type mapped{};
    if constexpr (as_object) {
      if (!detail::object_key_decoder<key_type>::decode(in, at, key)) return false;
      in.next();
      if (!kind_decoder<mapped_type>::decode(in, mapped)) return false;
    } else {
      if (!detail::expect_array(in, at, 2, "a [key, value] pair")) return false;
      in.next();
      if (!kind_decoder<key_type>::decode(in, key) || !kind_decoder<mapped_type>::decode(in, mapped)) return false;
      in.next();
    }
    if (!value.emplace(std::move(key), std::move(mapped)).second) return in.fail("duplicate map key", at);
    return true;
  }
};

// An array; an element twice is an error, except in a multiset.
template <class T>
struct kind_decoder<T, codec::type_kind::set> {
  using key_type = typename T::value_type;
  static constexpr bool unique = requires(T & value) { value.emplace(std::declval<key_type>()).second; };

  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != token_kind::array_begin) return in.fail_expected("an array", at);
    const std::size_t size = at.count();
    if (!in.charge(size, codec::detail::map_node_allocation<key_type>(), at) || !in.charge_made<key_type>(size, at))
      return false;
    value.clear();
    if (!detail::reserve_buckets(in, value, size, at)) return false;
    in.next();
    for (std::size_t i = 0; i < size; ++i) {
      const token& element = in.peek();
      key_type key{};
      if (!kind_decoder<key_type>::decode(in, key)) return false;
      if constexpr (unique) {
        if (!value.emplace(std::move(key)).second) return in.fail("duplicate set element", element);
      } else {
        value.emplace(std::move(key));
      }
    }
    in.next();
    return true;
  }
};

// ============================================================================ members

// [first, second, ...], exactly its elements.
template <class T>
struct kind_decoder<T, codec::type_kind::tuple> {
  static constexpr std::size_t size = std::tuple_size_v<T>;

  static bool decode(cursor& in, T& value) {
    if (!detail::expect_array(in, in.peek(), size)) return false;
    in.next();
    if (!decode_elements(in, value, std::make_index_sequence<size>{})) return false;
    in.next();
    return true;
  }

 private:
  template <std::size_t... I>
  static bool decode_elements([[maybe_unused]] cursor& in, [[maybe_unused]] T& value, std::index_sequence<I...>) {
    return (kind_decoder<std::tuple_element_t<I, T>>::decode(in, std::get<I>(value)) && ...);
  }
};

namespace detail {
constexpr char lower_ascii(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

constexpr bool equal_ignoring_ascii_case(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower_ascii(a[i]) != lower_ascii(b[i])) return false;
  return true;
}

// The field a key names: the one of that name, else the one of that name ignoring ASCII case (Go's
// rule); N when none.
template <std::size_t N>
constexpr std::size_t field_named(const std::array<std::string_view, N>& names, std::string_view key) noexcept {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == key) return i;
  for (std::size_t i = 0; i < N; ++i)
    if (equal_ignoring_ascii_case(names[i], key)) return i;
  return N;
}
}  // namespace detail

// An object of fields by name (codec::field_names<T>()), in any order: a key that names no field is
// skipped, whatever its value; a field no key names keeps its default; a field named twice (the
// second time perhaps in another case) is an error.
template <class T>
struct kind_decoder<T, codec::type_kind::aggregate> {
  static constexpr auto names = codec::field_names<T>();
  static constexpr std::size_t fields = names.size();

  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != token_kind::object_begin) return in.fail_expected("an object", at);
    in.next();
    std::array<bool, fields> seen{};
    for (std::size_t member = 0; member < at.count(); ++member) {
      const token& key = in.peek();
      const std::size_t field = detail::field_named(names, in.chars(key));
      in.next();
      if (field == fields) {
        in.skip();
        continue;
      }
      if (seen[field])
        return in.fail(
            "duplicate key " + detail::quoted(in.chars(key)) + " for field \"" + std::string(names[field]) + "\"", key);
      seen[field] = true;
      if (!decode_field(in, value, field, std::make_index_sequence<fields>{})) return in.in_field(names[field]);
    }
    in.next();
    return true;
  }

 private:
  template <std::size_t... I>
  static bool decode_field([[maybe_unused]] cursor& in, [[maybe_unused]] T& value, [[maybe_unused]] std::size_t field,
                           std::index_sequence<I...>) {
    bool decoded = false;
    (void)((field == I &&
            (decoded = kind_decoder<boost::pfr::tuple_element_t<I, T>>::decode(in, boost::pfr::get<I>(value)), true)) ||
           ...);
    return decoded;
  }
};

// ============================================================================ time points

namespace detail {
// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z, in seconds since 1970-01-01T00:00:00Z.
inline constexpr long long first_rfc3339_second = -62167219200;
inline constexpr long long last_rfc3339_second = 253402300799;

// A UTC time read from RFC 3339 text: seconds since 1970-01-01T00:00:00Z and nanoseconds after.
struct rfc3339_time {
  long long seconds = 0;
  std::uint32_t nanoseconds = 0;
};

constexpr bool read_digits(std::string_view text, std::size_t at, std::size_t count, unsigned& out) noexcept {
  if (at > text.size() || count > text.size() - at) return false;
  unsigned value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    value = value * 10 + static_cast<unsigned>(text[i] - '0');
  }
  out = value;
  return true;
}
constexpr bool char_at(std::string_view text, std::size_t at, char lower, char upper) noexcept {
  return at < text.size() && (text[at] == lower || text[at] == upper);
}

constexpr unsigned days_in_month(unsigned year, unsigned month) noexcept {
  constexpr std::array<unsigned, 12> days{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
  return month == 2 && leap ? 29 : days[month - 1];
}

// Days from 1970-01-01 to a proleptic Gregorian date: Howard Hinnant's days_from_civil
// (http://howardhinnant.github.io/date_algorithms.html), by hand as json/encode.hpp's inverse is.
constexpr long long days_from_civil(long long year, unsigned month, unsigned day) noexcept {
  year -= month <= 2 ? 1 : 0;
  const long long era = (year >= 0 ? year : year - 399) / 400;
  const auto year_of_era = static_cast<unsigned>(year - era * 400);                            // [0, 399]
  const unsigned day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;  // [0, 365]
  const unsigned day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + static_cast<long long>(day_of_era) - 719468;
}

// "YYYY-MM-DDTHH:MM:SS" ('T' in either case), a real date and time (no second 60): its seconds.
constexpr bool read_date_time(std::string_view text, long long& seconds) noexcept {
  unsigned year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!read_digits(text, 0, 4, year) || !char_at(text, 4, '-', '-') || !read_digits(text, 5, 2, month) ||
      !char_at(text, 7, '-', '-') || !read_digits(text, 8, 2, day) || !char_at(text, 10, 't', 'T') ||
      !read_digits(text, 11, 2, hour) || !char_at(text, 13, ':', ':') || !read_digits(text, 14, 2, minute) ||
      !char_at(text, 16, ':', ':') || !read_digits(text, 17, 2, second))
    return false;
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || hour > 23 || minute > 59 || second > 59)
    return false;
  const long long time_of_day = (hour * 60LL + minute) * 60 + second;  // in range: checked above
  seconds = days_from_civil(year, month, day) * 86400 + time_of_day;
  return true;
}

// An optional ".fraction" of 1 to 9 digits at `at`, as nanoseconds; `at` moves past it.
constexpr bool read_fraction(std::string_view text, std::size_t& at, std::uint32_t& nanoseconds) noexcept {
  nanoseconds = 0;
  if (!char_at(text, at, '.', '.')) return true;
  std::size_t digits = 0;
  for (++at; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at) {
    if (++digits > 9) return false;
    nanoseconds = nanoseconds * 10 + static_cast<std::uint32_t>(text[at] - '0');
  }
  for (std::size_t i = digits; i < 9; ++i) nanoseconds *= 10;
  return digits > 0;
}

// "Z" (either case) or "+HH:MM" / "-HH:MM", ending the text: the zone's offset from UTC in seconds.
constexpr bool read_zone(std::string_view text, std::size_t at, long long& offset) noexcept {
  offset = 0;
  if (char_at(text, at, 'z', 'Z')) return at + 1 == text.size();
  unsigned hours = 0, minutes = 0;
  if (!char_at(text, at, '+', '-') || text.size() != at + 6 || !read_digits(text, at + 1, 2, hours) ||
      !char_at(text, at + 3, ':', ':') || !read_digits(text, at + 4, 2, minutes) || hours > 23 || minutes > 59)
    return false;
  offset = (text[at] == '-' ? -1 : 1) * static_cast<long long>(hours * 3600 + minutes * 60);
  return true;
}

constexpr bool parse_rfc3339(std::string_view text, rfc3339_time& time) noexcept {
  std::size_t at = 19;
  long long seconds = 0, offset = 0;
  if (!read_date_time(text, seconds) || !read_fraction(text, at, time.nanoseconds) || !read_zone(text, at, offset))
    return false;
  time.seconds = seconds - offset;
  return true;
}

// The time as ticks of Duration since the epoch, rounded towards the past; false beyond its range.
template <class Duration>
bool ticks_since_epoch(const rfc3339_time& time, typename Duration::rep& ticks) noexcept {
  using rep = typename Duration::rep;
  using period = typename Duration::period;
  if constexpr (std::is_floating_point_v<rep>) {
    const double seconds = static_cast<double>(time.seconds) + static_cast<double>(time.nanoseconds) * 1e-9;
    const double count = seconds * static_cast<double>(period::den) / static_cast<double>(period::num);
    if (!(std::fabs(count) <= static_cast<double>(std::numeric_limits<rep>::max()))) return false;
    ticks = static_cast<rep>(count);
    return true;
  } else {
    __extension__ typedef __int128 wide;
    const wide nanoseconds = static_cast<wide>(time.seconds) * 1000000000 + time.nanoseconds;
    wide scaled = 0;
    if (__builtin_mul_overflow(nanoseconds, static_cast<wide>(period::den), &scaled)) return false;
    const wide divisor = static_cast<wide>(period::num) * 1000000000;
    const wide count = scaled / divisor - (scaled % divisor < 0 ? 1 : 0);
    if (count < static_cast<wide>(std::numeric_limits<rep>::min()) ||
        count > static_cast<wide>(std::numeric_limits<rep>::max()))
      return false;
    ticks = static_cast<rep>(count);
    return true;
  }
}
}  // namespace detail

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
    if (time.seconds < detail::first_rfc3339_second || time.seconds > detail::last_rfc3339_second)
      return in.fail("time " + detail::quoted(text) + " is outside the years 0000 to 9999 in UTC", at);
    typename T::rep ticks{};
    if (!detail::ticks_since_epoch<typename T::duration>(time, ticks))
      return in.fail("time " + detail::quoted(text) + " is beyond the range of its type", at);
    value = T(typename T::duration(ticks));
    in.next();
    return true;
  }
};

// ============================================================================ custom

namespace detail {
// Through its serializer's wire_type; a from_wire that throws refuses the value.
template <class T>
struct wire_custom_decoder {
  using wire_type = typename codec::serializer<T>::wire_type;
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (!in.charge_made<wire_type>(1, at)) return false;
    wire_type wire{};
    if (!kind_decoder<wire_type>::decode(in, wire)) return false;
    try {
      value = codec::serializer<T>::from_wire(std::move(wire));
    } catch (const std::exception&) {
      return in.fail(codec::serializer_refusal_reason, at);
    }
    return true;
  }
};

// A base64 string of the bytes its serializer's own decode reads, all of them, through a
// codec::reader whose budget is what this decode has left (and is charged what it took).
template <class T>
struct direct_custom_decoder {
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != token_kind::string) return in.fail_expected("a base64 string", at);
    std::optional<std::string> bytes;
    if (!decode_base64(in, at, bytes)) return false;
    codec::reader binary(std::as_bytes(std::span(bytes->data(), bytes->size())), in.memory_left());
    const bool decoded = codec::serializer<T>::decode(binary, value) && binary.ok();
    (void)in.charge(binary.memory_limit() - binary.memory_left(), at);  // within what was left
    if (!decoded) {
      if (binary.error() == codec::memory_limit_reason) return in.fail_memory(at);
      return in.fail(binary.ok() ? codec::serializer_refusal_reason : binary.error(), at);
    }
    if (binary.remaining() != 0) return in.fail("trailing bytes after the serializer's value", at);
    in.next();
    return true;
  }
};
}  // namespace detail

template <class T>
struct kind_decoder<T, codec::type_kind::custom>
    : std::conditional_t<codec::detail::has_direct_serializer<T>, detail::direct_custom_decoder<T>,
                         detail::wire_custom_decoder<T>> {};

// A view is what a caller sends, never what is decoded: the build fails with a message saying so.
template <class T>
struct kind_decoder<T, codec::type_kind::view> {
  static bool decode(cursor&, T&) { return codec::view_cannot_be_decoded<T>::value; }
};

// ============================================================================ entry points

namespace detail {
// Parses `text` and decodes its value (OnlyElement: the only element of its array) into `value`,
// made afresh, so that a field the text leaves out holds its default.
template <bool OnlyElement, class T>
decode_status decode_text(std::span<const std::byte> text, T& value, std::size_t max_memory) {
  codec::require_serializable<T>();
  if constexpr (codec::is_serializable_v<T>) {
    tape parsed(text, max_memory);
    if (decode_status status = parsed.parse(); !status) return status;
    cursor in(parsed);
    if constexpr (OnlyElement) {
      if (!expect_array(in, in.peek(), 1)) return in.status();
      in.next();
    }
    if (!in.charge_made<T>(1, in.peek())) return in.status();
    value = T();
    if (!decode_value(in, value)) return in.status();
    GEERPC_ASSERT(in.index() + (OnlyElement ? 1 : 0) == parsed.size(), "a JSON decode did not read its whole tape");
  }
  return {};
}
}  // namespace detail

// Decodes the JSON text `text` into `value`, made afresh (so that a field the text leaves out
// holds its default), allocating at most `max_memory` bytes, the tape's included (the heap memory
// the value holds; the object `value` itself is the caller's).
template <class T>
decode_status decode(std::span<const std::byte> text, T& value, std::size_t max_memory) {
  return detail::decode_text<false>(text, value, max_memory);
}

// The same within the default limit: 16 bytes per byte of text, plus 64 KiB (docs/protocol.md 5.6).
template <class T>
decode_status decode(std::span<const std::byte> text, T& value) {
  return decode(text, value, codec::default_memory_limit(text.size()));
}

// Decodes the only element of the array `text` holds, `[value]`: a call's one argument
// (json_codec::decode_arguments).
template <class T>
decode_status decode_only_element(std::span<const std::byte> text, T& value, std::size_t max_memory) {
  return detail::decode_text<true>(text, value, max_memory);
}
template <class T>
decode_status decode_only_element(std::span<const std::byte> text, T& value) {
  return decode_only_element(text, value, codec::default_memory_limit(text.size()));
}

}  // namespace json
GEERPC_END_NAMESPACE
