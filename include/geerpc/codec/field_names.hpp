// geerpc: the names of an aggregate's fields, at compile time (field_names<T>()), for what shows a
// struct to people and to other programs: the debug page, and what matches fields by name.
//
// Where the Boost.PFR found has names (Boost 1.84, PFR 2.2), they are its. Otherwise (Debian 12's
// Boost 1.81) the same C++20 technique, here: a reference to each field of an object declared and
// never defined, bound by PFR's structured bindings in a constant expression, is a template
// argument, and the compiler's spelling of that template's specialisation (__PRETTY_FUNCTION__)
// ends with the field's name: "...value.ns::Put::key)}" (GCC 12), "...value.key}" (Clang 14).
//
// A type's names may be given instead, as geerpc::codec::serializer gives its encoding:
//
//   template <> struct geerpc::codec::field_naming<legacy_point> {
//     static constexpr std::array<std::string_view, 2> names{"X", "Y"};
//   };
//
// one per field, in order, each a non-empty identifier, none twice (checked at compile time).
#pragma once

#include <array>
#include <boost/pfr/core.hpp>
#include <cstddef>
#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>

#if __has_include(<boost/pfr/core_name.hpp>)
#include <boost/pfr/core_name.hpp>
#endif

#include "../config.hpp"
#include "../detail/type_name.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

// The user's names for T's fields (above); the primary template gives none.
template <class T>
struct field_naming;

namespace detail {

template <class T>
inline constexpr bool has_field_naming = requires {
  { field_naming<T>::names.size() } -> std::convertible_to<std::size_t>;
};

constexpr bool is_identifier_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
// Whether `name` is a C++ identifier: what a field is named, and what tools may key on.
constexpr bool is_identifier(std::string_view name) noexcept {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (const char c : name)
    if (!is_identifier_char(c)) return false;
  return true;
}

template <std::size_t N>
constexpr bool are_field_names(const std::array<std::string_view, N>& names) noexcept {
  for (std::size_t i = 0; i < N; ++i) {
    if (!is_identifier(names[i])) return false;
    for (std::size_t j = 0; j < i; ++j)
      if (names[i] == names[j]) return false;
  }
  return true;
}

#if defined(BOOST_PFR_CORE_NAME_ENABLED) && BOOST_PFR_CORE_NAME_ENABLED
inline constexpr bool pfr_has_names = true;
#else
inline constexpr bool pfr_has_names = false;
#endif

// The field's name at the end of a __PRETTY_FUNCTION__ whose template argument P points at it: the
// identifier before the closing ")}" (GCC) or "}" (Clang) of P's value, whose text may hold braces
// of its own ("{anonymous}::", GCC's name of an unnamed namespace).
constexpr std::string_view name_at_end(std::string_view spelled) noexcept {
  const std::string_view argument = geerpc::detail::pretty_parameter(spelled, "P = ");
  std::size_t end = argument.size();
  while (end > 0 && (argument[end - 1] == '}' || argument[end - 1] == ')' || argument[end - 1] == ' ')) --end;
  std::size_t begin = end;
  while (begin > 0 && is_identifier_char(argument[begin - 1])) --begin;
  return argument.substr(begin, end - begin);
}

// An object of T, declared and never defined: only the addresses of its fields are taken, in
// constant expressions. In a wrapper, so that T need not be constructible.
template <class T>
struct declared_only {
  const T value;
};
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wundefined-var-template"
#pragma clang diagnostic ignored "-Wundefined-internal"
#endif
template <class T>
extern const declared_only<T> declared_object;

// A pointer as a class-type template argument: Clang spells a bare pointer argument by the
// object's name alone, but spells a class's pointer member as the path to the field.
template <class Field>
struct field_pointer {
  const Field* at;
};

template <auto P>
constexpr std::string_view spelled_argument() noexcept {
  return __PRETTY_FUNCTION__;
}

template <class T, std::size_t I>
constexpr const auto& declared_field() noexcept {
  return boost::pfr::detail::sequence_tuple::get<I>(boost::pfr::detail::tie_as_tuple(declared_object<T>.value));
}

template <class T, std::size_t I>
constexpr std::string_view reflected_field_name() noexcept {
  using field = std::remove_cvref_t<decltype(declared_field<T, I>())>;
  return name_at_end(spelled_argument<field_pointer<field>{std::addressof(declared_field<T, I>())}>());
}

// The name copied into an array of its own, which the returned views point into: not into the
// compiler's spelling of a function only ever evaluated at compile time (Clang 14 then compared
// such views wrongly in some translation units).
template <class T, std::size_t I>
struct stored_field_name {
  static constexpr std::size_t size = reflected_field_name<T, I>().size();
  static constexpr std::array<char, size + 1> chars = [] {
    std::array<char, size + 1> out{};
    const std::string_view name = reflected_field_name<T, I>();
    for (std::size_t i = 0; i < size; ++i) out[i] = name[i];
    return out;
  }();
  static constexpr std::string_view value{chars.data(), size};
};
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

template <class T, std::size_t... I>
constexpr std::array<std::string_view, sizeof...(I)> reflected_field_names(std::index_sequence<I...>) noexcept {
  return {stored_field_name<T, I>::value...};
}

// What this compiler spells, checked once on a known struct: a compiler whose spelling differs
// fails here, at compile time, rather than naming fields wrongly.
struct spelling_probe {
  int first_field;
  char second_2;
};

}  // namespace detail

// The names of T's fields, in order: the user's field_naming<T> where given, else reflected.
template <class T>
constexpr std::array<std::string_view, boost::pfr::tuple_size_v<T>> field_names() noexcept {
  static_assert(std::is_aggregate_v<T> && !std::is_union_v<T>, "geerpc::codec::field_names: T is not an aggregate");
  constexpr std::size_t count = boost::pfr::tuple_size_v<T>;
  if constexpr (detail::has_field_naming<T>) {
    static_assert(field_naming<T>::names.size() == count,
                  "geerpc::codec::field_naming<T>::names: one name per field of T, no more, no fewer");
    static_assert(detail::are_field_names(field_naming<T>::names),
                  "geerpc::codec::field_naming<T>::names: each a non-empty identifier, none twice");
    return field_naming<T>::names;
  } else if constexpr (detail::pfr_has_names) {
#if defined(BOOST_PFR_CORE_NAME_ENABLED) && BOOST_PFR_CORE_NAME_ENABLED
    return boost::pfr::names_as_array<T>();
#endif
  } else {
    static_assert(BOOST_PFR_USE_CPP17, "geerpc::codec::field_names needs Boost.PFR's C++17 structured bindings");
    constexpr auto probe = detail::reflected_field_names<detail::spelling_probe>(std::make_index_sequence<2>{});
    static_assert(probe[0] == "first_field" && probe[1] == "second_2",
                  "geerpc::codec::field_names: this compiler spells a field reference in a way not known here; "
                  "name the fields with geerpc::codec::field_naming<T>");
    return detail::reflected_field_names<T>(std::make_index_sequence<count>{});
  }
}

}  // namespace codec
GEERPC_END_NAMESPACE
