// geerpc: the type fingerprint of a call (docs/protocol.md, 4.1): a 32-bit hash, computed at compile
// time, of the structure of its arguments and its result as the binary codec encodes them, so
// that a call whose types are not the handler's is refused before anything is decoded.
//
// What is hashed is the call's schema (schema.hpp) without its field names: the same walk over
// the types writes both. Structure, not names: a renamed field changes nothing, and a vector, a
// deque and a list of the same elements are alike; an int32_t and a uint32_t, a duration in
// milliseconds and one in seconds, a struct and a tuple of the same members (a struct travels as
// an evolvable record, a tuple does not) are not.
#pragma once

#include <boost/pfr/core.hpp>
#include <cstddef>
#include <cstdint>
#include <ratio>
#include <string>
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

// The walk below writes a call's structure as text (docs/protocol.md, 4.1) to a sink: one that
// hashes it (here) or one that keeps it (schema.hpp). A sink takes characters, add(char), and is
// told where a field's name goes, add_field_name<Aggregate, Field>(), which this one leaves out.
struct fingerprint_hash {
  std::uint32_t value = 2166136261u;  // FNV-1a, 32 bits
  constexpr void add(char c) noexcept {
    value ^= static_cast<std::uint8_t>(c);
    value *= 16777619u;
  }
  template <class Aggregate, std::size_t Field>
  constexpr void add_field_name() noexcept {}
};

template <class Sink>
constexpr void add_text(Sink& out, const char* text) {
  for (; *text != '\0'; ++text) out.add(*text);
}
// Decimal digits, then ';'.
template <class Sink>
constexpr void add_number(Sink& out, std::uintmax_t n) {
  char digits[24] = {};
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0);
  while (count > 0) out.add(digits[--count]);
  out.add(';');
}

template <class T, class Sink>
constexpr void add_number_type(Sink& out) {
  if constexpr (std::is_same_v<T, float>) {
    out.add('f');
  } else if constexpr (std::is_same_v<T, double>) {
    out.add('d');
  } else {
    out.add(std::is_signed_v<T> ? 'i' : 'u');
    add_number(out, sizeof(T));
  }
}

// structure<T>::add(out) writes T's text: one specialization per kind, as the codecs (kind_codec.hpp),
// and for the same reason: recursion through class templates compiles in time linear in the depth.
template <class T, type_kind Kind = kind_of<T>()>
struct structure {
  template <class Sink>
  static constexpr void add(Sink&) {}  // refused by require_serializable
};

template <class T>
struct structure<T, type_kind::boolean> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    out.add('b');
  }
};
template <class T>
struct structure<T, type_kind::integer> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    add_number_type<T>(out);
  }
};
template <class T>
struct structure<T, type_kind::floating> : structure<T, type_kind::integer> {};
template <class T>
struct structure<T, type_kind::enumeration> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    if constexpr (std::is_same_v<std::underlying_type_t<T>, bool>)
      out.add('b');
    else
      add_number_type<std::underlying_type_t<T>>(out);
  }
};
template <class T>
struct structure<T, type_kind::string> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    out.add('s');
  }
};

// One element type between brackets after a prefix: "v[", "o[", "S[".
template <class Element, class Sink>
constexpr void add_bracketed(Sink& out, const char* prefix) {
  add_text(out, prefix);
  structure<Element>::add(out);
  out.add(']');
}

// A vector, a deque, a list and a span are alike on the wire; a string_view is a string.
template <class T>
struct structure<T, type_kind::vector> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    add_bracketed<std::remove_const_t<typename T::value_type>>(out, "v[");
  }
};
template <class T>
struct structure<T, type_kind::sequence> : structure<T, type_kind::vector> {};
template <class T>
struct structure<T, type_kind::view> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    if constexpr (std::is_same_v<T, std::string_view>)
      out.add('s');
    else
      structure<T, type_kind::vector>::add(out);
  }
};
template <class T>
struct structure<T, type_kind::array> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    out.add('a');
    add_number(out, std::tuple_size_v<T>);
    add_bracketed<typename T::value_type>(out, "[");
  }
};
// An optional and a unique_ptr are alike on the wire.
template <class T>
struct structure<T, type_kind::optional> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    add_bracketed<typename T::value_type>(out, "o[");
  }
};
template <class T>
struct structure<T, type_kind::pointer> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    add_bracketed<typename T::element_type>(out, "o[");
  }
};
template <class T>
struct structure<T, type_kind::map> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    add_bracketed<typename T::key_type>(out, "m[");
    add_bracketed<typename T::mapped_type>(out, "[");
  }
};
template <class T>
struct structure<T, type_kind::set> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    add_bracketed<typename T::value_type>(out, "S[");
  }
};

// A tuple's elements, "(" a "," b ")", and a struct's fields, "{" name ":" a "," ... "}" (the sink
// writes the names or not), in turn, as they encode.
template <class T>
struct structure<T, type_kind::tuple> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    out.add('(');
    add_all(out, std::make_index_sequence<std::tuple_size_v<T>>{});
    out.add(')');
  }
  template <class Sink, std::size_t... I>
  static constexpr void add_all(Sink& out, std::index_sequence<I...>) {
    ((I == 0 ? void() : out.add(','), structure<std::tuple_element_t<I, T>>::add(out)), ...);
  }
};
template <class T>
struct structure<T, type_kind::aggregate> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    out.add('{');
    add_all(out, std::make_index_sequence<boost::pfr::tuple_size_v<T>>{});
    out.add('}');
  }
  template <class Sink, std::size_t... I>
  static constexpr void add_all(Sink& out, std::index_sequence<I...>) {
    ((I == 0 ? void() : out.add(','), out.template add_field_name<T, I>(),
      structure<boost::pfr::tuple_element_t<I, T>>::add(out)),
     ...);
  }
};

// Its tag, its count's type and its period.
template <class T, class Sink>
constexpr void add_chrono(Sink& out, char tag) {
  using period = typename T::period;
  out.add(tag);
  add_number_type<typename T::rep>(out);
  add_number(out, static_cast<std::uintmax_t>(period::num));
  add_number(out, static_cast<std::uintmax_t>(period::den));
}
template <class T>
struct structure<T, type_kind::duration> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    add_chrono<T>(out, 'D');
  }
};
template <class T>
struct structure<T, type_kind::time_point> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    add_chrono<T>(out, 'P');
  }
};

template <class T>
struct structure<T, type_kind::variant> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    out.add('V');
    add_number(out, std::variant_size_v<T>);
    add_all(out, std::make_index_sequence<std::variant_size_v<T>>{});
  }
  template <class Sink, std::size_t... I>
  static constexpr void add_all(Sink& out, std::index_sequence<I...>) {
    (add_bracketed<std::variant_alternative_t<I, T>>(out, "["), ...);
  }
};
template <class T>
struct structure<T, type_kind::bitset> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    out.add('B');
    add_number(out, T{}.size());
  }
};

// Its wire_type's structure; a class that writes its own bytes is opaque: 'c' and its minimum size.
template <class T>
struct structure<T, type_kind::custom> {
  template <class Sink>
  static constexpr void add(Sink& out) {
    if constexpr (has_direct_serializer<T>) {
      out.add('c');
      add_number(out, direct_min_encoded_size<T>());
    } else {
      structure<typename serializer<T>::wire_type>::add(out);
    }
  }
};

// A call: its arguments' tuple, '>', then its result's text, or 'x' for none.
template <class Arguments, class Result, class Sink>
constexpr void add_call(Sink& out) {
  structure<Arguments>::add(out);
  out.add('>');
  if constexpr (std::is_void_v<Result>)
    out.add('x');
  else
    structure<Result>::add(out);
}

}  // namespace detail

// The fingerprint of a call taking Arguments (a std::tuple of the types sent) and returning
// Result (void for none). Never 0, which on the wire would mean none.
template <class Arguments, class Result>
constexpr std::uint32_t fingerprint() noexcept {
  detail::fingerprint_hash h;
  detail::add_call<Arguments, Result>(h);
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

// The schema of a call with these argument and result types, if the codec has schemas (a
// `schema<Arguments, Result>()` member, as binary_codec's: codec/schema.hpp); null if it has none.
template <class Codec, class Arguments, class Result>
const std::string* schema_of() {
  if constexpr (requires { Codec::template schema<Arguments, Result>(); })
    return &Codec::template schema<Arguments, Result>();
  else
    return nullptr;
}
}  // namespace detail
GEERPC_END_NAMESPACE
