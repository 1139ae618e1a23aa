// geerpc: what decoding a value allocates, an upper bound charged against the decode's memory
// budget before each allocation is made (docs/protocol.md, 5.6).
#pragma once

#include <boost/pfr/core.hpp>
#include <climits>
#include <cstddef>
#include <limits>
#include <tuple>
#include <utility>
#include <variant>

#include "../config.hpp"
#include "reader.hpp"
#include "type_kind.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {
namespace detail {

// What the decoder charges for each allocation, an upper bound of what libstdc++ and libc++ ask of
// the allocator (the fuzzer checks it by counting): the budget must pay for the memory really taken.

// A string's buffer for `size` characters: size + 1 rounded up to 16 (libc++), or at least 31
// (libstdc++, which doubles its 15-character inline capacity on the first growth).
constexpr std::size_t string_allocation(std::size_t size) noexcept { return size + 16; }

// A vector's buffer is sizeof(T) for each element, reserved exactly; vector<bool>'s packs bits into
// words.
constexpr std::size_t bool_vector_allocation(std::size_t size) noexcept {
  constexpr std::size_t word_bits = CHAR_BIT * sizeof(std::size_t);
  return (size + word_bits - 1) / word_bits * sizeof(std::size_t);
}

constexpr std::size_t round_up(std::size_t size, std::size_t alignment) noexcept {
  return (size + alignment - 1) / alignment * alignment;
}

// One node of a std::map (three links and a colour) or std::unordered_map (a link and perhaps a
// cached hash): four pointers' room besides the key and value covers both.
template <class Value>
constexpr std::size_t map_node_allocation() noexcept {
  return round_up(4 * sizeof(void*), alignof(Value)) + round_up(sizeof(Value), alignof(void*));
}

// A node of a std::list (two links) or std::set (three links and a colour): as a map's.
template <class Value>
constexpr std::size_t list_node_allocation() noexcept {
  return map_node_allocation<Value>();
}

// What a std::deque of `size` elements made at once takes: its blocks and its map of block
// pointers. libstdc++ makes blocks of 512 bytes (or one element, if larger) and a map of at least 8
// pointers, 2 more than the blocks; libc++ makes blocks of 4096 bytes (or 16 elements, if those
// are larger than 256 bytes each).
template <class Value>
constexpr std::size_t deque_allocation(std::size_t size) noexcept {
#if defined(_LIBCPP_VERSION)
  constexpr std::size_t per_block = sizeof(Value) < 256 ? 4096 / sizeof(Value) : 16;
  const std::size_t blocks = size / per_block + 1;
  return blocks * per_block * sizeof(Value) + 2 * (blocks + 8) * sizeof(void*);
#else
  constexpr std::size_t per_block = sizeof(Value) < 512 ? 512 / sizeof(Value) : 1;
  const std::size_t blocks = size / per_block + 1;
  return blocks * per_block * sizeof(Value) + (blocks + 8) * sizeof(void*);
#endif
}

// What default-constructing a T allocates: nothing, except where a std::deque is made (libstdc++
// gives a new deque a map and one block; a variant is made holding its first alternative). Whoever
// makes values to decode into (a container its elements, a variant its alternative, a unique_ptr
// what it owns) charges for that too, so that a body of empty deques costs what it takes.
template <class T>
constexpr std::size_t default_allocation() noexcept;

template <class Tuple, std::size_t... I>
constexpr std::size_t elements_default_allocation(std::index_sequence<I...>) noexcept {
  return (std::size_t{0} + ... + default_allocation<std::tuple_element_t<I, Tuple>>());
}
template <class T, std::size_t... I>
constexpr std::size_t fields_default_allocation(std::index_sequence<I...>) noexcept {
  return (std::size_t{0} + ... + default_allocation<boost::pfr::tuple_element_t<I, T>>());
}

template <class T>
constexpr std::size_t default_allocation() noexcept {
  constexpr type_kind kind = kind_of<T>();
  if constexpr (kind == type_kind::sequence && requires(T & d) { d.shrink_to_fit(); })
    return deque_allocation<typename T::value_type>(0);
  else if constexpr (kind == type_kind::array)
    return std::tuple_size_v<T> * default_allocation<typename T::value_type>();
  else if constexpr (kind == type_kind::tuple)
    return elements_default_allocation<T>(std::make_index_sequence<std::tuple_size_v<T>>{});
  else if constexpr (kind == type_kind::aggregate)
    return fields_default_allocation<T>(std::make_index_sequence<boost::pfr::tuple_size_v<T>>{});
  else if constexpr (kind == type_kind::variant)
    return default_allocation<std::variant_alternative_t<0, T>>();
  else
    return 0;
}

// Charges what making `count` of each of Made allocates by default (nothing, for most types).
template <class... Made>
bool charge_made(reader& in, std::size_t count, const std::byte* at) noexcept {
  constexpr std::size_t each = (std::size_t{0} + ... + default_allocation<Made>());
  if constexpr (each == 0)
    return true;
  else
    return in.charge(count, each, at);
}

// A deque's elements are charged with its blocks: the count check bounds `size` by the input, so
// this cannot overflow for a body that fits in memory; it is still checked.
template <class Value>
constexpr std::size_t deque_limit() noexcept {
  return std::numeric_limits<std::size_t>::max() / 2 / (sizeof(Value) + sizeof(void*));
}

// An unordered_map's bucket array after reserve(size): a pointer per bucket, and the bucket count
// is the next prime at or above `size` (from libstdc++'s table, or exactly), at most 2 * size + 2.
constexpr std::size_t bucket_allocation(std::size_t size) noexcept { return (2 * size + 2) * sizeof(void*); }
}  // namespace detail

}  // namespace codec
GEERPC_END_NAMESPACE
