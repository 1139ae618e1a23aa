// geerpc: the kind of each type the binary codec knows (a string, a map, an aggregate...), decided
// at compile time, and the user's customisation point, geerpc::codec::serializer. What a kind's
// values may hold is checked in serializable.hpp; how each kind travels, in the codec headers
// named in binary.hpp.
#pragma once

#include <array>
#include <boost/pfr/core.hpp>
#include <concepts>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "container_shape.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

class writer;
class reader;

// The customization point for a class the codec cannot reflect (private members, invariants kept
// by constructors), in one of two forms. The usual one gives a wire type the codec can carry and
// the two conversions:
//
//   template <> struct geerpc::codec::serializer<money> {
//     using wire_type = std::tuple<std::string, std::int64_t>;  // any serializable type
//     static wire_type to_wire(const money& m) { return {m.currency(), m.cents()}; }
//     static money from_wire(wire_type&& w) { return money(std::get<0>(w), std::get<1>(w)); }
//   };
//
// The value travels as its wire_type, and gets every check the codec makes. from_wire may throw to
// refuse a value (a decode error, like any malformed input).
//
// The lower-level form writes and reads the bytes itself, through the codec's writer and reader
// (codec/writer.hpp, codec/reader.hpp), as the codec's own kinds do (codec/kind_codec.hpp):
//
//   template <> struct geerpc::codec::serializer<ip4> {
//     static constexpr std::size_t min_encoded_size = 4;  // optional; 1 if not given
//     static void encode(geerpc::codec::writer& out, const ip4& a) { out.fixed(a.bits()); }
//     static bool decode(geerpc::codec::reader& in, ip4& a) {
//       std::uint32_t bits = 0;
//       if (!in.fixed(bits)) return false;
//       a = ip4(bits);
//       return true;
//     }
//   };
//
// encode writes at least min_encoded_size bytes (containers bound a peer's counts by it; builds
// with GEERPC_ASSERT on check it); decode reads with the reader's checked calls, returns false to
// refuse a value (the reader's failure, or "value refused by its geerpc::codec::serializer"), and
// charges what it allocates (in.charge(bytes, in.position())) so that the memory bound holds. The
// fingerprint sees such a class as opaque, of that minimum size. Where a serializer has both
// forms, this one is used.
//
// Either way, T must be default-constructible and move-assignable.
template <class T>
struct serializer;

enum class type_kind {
  unsupported,
  boolean,
  integer,
  floating,
  enumeration,
  string,
  vector,
  array,
  optional,
  map,
  tuple,  // std::pair and std::tuple
  aggregate,
  duration,    // std::chrono::duration
  time_point,  // std::chrono::time_point of system_clock
  variant,
  set,       // std::set, std::multiset, std::unordered_set, std::unordered_multiset
  sequence,  // std::deque, std::list
  pointer,   // std::unique_ptr
  bitset,
  view,    // std::string_view, std::span<const T>: encoded (as a string, a vector), never decoded
  custom,  // a class with a geerpc::codec::serializer
};

namespace detail {

template <class T>
struct is_std_string : std::false_type {};
template <class Traits, class Alloc>
struct is_std_string<std::basic_string<char, Traits, Alloc>> : std::true_type {};

template <class T>
struct is_std_vector : std::false_type {};
template <class T, class Alloc>
struct is_std_vector<std::vector<T, Alloc>> : std::true_type {};

template <class T>
struct is_std_array : std::false_type {};
template <class T, std::size_t N>
struct is_std_array<std::array<T, N>> : std::true_type {};

template <class T>
struct is_std_optional : std::false_type {};
template <class T>
struct is_std_optional<std::optional<T>> : std::true_type {};

template <class T>
struct is_std_map : is_std_ordered_map<T> {};
template <class K, class V, class Hash, class Eq, class Alloc>
struct is_std_map<std::unordered_map<K, V, Hash, Eq, Alloc>> : std::true_type {};

template <class T>
struct is_std_tuple : std::false_type {};
template <class... T>
struct is_std_tuple<std::tuple<T...>> : std::true_type {};
template <class A, class B>
struct is_std_tuple<std::pair<A, B>> : std::true_type {};

template <class T>
struct is_std_duration : std::false_type {};
template <class Rep, class Period>
struct is_std_duration<std::chrono::duration<Rep, Period>> : std::true_type {};

template <class T>
struct is_std_time_point : std::false_type {};
template <class Clock, class Duration>
struct is_std_time_point<std::chrono::time_point<Clock, Duration>> : std::true_type {};

template <class T>
struct is_std_variant : std::false_type {};
template <class... T>
struct is_std_variant<std::variant<T...>> : std::true_type {};

template <class T>
struct is_std_set : is_std_ordered_set<T> {};
template <class K, class Hash, class Eq, class Alloc>
struct is_std_set<std::unordered_set<K, Hash, Eq, Alloc>> : std::true_type {};
template <class K, class Hash, class Eq, class Alloc>
struct is_std_set<std::unordered_multiset<K, Hash, Eq, Alloc>> : std::true_type {};

template <class T>
struct is_std_unique_ptr : std::false_type {};
template <class T>
struct is_std_unique_ptr<std::unique_ptr<T>> : std::bool_constant<!std::is_array_v<T>> {};

template <class T>
struct is_view : std::false_type {};
template <>
struct is_view<std::string_view> : std::true_type {};
template <class T>
struct is_view<std::span<const T>> : std::true_type {};

template <class T>
inline constexpr bool has_wire_serializer = requires {
  typename serializer<T>::wire_type;
};
template <class T>
inline constexpr bool has_direct_serializer = requires(writer& out, reader& in, const T& value, T& target) {
  serializer<T>::encode(out, value);
  { serializer<T>::decode(in, target) } -> std::same_as<bool>;
};
template <class T>
inline constexpr bool has_serializer = has_wire_serializer<T> || has_direct_serializer<T>;

// The fewest bytes a class with a serializer of the lower-level form encodes to.
template <class T>
constexpr std::size_t direct_min_encoded_size() {
  if constexpr (requires { serializer<T>::min_encoded_size; })
    return serializer<T>::min_encoded_size;
  else
    return 1;
}

// Converts only to a base class of T: aggregate-initialising T from it compiles exactly when T's
// first element is a base class subobject, i.e. when T has a base.
template <class T>
struct any_base_of {
  template <class Base>
  requires(std::is_base_of_v<Base, T> && !std::is_same_v<Base, T>) operator Base()
      const;  // NOLINT: never defined, only used in unevaluated context
};

// Boost.PFR reflects "simple aggregates": no base classes, no virtual functions, no unions. (C array
// members are not detectable here; PFR reports them itself.)
template <class T>
constexpr bool is_reflectable_aggregate() {
  if constexpr (!std::is_class_v<T> || !std::is_aggregate_v<T> || std::is_polymorphic_v<T> ||
                !std::is_default_constructible_v<T>)
    return false;
  else
    return !requires { T{any_base_of<T>{}}; };
}

// Converts to any type: what Boost.PFR's count of fields initialises each one with.
struct any_field {
  template <class U>
  operator U() const;  // NOLINT: never defined, only used in unevaluated context
};

// Whether a reflectable aggregate has a C array member. Boost.PFR counts the elements of a C array
// as fields of their own (brace elision), then fails with an error of its own; parenthesised
// aggregate initialisation (C++20) elides no braces, so it refuses that many values exactly when
// some member is a C array. Compilers without it (Clang before 16) leave the report to Boost.PFR.
template <class T, std::size_t... I>
constexpr bool initialises_from(std::index_sequence<I...>) {
  return requires { T((void(I), any_field{})...); };
}
template <class T>
constexpr bool has_c_array_member() {
#if defined(__cpp_aggregate_paren_init) && __cpp_aggregate_paren_init >= 201902L
  return !initialises_from<T>(std::make_index_sequence<boost::pfr::tuple_size_v<T>>{});
#else
  return false;
#endif
}

// An enum with a fixed underlying type can hold any value of that type, so decoding cannot produce
// an invalid one. Without a fixed type (`enum E { a, b }`) the valid range is unknowable here.
template <class E>
constexpr bool has_fixed_underlying_type() {
  return requires { E{std::underlying_type_t<E>{}}; };
}

}  // namespace detail

template <class T>
constexpr type_kind kind_of() {
  using namespace detail;
  if constexpr (std::is_reference_v<T> || std::is_const_v<T> || std::is_volatile_v<T>)
    return type_kind::unsupported;
  else if constexpr (has_serializer<T>)
    return type_kind::custom;
  else if constexpr (std::is_same_v<T, bool>)
    return type_kind::boolean;
  else if constexpr (std::is_integral_v<T>)
    return type_kind::integer;
  // long double has no portable size or layout on the wire.
  else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
    return type_kind::floating;
  else if constexpr (std::is_enum_v<T>)
    return has_fixed_underlying_type<T>() ? type_kind::enumeration : type_kind::unsupported;
  else if constexpr (is_std_string<T>::value)
    return type_kind::string;
  else if constexpr (is_std_vector<T>::value)
    return type_kind::vector;
  else if constexpr (is_std_array<T>::value)
    return type_kind::array;  // before aggregate: std::array is one
  else if constexpr (is_std_optional<T>::value)
    return type_kind::optional;
  else if constexpr (is_std_map<T>::value)
    return type_kind::map;
  else if constexpr (is_std_tuple<T>::value)
    return type_kind::tuple;
  else if constexpr (is_std_duration<T>::value)
    return type_kind::duration;
  else if constexpr (is_std_time_point<T>::value)
    return std::is_same_v<typename T::clock, std::chrono::system_clock> ? type_kind::time_point
                                                                        : type_kind::unsupported;
  else if constexpr (is_std_variant<T>::value)
    return type_kind::variant;
  else if constexpr (is_std_set<T>::value)
    return type_kind::set;
  else if constexpr (is_std_sequence<T>::value)
    return type_kind::sequence;
  else if constexpr (is_std_unique_ptr<T>::value)
    return type_kind::pointer;
  else if constexpr (is_std_bitset<T>::value)
    return type_kind::bitset;
  else if constexpr (is_view<T>::value)
    return type_kind::view;
  else if constexpr (is_reflectable_aggregate<T>())
    return has_c_array_member<T>() ? type_kind::unsupported : type_kind::aggregate;
  else
    return type_kind::unsupported;
}
}  // namespace codec
GEERPC_END_NAMESPACE
