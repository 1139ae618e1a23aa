// geerpc: which values the binary codec can carry, decided at compile time, and a readable
// compile error naming the offending type when one cannot be carried.
#pragma once

#include <array>
#include <boost/pfr/core.hpp>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

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
struct is_std_map : std::false_type {};
template <class K, class V, class Cmp, class Alloc>
struct is_std_map<std::map<K, V, Cmp, Alloc>> : std::true_type {};
template <class K, class V, class Hash, class Eq, class Alloc>
struct is_std_map<std::unordered_map<K, V, Hash, Eq, Alloc>> : std::true_type {};

template <class T>
struct is_std_tuple : std::false_type {};
template <class... T>
struct is_std_tuple<std::tuple<T...>> : std::true_type {};
template <class A, class B>
struct is_std_tuple<std::pair<A, B>> : std::true_type {};

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
  else if constexpr (is_reflectable_aggregate<T>())
    return type_kind::aggregate;
  else
    return type_kind::unsupported;
}

// The fewest bytes a value of T can encode to. Decoding uses it to refuse an element count that the
// remaining bytes could not possibly hold, before allocating anything.
template <class T>
constexpr std::size_t min_encoded_size();

namespace detail {
template <class Tuple, std::size_t... I>
constexpr std::size_t sum_min_sizes(std::index_sequence<I...>) {
  return (std::size_t{0} + ... + min_encoded_size<std::tuple_element_t<I, Tuple>>());
}
template <class T, std::size_t... I>
constexpr std::size_t sum_field_min_sizes(std::index_sequence<I...>) {
  return (std::size_t{0} + ... + min_encoded_size<boost::pfr::tuple_element_t<I, T>>());
}
}  // namespace detail

template <class T>
constexpr std::size_t min_encoded_size() {
  constexpr type_kind kind = kind_of<T>();
  if constexpr (kind == type_kind::boolean)
    return 1;
  else if constexpr (kind == type_kind::integer || kind == type_kind::floating || kind == type_kind::enumeration)
    return sizeof(T);
  else if constexpr (kind == type_kind::string || kind == type_kind::vector || kind == type_kind::optional ||
                     kind == type_kind::map)
    return 1;  // a one-byte count or tag
  else if constexpr (kind == type_kind::array)
    return std::tuple_size_v<T> * min_encoded_size<typename T::value_type>();
  else if constexpr (kind == type_kind::tuple)
    return detail::sum_min_sizes<T>(std::make_index_sequence<std::tuple_size_v<T>>{});
  else if constexpr (kind == type_kind::aggregate)
    return detail::sum_field_min_sizes<T>(std::make_index_sequence<boost::pfr::tuple_size_v<T>>{});
  else
    return 0;
}

// first_unsupported<T>: void when T can be carried, otherwise the innermost type that cannot (a field
// of a struct, an element of a container), so that the compile error names the real culprit.
template <class T>
struct first_unsupported;

namespace detail {
template <class... T>
struct first_non_void {
  using type = void;
};
template <class Head, class... Tail>
struct first_non_void<Head, Tail...> {
  using type = std::conditional_t<std::is_void_v<Head>, typename first_non_void<Tail...>::type, Head>;
};

template <class T, class Indices>
struct first_unsupported_field;
template <class T, std::size_t... I>
struct first_unsupported_field<T, std::index_sequence<I...>> {
  using type = typename first_non_void<typename first_unsupported<boost::pfr::tuple_element_t<I, T>>::type...>::type;
};

template <class T>
struct first_unsupported_element;
template <class... E>
struct first_unsupported_element<std::tuple<E...>> {
  using type = typename first_non_void<typename first_unsupported<E>::type...>::type;
};
template <class A, class B>
struct first_unsupported_element<std::pair<A, B>> {
  using type = typename first_non_void<typename first_unsupported<A>::type, typename first_unsupported<B>::type>::type;
};

// A container of elements that encode to zero bytes (empty structs) would let a peer claim any count
// for free; we refuse such containers instead of guessing a bound.
template <class Container, class Element>
using element_problem =
    std::conditional_t<min_encoded_size<Element>() == 0 && std::is_void_v<typename first_unsupported<Element>::type>,
                       Container, typename first_unsupported<Element>::type>;
}  // namespace detail

template <class T>
struct first_unsupported {
 private:
  static constexpr type_kind kind = kind_of<T>();
  static auto pick() {
    if constexpr (kind == type_kind::unsupported)
      return std::type_identity<T>{};
    else if constexpr (kind == type_kind::vector || kind == type_kind::array)
      return std::type_identity<detail::element_problem<T, typename T::value_type>>{};
    else if constexpr (kind == type_kind::optional)
      return std::type_identity<typename first_unsupported<typename T::value_type>::type>{};
    else if constexpr (kind == type_kind::map)
      return std::type_identity<
          typename detail::first_non_void<detail::element_problem<T, typename T::key_type>,
                                          detail::element_problem<T, typename T::mapped_type>>::type>{};
    else if constexpr (kind == type_kind::tuple)
      return std::type_identity<typename detail::first_unsupported_element<T>::type>{};
    else if constexpr (kind == type_kind::aggregate)
      return std::type_identity<
          typename detail::first_unsupported_field<T, std::make_index_sequence<boost::pfr::tuple_size_v<T>>>::type>{};
    else
      return std::type_identity<void>{};
  }

 public:
  using type = typename decltype(pick())::type;
};

template <class T>
inline constexpr bool is_serializable_v = std::is_void_v<typename first_unsupported<T>::type>;

template <class>
inline constexpr bool always_false = false;

// Instantiated only to fail: the compiler prints `Culprit` in its "required from" lines.
template <class Culprit, class Whole>
struct type_cannot_be_serialized {
  static_assert(always_false<Culprit>,
                "geerpc: a type cannot be serialized. Supported: bool, integers, float, double, enums, "
                "std::string, std::vector, std::array, std::optional, std::map, std::unordered_map, "
                "std::pair, std::tuple and aggregates (plain structs) of these. Not supported: pointers, "
                "references, const or volatile members, C arrays (use std::array), unions, classes with "
                "constructors, base classes or virtual functions, long double, enums without a fixed "
                "underlying type (write `enum E : int`), and containers of empty structs. "
                "The line 'In instantiation of type_cannot_be_serialized<Culprit, Whole>' names the "
                "culprit and the type that contains it.");
  static constexpr bool value = false;
};

// Fails the build with the message above when T cannot be carried; call it where T enters geerpc.
template <class T>
constexpr void require_serializable() {
  if constexpr (!is_serializable_v<T>) (void)type_cannot_be_serialized<typename first_unsupported<T>::type, T>::value;
}

}  // namespace codec

// A type whose values geerpc's binary codec can carry.
template <class T>
concept serializable = codec::is_serializable_v<T>;

GEERPC_END_NAMESPACE
