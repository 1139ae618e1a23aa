// geerpc: whether decoding a type costs about what copying its bytes does, known at compile time:
// a client decodes such a reply straight from its receive buffer (binary_codec::cheap_to_decode).
#pragma once

#include <boost/pfr/core.hpp>
#include <cstddef>
#include <tuple>
#include <utility>

#include "../config.hpp"
#include "kind_codec.hpp"
#include "type_kind.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {
namespace detail {

// Whether decoding a T costs about what copying its encoding does: numbers, strings, vectors copied
// as one block, and optionals, arrays, tuples and aggregates of those. Anything else (a map, a
// vector of strings or of structs) works and may allocate per element, and can take many times
// longer than a copy of its bytes.
template <class T>
constexpr bool decodes_like_copy();

template <class Tuple, std::size_t... I>
constexpr bool all_decode_like_copy(std::index_sequence<I...>) {
  return (true && ... && decodes_like_copy<std::tuple_element_t<I, Tuple>>());
}
template <class T, std::size_t... I>
constexpr bool all_fields_decode_like_copy(std::index_sequence<I...>) {
  return (true && ... && decodes_like_copy<boost::pfr::tuple_element_t<I, T>>());
}

template <class T>
constexpr bool decodes_like_copy() {
  constexpr type_kind kind = kind_of<T>();
  if constexpr (kind == type_kind::boolean || kind == type_kind::integer || kind == type_kind::floating ||
                kind == type_kind::enumeration || kind == type_kind::string || kind == type_kind::duration ||
                kind == type_kind::time_point || kind == type_kind::bitset)
    return true;
  else if constexpr (kind == type_kind::vector)
    return is_memcpy_array_element<typename T::value_type>;
  else if constexpr (kind == type_kind::array || kind == type_kind::optional)
    return decodes_like_copy<typename T::value_type>();
  else if constexpr (kind == type_kind::tuple)
    return all_decode_like_copy<T>(std::make_index_sequence<std::tuple_size_v<T>>{});
  else if constexpr (kind == type_kind::aggregate)
    return all_fields_decode_like_copy<T>(std::make_index_sequence<boost::pfr::tuple_size_v<T>>{});
  else
    return false;
}

}  // namespace detail
}  // namespace codec
GEERPC_END_NAMESPACE
