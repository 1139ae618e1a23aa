// geerpc: the type fingerprint of a call (docs/protocol.md, 4.1): a 32-bit hash, computed at compile
// time, of the structure of its arguments and its result as the binary codec encodes them, so
// that a call whose types are not the handler's is refused before anything is decoded.
//
// Structure, not names: a struct and a tuple of the same members are the same (they encode alike),
// and so are a vector, a deque and a list of the same elements; an int32_t and a uint32_t, a
// duration in milliseconds and one in seconds, are not.
#pragma once

#include <boost/pfr/core.hpp>
#include <cstddef>
#include <cstdint>
#include <ratio>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "../config.hpp"
#include "type_kind.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {
namespace detail {

// FNV-1a over the structure's tokens (docs/protocol.md, 4.1, gives them as text).
struct fingerprint_hash {
  std::uint32_t value = 2166136261u;
  constexpr void add(char c) noexcept {
    value ^= static_cast<std::uint8_t>(c);
    value *= 16777619u;
  }
  constexpr void add(const char* text) noexcept {
    for (; *text != '\0'; ++text) add(*text);
  }
  constexpr void add_number(std::uintmax_t n) noexcept {  // decimal digits, then ';'
    char digits[24] = {};
    int count = 0;
    do {
      digits[count++] = static_cast<char>('0' + n % 10);
      n /= 10;
    } while (n != 0);
    while (count > 0) add(digits[--count]);
    add(';');
  }
};

template <class T>
constexpr void add_structure(fingerprint_hash& h) noexcept;

template <class Tuple, std::size_t... I>
constexpr void add_elements(fingerprint_hash& h, std::index_sequence<I...>) noexcept {
  (add_structure<std::tuple_element_t<I, Tuple>>(h), ...);
}
template <class T, std::size_t... I>
constexpr void add_fields(fingerprint_hash& h, std::index_sequence<I...>) noexcept {
  (add_structure<boost::pfr::tuple_element_t<I, T>>(h), ...);
}
template <class V, std::size_t... I>
constexpr void add_alternatives(fingerprint_hash& h, std::index_sequence<I...>) noexcept {
  ((h.add('['), add_structure<std::variant_alternative_t<I, V>>(h), h.add(']')), ...);
}

template <class T>
constexpr void add_number_type(fingerprint_hash& h) noexcept {
  if constexpr (std::is_same_v<T, float>) {
    h.add('f');
  } else if constexpr (std::is_same_v<T, double>) {
    h.add('d');
  } else {
    h.add(std::is_signed_v<T> ? 'i' : 'u');
    h.add_number(sizeof(T));
  }
}

template <class T>
constexpr void add_structure(fingerprint_hash& h) noexcept {
  constexpr type_kind kind = kind_of<T>();
  if constexpr (kind == type_kind::boolean) {
    h.add('b');
  } else if constexpr (kind == type_kind::enumeration) {
    if constexpr (std::is_same_v<std::underlying_type_t<T>, bool>)
      h.add('b');
    else
      add_number_type<std::underlying_type_t<T>>(h);
  } else if constexpr (kind == type_kind::integer || kind == type_kind::floating) {
    add_number_type<T>(h);
  } else if constexpr (kind == type_kind::string) {
    h.add('s');
  } else if constexpr (kind == type_kind::view && std::is_same_v<T, std::string_view>) {
    h.add('s');
  } else if constexpr (kind == type_kind::vector || kind == type_kind::sequence || kind == type_kind::view) {
    h.add("v[");
    add_structure<std::remove_const_t<typename T::value_type>>(h);
    h.add(']');
  } else if constexpr (kind == type_kind::array) {
    h.add('a');
    h.add_number(std::tuple_size_v<T>);
    h.add('[');
    add_structure<typename T::value_type>(h);
    h.add(']');
  } else if constexpr (kind == type_kind::optional) {
    h.add("o[");
    add_structure<typename T::value_type>(h);
    h.add(']');
  } else if constexpr (kind == type_kind::pointer) {
    h.add("o[");
    add_structure<typename T::element_type>(h);
    h.add(']');
  } else if constexpr (kind == type_kind::map) {
    h.add("m[");
    add_structure<typename T::key_type>(h);
    h.add("][");
    add_structure<typename T::mapped_type>(h);
    h.add(']');
  } else if constexpr (kind == type_kind::set) {
    h.add("S[");
    add_structure<typename T::value_type>(h);
    h.add(']');
  } else if constexpr (kind == type_kind::tuple) {  // its elements in turn, as they encode
    add_elements<T>(h, std::make_index_sequence<std::tuple_size_v<T>>{});
  } else if constexpr (kind == type_kind::aggregate) {
    add_fields<T>(h, std::make_index_sequence<boost::pfr::tuple_size_v<T>>{});
  } else if constexpr (kind == type_kind::duration || kind == type_kind::time_point) {
    using period = typename T::period;
    h.add(kind == type_kind::duration ? 'D' : 'P');
    add_number_type<typename T::rep>(h);
    h.add_number(static_cast<std::uintmax_t>(period::num));
    h.add_number(static_cast<std::uintmax_t>(period::den));
  } else if constexpr (kind == type_kind::variant) {
    h.add('V');
    h.add_number(std::variant_size_v<T>);
    add_alternatives<T>(h, std::make_index_sequence<std::variant_size_v<T>>{});
  } else if constexpr (kind == type_kind::bitset) {
    h.add('B');
    h.add_number(T{}.size());
  } else if constexpr (kind == type_kind::custom) {
    add_structure<typename serializer<T>::wire_type>(h);
  }
}

}  // namespace detail

// The fingerprint of a call taking Arguments (a std::tuple of the types sent) and returning
// Result (void for none). Never 0, which on the wire would mean none.
template <class Arguments, class Result>
constexpr std::uint32_t fingerprint() noexcept {
  detail::fingerprint_hash h;
  detail::add_structure<Arguments>(h);
  h.add('>');
  if constexpr (std::is_void_v<Result>)
    h.add('x');
  else
    detail::add_structure<Result>(h);
  return h.value == 0 ? 1 : h.value;
}

}  // namespace codec

namespace detail {
// The fingerprint of a call with these argument and result types, if the codec has fingerprints
// (a `fingerprint<Arguments, Result>` member, as binary_codec's); 0 if it has none.
template <class Codec, class Arguments, class Result>
constexpr std::uint32_t fingerprint_of() noexcept {
  if constexpr (requires { Codec::template fingerprint<Arguments, Result>; })
    return Codec::template fingerprint<Arguments, Result>;
  else
    return 0;
}
}  // namespace detail
GEERPC_END_NAMESPACE
