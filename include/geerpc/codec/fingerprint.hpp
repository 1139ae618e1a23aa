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
#include <string_view>
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

// structure<T>::add(h) adds T's tokens: one specialization per kind, as the codecs (kind_codec.hpp),
// and for the same reason: recursion through class templates compiles in time linear in the depth.
template <class T, type_kind Kind = kind_of<T>()>
struct structure {
  static constexpr void add(fingerprint_hash&) noexcept {}  // refused by require_serializable
};

template <class T>
struct structure<T, type_kind::boolean> {
  static constexpr void add(fingerprint_hash& h) noexcept { h.add('b'); }
};
template <class T>
struct structure<T, type_kind::integer> {
  static constexpr void add(fingerprint_hash& h) noexcept { add_number_type<T>(h); }
};
template <class T>
struct structure<T, type_kind::floating> : structure<T, type_kind::integer> {};
template <class T>
struct structure<T, type_kind::enumeration> {
  static constexpr void add(fingerprint_hash& h) noexcept {
    if constexpr (std::is_same_v<std::underlying_type_t<T>, bool>)
      h.add('b');
    else
      add_number_type<std::underlying_type_t<T>>(h);
  }
};
template <class T>
struct structure<T, type_kind::string> {
  static constexpr void add(fingerprint_hash& h) noexcept { h.add('s'); }
};

// One element type between brackets after a prefix: "v[", "o[", "S[".
template <class Element>
constexpr void add_bracketed(fingerprint_hash& h, const char* prefix) noexcept {
  h.add(prefix);
  structure<Element>::add(h);
  h.add(']');
}

// A vector, a deque, a list and a span are alike on the wire; a string_view is a string.
template <class T>
struct structure<T, type_kind::vector> {
  static constexpr void add(fingerprint_hash& h) noexcept {
    add_bracketed<std::remove_const_t<typename T::value_type>>(h, "v[");
  }
};
template <class T>
struct structure<T, type_kind::sequence> : structure<T, type_kind::vector> {};
template <class T>
struct structure<T, type_kind::view> {
  static constexpr void add(fingerprint_hash& h) noexcept {
    if constexpr (std::is_same_v<T, std::string_view>)
      h.add('s');
    else
      structure<T, type_kind::vector>::add(h);
  }
};
template <class T>
struct structure<T, type_kind::array> {
  static constexpr void add(fingerprint_hash& h) noexcept {
    h.add('a');
    h.add_number(std::tuple_size_v<T>);
    add_bracketed<typename T::value_type>(h, "[");
  }
};
// An optional and a unique_ptr are alike on the wire.
template <class T>
struct structure<T, type_kind::optional> {
  static constexpr void add(fingerprint_hash& h) noexcept { add_bracketed<typename T::value_type>(h, "o["); }
};
template <class T>
struct structure<T, type_kind::pointer> {
  static constexpr void add(fingerprint_hash& h) noexcept { add_bracketed<typename T::element_type>(h, "o["); }
};
template <class T>
struct structure<T, type_kind::map> {
  static constexpr void add(fingerprint_hash& h) noexcept {
    add_bracketed<typename T::key_type>(h, "m[");
    add_bracketed<typename T::mapped_type>(h, "[");
  }
};
template <class T>
struct structure<T, type_kind::set> {
  static constexpr void add(fingerprint_hash& h) noexcept { add_bracketed<typename T::value_type>(h, "S["); }
};

// A tuple's elements and a struct's fields in turn, as they encode.
template <class T>
struct structure<T, type_kind::tuple> {
  static constexpr void add(fingerprint_hash& h) noexcept {
    add_all(h, std::make_index_sequence<std::tuple_size_v<T>>{});
  }
  template <std::size_t... I>
  static constexpr void add_all(fingerprint_hash& h, std::index_sequence<I...>) noexcept {
    (structure<std::tuple_element_t<I, T>>::add(h), ...);
  }
};
template <class T>
struct structure<T, type_kind::aggregate> {
  static constexpr void add(fingerprint_hash& h) noexcept {
    add_all(h, std::make_index_sequence<boost::pfr::tuple_size_v<T>>{});
  }
  template <std::size_t... I>
  static constexpr void add_all(fingerprint_hash& h, std::index_sequence<I...>) noexcept {
    (structure<boost::pfr::tuple_element_t<I, T>>::add(h), ...);
  }
};

// Its tag, its count's type and its period.
template <class T>
constexpr void add_chrono(fingerprint_hash& h, char tag) noexcept {
  using period = typename T::period;
  h.add(tag);
  add_number_type<typename T::rep>(h);
  h.add_number(static_cast<std::uintmax_t>(period::num));
  h.add_number(static_cast<std::uintmax_t>(period::den));
}
template <class T>
struct structure<T, type_kind::duration> {
  static constexpr void add(fingerprint_hash& h) noexcept { add_chrono<T>(h, 'D'); }
};
template <class T>
struct structure<T, type_kind::time_point> {
  static constexpr void add(fingerprint_hash& h) noexcept { add_chrono<T>(h, 'P'); }
};

template <class T>
struct structure<T, type_kind::variant> {
  static constexpr void add(fingerprint_hash& h) noexcept {
    h.add('V');
    h.add_number(std::variant_size_v<T>);
    add_all(h, std::make_index_sequence<std::variant_size_v<T>>{});
  }
  template <std::size_t... I>
  static constexpr void add_all(fingerprint_hash& h, std::index_sequence<I...>) noexcept {
    (add_bracketed<std::variant_alternative_t<I, T>>(h, "["), ...);
  }
};
template <class T>
struct structure<T, type_kind::bitset> {
  static constexpr void add(fingerprint_hash& h) noexcept {
    h.add('B');
    h.add_number(T{}.size());
  }
};

// Its wire_type's structure; a class that writes its own bytes is opaque: 'c' and its minimum size.
template <class T>
struct structure<T, type_kind::custom> {
  static constexpr void add(fingerprint_hash& h) noexcept {
    if constexpr (has_direct_serializer<T>) {
      h.add('c');
      h.add_number(direct_min_encoded_size<T>());
    } else {
      structure<typename serializer<T>::wire_type>::add(h);
    }
  }
};

}  // namespace detail

// The fingerprint of a call taking Arguments (a std::tuple of the types sent) and returning
// Result (void for none). Never 0, which on the wire would mean none.
template <class Arguments, class Result>
constexpr std::uint32_t fingerprint() noexcept {
  detail::fingerprint_hash h;
  detail::structure<Arguments>::add(h);
  h.add('>');
  if constexpr (std::is_void_v<Result>)
    h.add('x');
  else
    detail::structure<Result>::add(h);
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
