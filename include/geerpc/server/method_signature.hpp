// geerpc: how the debug page spells a method's types, "(test::Args{a: int, b: int}) -> int": each
// argument and the result by name (detail/type_name.hpp), and an aggregate's fields by name and
// type besides (codec/field_names.hpp), one level deep.
#pragma once

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../codec/field_names.hpp"
#include "../codec/type_kind.hpp"
#include "../config.hpp"
#include "../detail/type_name.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// T's name (without const or &), and for an aggregate the codec reflects, its fields:
// "test::Args{a: int, b: int}".
template <class T>
std::string described_type_name() {
  using value = std::remove_cvref_t<T>;
  std::string out = type_name<value>();
  if constexpr (codec::kind_of<value>() == codec::type_kind::aggregate) {
    constexpr auto names = codec::field_names<value>();
    out += '{';
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((out += (I == 0 ? "" : ", "), out += names[I], out += ": ",
        out += type_name<boost::pfr::tuple_element_t<I, value>>()),
       ...);
    }
    (std::make_index_sequence<names.size()>{});
    out += '}';
  }
  return out;
}

// "(A, B) -> R" of a method's argument types (a std::tuple) and result.
template <class Arguments, class Result>
std::string signature_of() {
  std::string out = "(";
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((out += (I == 0 ? "" : ", "), out += described_type_name<std::tuple_element_t<I, Arguments>>()), ...);
  }
  (std::make_index_sequence<std::tuple_size_v<Arguments>>{});
  if constexpr (std::is_void_v<Result>)
    return out + ") -> " + type_name<Result>();
  else
    return out + ") -> " + described_type_name<Result>();
}

}  // namespace detail
GEERPC_END_NAMESPACE
