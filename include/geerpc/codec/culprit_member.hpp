// geerpc: which member of a struct keeps the codec from carrying it, named in the compile error by
// its position (from 1) and its declared type: "member_of<Args, 2, int&>::is_a_reference" reads
// "member #2 (int&) of Args is a reference". Boost 1.81's PFR has no field names (get_name came in
// 1.84), so the position it is. Only the failing path instantiates anything here.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

template <class>
inline constexpr bool member_is_fine = false;

// What a C array member's type shows as: the probes below find its position, not its type.
struct c_array;

// Member number `Number` (from 1) of `Struct`, declared as `Type`. Each nested class fails the
// build with the fix when it is instantiated, and the compiler's "In instantiation of" line names
// it in full.
template <class Struct, std::size_t Number, class Type>
struct member_of {
  struct is_a_reference {
    static_assert(member_is_fine<Type>,
                  "geerpc: a struct with a reference member cannot be serialized: hold the value "
                  "instead (std::string, not const std::string&); a handler's parameters may be "
                  "references, a struct's members may not. The line 'In instantiation of "
                  "member_of<Struct, Number, Type>::is_a_reference' names the struct, the member's "
                  "position (from 1) and its type.");
    static constexpr bool value = false;
  };
  struct is_a_raw_pointer {
    static_assert(member_is_fine<Type>,
                  "geerpc: a struct with a raw pointer member cannot be serialized: hold the value "
                  "itself, or a std::unique_ptr<T> or std::optional<T> when it may be absent. The line "
                  "'In instantiation of member_of<Struct, Number, Type>::is_a_raw_pointer' names the "
                  "struct, the member's position (from 1) and its type.");
    static constexpr bool value = false;
  };
  struct is_a_c_array {
    static_assert(member_is_fine<Type>,
                  "geerpc: a struct with a C array member cannot be serialized: use std::array<T, N> "
                  "instead of T[N]. The line 'In instantiation of member_of<Struct, Number, "
                  "c_array>::is_a_c_array' names the struct and the member's position (from 1).");
    static constexpr bool value = false;
  };
};

template <class T>
struct is_member_of : std::false_type {};
template <class Struct, std::size_t Number, class Type>
struct is_member_of<member_of<Struct, Number, Type>> : std::true_type {};

namespace detail {

// Converts to an lvalue of any type: copied into a value member, or bound to a reference member.
struct any_lvalue {
  template <class U>
  operator U&() const;  // NOLINT: never defined, only used in unevaluated context
};
// Converts to a prvalue of any type: initialises a value member, and no C array.
struct any_prvalue {
  template <class U>
  operator U() const;  // NOLINT: never defined, only used in unevaluated context
};

template <class S, std::size_t... I>
constexpr bool braces_take(std::index_sequence<I...>) {
  return requires { S{(void(I), any_lvalue{})...}; };
}

// How many members aggregate S has, counted as the most values S{...} takes (a reference member
// has no default, so fewer values may not do); 0 when that is past `limit`, or none.
template <class S, std::size_t limit = 16, std::size_t count = limit + 1>
constexpr std::size_t braced_member_count() {
  if constexpr (count == 0)
    return 0;
  else if constexpr (braces_take<S>(std::make_index_sequence<count>{}))
    return count > limit ? 0 : count;
  else
    return braced_member_count<S, limit, count - 1>();
}

// The declared types of S's members, as a std::tuple of them (a reference member's is a
// reference), for S of 1 to 16 members: structured bindings name each member's declared type.
template <class S>
auto declared_members(S& s, std::integral_constant<std::size_t, 1>) {
  auto& [a] = s;
  return std::type_identity<std::tuple<decltype(a)>>{};
}
template <class S>
auto declared_members(S& s, std::integral_constant<std::size_t, 2>) {
  auto& [a, b] = s;
  return std::type_identity<std::tuple<decltype(a), decltype(b)>>{};
}
template <class S>
auto declared_members(S& s, std::integral_constant<std::size_t, 3>) {
  auto& [a, b, c] = s;
  return std::type_identity<std::tuple<decltype(a), decltype(b), decltype(c)>>{};
}
template <class S>
auto declared_members(S& s, std::integral_constant<std::size_t, 4>) {
  auto& [a, b, c, d] = s;
  return std::type_identity<std::tuple<decltype(a), decltype(b), decltype(c), decltype(d)>>{};
}
template <class S>
auto declared_members(S& s, std::integral_constant<std::size_t, 5>) {
  auto& [a, b, c, d, e] = s;
  return std::type_identity<std::tuple<decltype(a), decltype(b), decltype(c), decltype(d), decltype(e)>>{};
}
template <class S>
auto declared_members(S& s, std::integral_constant<std::size_t, 6>) {
  auto& [a, b, c, d, e, f] = s;
  return std::type_identity<std::tuple<decltype(a), decltype(b), decltype(c), decltype(d), decltype(e), decltype(f)>>{};
}
template <class S>
auto declared_members(S& s, std::integral_constant<std::size_t, 7>) {
  auto& [a, b, c, d, e, f, g] = s;
  return std::type_identity<
      std::tuple<decltype(a), decltype(b), decltype(c), decltype(d), decltype(e), decltype(f), decltype(g)>>{};
}
template <class S>
auto declared_members(S& s, std::integral_constant<std::size_t, 8>) {
  auto& [a, b, c, d, e, f, g, h] = s;
  return std::type_identity<std::tuple<decltype(a), decltype(b), decltype(c), decltype(d), decltype(e), decltype(f),
                                       decltype(g), decltype(h)>>{};
}
template <class S>
auto declared_members(S& s, std::integral_constant<std::size_t, 9>) {
  auto& [a, b, c, d, e, f, g, h, i] = s;
  return std::type_identity<std::tuple<decltype(a), decltype(b), decltype(c), decltype(d), decltype(e), decltype(f),
                                       decltype(g), decltype(h), decltype(i)>>{};
}
template <class S>
auto declared_members(S& s, std::integral_constant<std::size_t, 10>) {
  auto& [a, b, c, d, e, f, g, h, i, j] = s;
  return std::type_identity<std::tuple<decltype(a), decltype(b), decltype(c), decltype(d), decltype(e), decltype(f),
                                       decltype(g), decltype(h), decltype(i), decltype(j)>>{};
}
template <class S>
auto declared_members(S& s, std::integral_constant<std::size_t, 11>) {
  auto& [a, b, c, d, e, f, g, h, i, j, k] = s;
  return std::type_identity<std::tuple<decltype(a), decltype(b), decltype(c), decltype(d), decltype(e), decltype(f),
                                       decltype(g), decltype(h), decltype(i), decltype(j), decltype(k)>>{};
}
template <class S>
auto declared_members(S& s, std::integral_constant<std::size_t, 12>) {
  auto& [a, b, c, d, e, f, g, h, i, j, k, l] = s;
  return std::type_identity<std::tuple<decltype(a), decltype(b), decltype(c), decltype(d), decltype(e), decltype(f),
                                       decltype(g), decltype(h), decltype(i), decltype(j), decltype(k), decltype(l)>>{};
}
template <class S>
auto declared_members(S& s, std::integral_constant<std::size_t, 13>) {
  auto& [a, b, c, d, e, f, g, h, i, j, k, l, m] = s;
  return std::type_identity<
      std::tuple<decltype(a), decltype(b), decltype(c), decltype(d), decltype(e), decltype(f), decltype(g), decltype(h),
                 decltype(i), decltype(j), decltype(k), decltype(l), decltype(m)>>{};
}
template <class S>
auto declared_members(S& s, std::integral_constant<std::size_t, 14>) {
  auto& [a, b, c, d, e, f, g, h, i, j, k, l, m, n] = s;
  return std::type_identity<
      std::tuple<decltype(a), decltype(b), decltype(c), decltype(d), decltype(e), decltype(f), decltype(g), decltype(h),
                 decltype(i), decltype(j), decltype(k), decltype(l), decltype(m), decltype(n)>>{};
}
template <class S>
auto declared_members(S& s, std::integral_constant<std::size_t, 15>) {
  auto& [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o] = s;
  return std::type_identity<
      std::tuple<decltype(a), decltype(b), decltype(c), decltype(d), decltype(e), decltype(f), decltype(g), decltype(h),
                 decltype(i), decltype(j), decltype(k), decltype(l), decltype(m), decltype(n), decltype(o)>>{};
}
template <class S>
auto declared_members(S& s, std::integral_constant<std::size_t, 16>) {
  auto& [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p] = s;
  return std::type_identity<std::tuple<decltype(a), decltype(b), decltype(c), decltype(d), decltype(e), decltype(f),
                                       decltype(g), decltype(h), decltype(i), decltype(j), decltype(k), decltype(l),
                                       decltype(m), decltype(n), decltype(o), decltype(p)>>{};
}

// Whether a member of type T keeps its struct from being made: a reference, or an aggregate that
// cannot be made either (one holding a reference member).
template <class T>
inline constexpr bool blocks_making = std::is_reference_v<T> || (std::is_class_v<T> && std::is_aggregate_v<T> &&
                                                                 !std::is_default_constructible_v<T>);

// The position (from 1) of the first type of Types that blocks_making; 0 when none does.
template <class Types, std::size_t... I>
constexpr std::size_t first_blocking(std::index_sequence<I...>) {
  std::size_t found = 0;
  ((found = found == 0 && blocks_making<std::tuple_element_t<I, Types>> ? I + 1 : found), ...);
  return found;
}

// The first reference member of aggregate S, or of the aggregate member that holds one, as
// member_of<struct, position, type>; void when none is found (or S has more members than probed).
template <class S>
auto reference_member() {
  constexpr std::size_t count = braced_member_count<S>();
  if constexpr (count == 0) {
    return std::type_identity<void>{};
  } else {
    using types =
        typename decltype(declared_members(std::declval<S&>(), std::integral_constant<std::size_t, count>{}))::type;
    constexpr std::size_t at = first_blocking<types>(std::make_index_sequence<count>{});
    if constexpr (at == 0)
      return std::type_identity<void>{};
    else if constexpr (std::is_reference_v<std::tuple_element_t<at - 1, types>>)
      return std::type_identity<member_of<S, at, std::tuple_element_t<at - 1, types>>>{};
    else
      return reference_member<std::tuple_element_t<at - 1, types>>();
  }
}

// Converts to anything but S: with one value, S(v) would otherwise be S's copy constructor, which
// takes any_prvalue through its conversion to S, whatever S's first member is.
template <class S>
struct any_prvalue_but {
  template <class U>
  requires(!std::is_same_v<std::remove_cvref_t<U>, S>) operator U()
      const;  // NOLINT: never defined, only used in unevaluated context
};

template <class S, std::size_t... I>
constexpr bool parentheses_take(std::index_sequence<I...>) {
  return requires { S((void(I), any_prvalue_but<S>{})...); };
}

// The position (from 1) of S's first C array member: S(v1, ..., vk) (C++20's parenthesised
// aggregate initialisation, which elides no braces) refuses k values exactly when member k cannot
// take one, a C array. 0 when none is found among the first `limit`.
template <class S, std::size_t limit, std::size_t k = 1>
constexpr std::size_t first_c_array_member() {
  if constexpr (k > limit)
    return 0;
  else if constexpr (!parentheses_take<S>(std::make_index_sequence<k>{}))
    return k;
  else
    return first_c_array_member<S, limit, k + 1>();
}

}  // namespace detail
}  // namespace codec
GEERPC_END_NAMESPACE
