// geerpc: the fewest bytes a value of each type can encode to, known at compile time.
#pragma once

#include <cstddef>
#include <tuple>

#include "../config.hpp"
#include "type_kind.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

// The fewest bytes a value of T can encode to. Decoding uses it to refuse an element count that the
// remaining bytes could not possibly hold, before allocating anything.
template <class T>
constexpr std::size_t min_encoded_size();

namespace detail {
template <class Tuple, std::size_t... I>
constexpr std::size_t sum_min_sizes(std::index_sequence<I...>) {
  return (std::size_t{0} + ... + min_encoded_size<std::tuple_element_t<I, Tuple>>());
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
  else if constexpr (kind == type_kind::custom && detail::has_direct_serializer<T>)
    return detail::direct_min_encoded_size<T>();
  else if constexpr (kind == type_kind::custom)
    return min_encoded_size<typename serializer<T>::wire_type>();
  else if constexpr (kind == type_kind::array)
    return std::tuple_size_v<T> * min_encoded_size<typename T::value_type>();
  else if constexpr (kind == type_kind::tuple)
    return detail::sum_min_sizes<T>(std::make_index_sequence<std::tuple_size_v<T>>{});
  else if constexpr (kind == type_kind::aggregate)
    return 1;  // its length: an older writer may have sent none of its fields
  else
    return 0;
}

}  // namespace codec
GEERPC_END_NAMESPACE
