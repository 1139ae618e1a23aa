// geerpc: which values the binary codec can carry, decided at compile time, and a readable
// compile error naming the offending type when one cannot be carried.
#pragma once

#include <boost/pfr/core.hpp>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "culprit_member.hpp"
#include "encoded_size.hpp"
#include "type_kind.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {
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
// A raw pointer member the codec cannot carry (one with a serializer of its own can travel) is
// named as member_of<T, position, type>, for the message of its own.
template <class T, std::size_t I, class Field = boost::pfr::tuple_element_t<I, T>,
          class Problem = typename first_unsupported<Field>::type>
using field_problem =
    std::conditional_t<std::is_pointer_v<Field> && !std::is_void_v<Problem>, member_of<T, I + 1, Field>, Problem>;
template <class T, std::size_t... I>
struct first_unsupported_field<T, std::index_sequence<I...>> {
  using type = typename first_non_void<field_problem<T, I>...>::type;
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

// A value the decoder makes before filling it in (a variant's alternative, what a unique_ptr owns,
// a class with a serializer) must be default-constructible.
template <class T>
using made_problem = std::conditional_t<std::is_default_constructible_v<T>, typename first_unsupported<T>::type, T>;

template <class T>
struct first_unsupported_alternative;
template <class... E>
struct first_unsupported_alternative<std::variant<E...>> {
  using type = typename first_non_void<made_problem<E>...>::type;
};

// A duration's count travels as its representation: an integer or floating-point number.
template <class Rep>
inline constexpr bool is_count_type =
    std::is_arithmetic_v<Rep> && !std::is_same_v<Rep, bool> &&
    (std::is_integral_v<Rep> || std::is_same_v<Rep, float> || std::is_same_v<Rep, double>);

// A container of elements that encode to zero bytes (empty tuples) would let a peer claim any count
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
    else if constexpr (kind == type_kind::duration || kind == type_kind::time_point)
      return std::type_identity<std::conditional_t<detail::is_count_type<typename T::rep>, void, T>>{};
    else if constexpr (kind == type_kind::variant)
      return std::type_identity<typename detail::first_unsupported_alternative<T>::type>{};
    else if constexpr (kind == type_kind::set || kind == type_kind::sequence)
      return std::type_identity<detail::element_problem<T, typename T::value_type>>{};
    else if constexpr (kind == type_kind::pointer)
      return std::type_identity<detail::made_problem<typename T::element_type>>{};
    else if constexpr (kind == type_kind::view)
      return std::type_identity<detail::element_problem<T, typename T::value_type>>{};
    else if constexpr (kind == type_kind::custom && detail::has_direct_serializer<T>)
      return std::type_identity<std::conditional_t<std::is_default_constructible_v<T>, void, T>>{};
    else if constexpr (kind == type_kind::custom)
      return std::type_identity<
          std::conditional_t<std::is_default_constructible_v<T>,
                             typename first_unsupported<typename serializer<T>::wire_type>::type, T>>{};
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

namespace detail {
// The culprits with a message of their own.
template <class T>
inline constexpr bool is_other_clock_time_point = [] {
  if constexpr (is_std_time_point<T>::value)
    return !std::is_same_v<typename T::clock, std::chrono::system_clock>;
  else
    return false;
}();
template <class T>
inline constexpr bool is_aggregate_with_c_array = [] {
  if constexpr (is_reflectable_aggregate<T>() && !has_serializer<T>)
    return has_c_array_member<T>();
  else
    return false;
}();
// An aggregate that only a reference member keeps from being reflected (it has no default).
template <class T>
constexpr bool may_have_reference_member() {
  if constexpr (!std::is_class_v<T> || !std::is_aggregate_v<T> || std::is_polymorphic_v<T> || has_serializer<T>)
    return false;
  else
    return !std::is_default_constructible_v<T> && !requires { T{any_base_of<T>{}}; };
}
}  // namespace detail

// Instantiated only to fail: the compiler prints `Culprit` in its "required from" lines.
template <class Culprit, class Whole>
struct type_cannot_be_serialized {
  static_assert(always_false<Culprit>,
                "geerpc: a type cannot be serialized. Supported: bool, integers, float, double, enums, "
                "std::string, std::vector, std::array, std::optional, std::map, std::unordered_map, "
                "std::set, std::multiset, std::unordered_set, std::unordered_multiset, std::deque, "
                "std::list, std::unique_ptr, std::variant, std::bitset, std::pair, std::tuple, "
                "std::chrono::duration (of an integer or floating-point count), "
                "std::chrono::system_clock time points, aggregates (plain structs) of these, and classes "
                "with a geerpc::codec::serializer specialization. Not supported: raw pointers, "
                "references, const or volatile members, C arrays (use std::array), unions, classes with "
                "constructors, base classes or virtual functions (write a geerpc::codec::serializer), "
                "long double, enums without a fixed underlying type (write `enum E : int`), containers "
                "of empty tuples, and types containing themselves. "
                "The line 'In instantiation of type_cannot_be_serialized<Culprit, Whole>' names the "
                "culprit and the type that contains it.");
  static constexpr bool value = false;
};

template <class Culprit, class Whole>
struct time_point_of_another_clock_cannot_be_serialized {
  static_assert(always_false<Culprit>,
                "geerpc: only std::chrono::system_clock time points can be serialized: a steady_clock "
                "(or other clock's) time point counts from an epoch that means nothing in another "
                "process. Send a duration (the time left, say), or a system_clock time point.");
  static constexpr bool value = false;
};

// member_of<T, position, type> of T's first reference member; void when T has none that is found.
template <class T>
struct reference_member_of {
  static auto pick() {
    if constexpr (detail::may_have_reference_member<T>())
      return detail::reference_member<T>();
    else
      return std::type_identity<void>{};
  }
  using type = typename decltype(pick())::type;
};

// Fails the build with the message above when T cannot be carried; call it where T enters geerpc.
template <class T>
constexpr void require_serializable() {
  if constexpr (!is_serializable_v<T>) {
    using culprit = typename first_unsupported<T>::type;
    if constexpr (is_member_of<culprit>::value)
      (void)culprit::is_a_raw_pointer::value;
    else if constexpr (detail::is_other_clock_time_point<culprit>)
      (void)time_point_of_another_clock_cannot_be_serialized<culprit, T>::value;
    else if constexpr (detail::is_aggregate_with_c_array<culprit>)
      (void)member_of<culprit, detail::first_c_array_member<culprit, boost::pfr::tuple_size_v<culprit>>(),
                      c_array>::is_a_c_array::value;
    else if constexpr (!std::is_void_v<typename reference_member_of<culprit>::type>)
      (void)reference_member_of<culprit>::type::is_a_reference::value;
    else
      (void)type_cannot_be_serialized<culprit, T>::value;
  }
}

// A value decoding can fill: a view (std::string_view, std::span) only ever encodes.
template <class T>
struct view_cannot_be_decoded {
  static_assert(always_false<T>,
                "geerpc: std::string_view and std::span can be a handler's parameters and a call's "
                "arguments, not results or members of what is decoded: use std::string or std::vector");
  static constexpr bool value = false;
};

}  // namespace codec

// A type whose values geerpc's binary codec can carry.
template <class T>
concept serializable = codec::is_serializable_v<T>;

GEERPC_END_NAMESPACE
