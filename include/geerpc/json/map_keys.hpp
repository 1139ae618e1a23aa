// geerpc: the form a map takes in JSON by the type of its keys (docs/protocol.md 8.1), one rule for
// the encoder and the decoder: an object keyed by the strings, or by the integers in decimal, or an
// array of [key, value] pairs.
#pragma once

#include <string_view>
#include <type_traits>

#include "../codec/type_kind.hpp"
#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {
namespace detail {

enum class map_keys { string, integer, pair };

// How a map's keys are written and read: an object's keys, as they are (strings, and a view of one,
// which is only ever written) or in decimal (integers, and enums not over bool, as Go writes
// map[int]T); any other map is an array of [key, value].
template <class K>
constexpr map_keys map_keys_of() {
  constexpr codec::type_kind kind = codec::kind_of<K>();
  if constexpr (kind == codec::type_kind::string || std::is_same_v<K, std::string_view>)
    return map_keys::string;
  else if constexpr (kind == codec::type_kind::integer)
    return map_keys::integer;
  else if constexpr (kind == codec::type_kind::enumeration)
    return std::is_same_v<std::underlying_type_t<K>, bool> ? map_keys::pair : map_keys::integer;
  else
    return map_keys::pair;
}

}  // namespace detail
}  // namespace json
GEERPC_END_NAMESPACE
