// geerpc: which values the binary codec can carry, decided at compile time, and a readable
// compile error naming the offending type when one cannot be carried.
#pragma once

#include <array>
#include <bitset>
#include <boost/pfr/core.hpp>
#include <chrono>
#include <cstddef>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
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
#include "culprit_member.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

// The customization point for a class the codec cannot reflect (private members, invariants kept
// by constructors): specialize it with a wire type the codec can carry and the two conversions.
//
//   template <> struct geerpc::codec::serializer<money> {
//     using wire_type = std::tuple<std::string, std::int64_t>;  // any serializable type
//     static wire_type to_wire(const money& m) { return {m.currency(), m.cents()}; }
//     static money from_wire(wire_type&& w) { return money(std::get<0>(w), std::get<1>(w)); }
//   };
//
// The value travels as its wire_type. from_wire may throw to refuse a value (a decode error, like
// any malformed input); T must be default-constructible and move-assignable.
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
struct is_std_set : std::false_type {};
template <class K, class Cmp, class Alloc>
struct is_std_set<std::set<K, Cmp, Alloc>> : std::true_type {};
template <class K, class Cmp, class Alloc>
struct is_std_set<std::multiset<K, Cmp, Alloc>> : std::true_type {};
template <class K, class Hash, class Eq, class Alloc>
struct is_std_set<std::unordered_set<K, Hash, Eq, Alloc>> : std::true_type {};
template <class K, class Hash, class Eq, class Alloc>
struct is_std_set<std::unordered_multiset<K, Hash, Eq, Alloc>> : std::true_type {};

template <class T>
struct is_std_sequence : std::false_type {};
template <class T, class Alloc>
struct is_std_sequence<std::deque<T, Alloc>> : std::true_type {};
template <class T, class Alloc>
struct is_std_sequence<std::list<T, Alloc>> : std::true_type {};

template <class T>
struct is_std_unique_ptr : std::false_type {};
template <class T>
struct is_std_unique_ptr<std::unique_ptr<T>> : std::bool_constant<!std::is_array_v<T>> {};

template <class T>
struct is_std_bitset : std::false_type {};
template <std::size_t N>
struct is_std_bitset<std::bitset<N>> : std::true_type {};

template <class T>
struct is_view : std::false_type {};
template <>
struct is_view<std::string_view> : std::true_type {};
template <class T>
struct is_view<std::span<const T>> : std::true_type {};

template <class T>
inline constexpr bool has_serializer = requires {
  typename serializer<T>::wire_type;
};

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
                     kind == type_kind::map || kind == type_kind::set || kind == type_kind::sequence ||
                     kind == type_kind::pointer || kind == type_kind::variant || kind == type_kind::view)
    return 1;  // a one-byte count, tag or index
  else if constexpr (kind == type_kind::duration)
    return sizeof(typename T::rep);
  else if constexpr (kind == type_kind::time_point)
    return sizeof(typename T::rep);
  else if constexpr (kind == type_kind::bitset)
    return (T{}.size() + 7) / 8;
  else if constexpr (kind == type_kind::custom)
    return min_encoded_size<typename serializer<T>::wire_type>();
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
// A raw pointer member is named as member_of<T, position, type>, for the message of its own.
template <class T, std::size_t I, class Field = boost::pfr::tuple_element_t<I, T>>
using field_problem =
    std::conditional_t<std::is_pointer_v<Field>, member_of<T, I + 1, Field>, typename first_unsupported<Field>::type>;
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
                "of empty structs, and types containing themselves. "
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
