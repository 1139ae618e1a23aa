// geerpc: std::map, std::set and std::multiset, std::deque, std::list and std::bitset recognised by
// their shape (their template parameters and the members the standard gives them), not by name, so
// that the codec need not include <map>, <set>, <deque>, <list> and <bitset>: 12,800 preprocessed
// lines in every source that includes geerpc, most of which send none of them. A source that sends
// one has included its header. A class template of exactly the same shape (the same parameters,
// member types and the members checked here) is taken for the standard one, and must behave as
// it does: the codec uses only those members.
#pragma once

#include <concepts>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {
namespace detail {

// Map<K, V, Compare, Allocator> with unique keys: std::multimap's insert returns an iterator alone.
template <class T, class K, class V, class Compare, class Allocator>
concept ordered_map_shape = requires(T& map, const typename T::value_type& item) {
  requires std::is_same_v<typename T::key_type, K> && std::is_same_v<typename T::mapped_type, V>;
  requires std::is_same_v<typename T::key_compare, Compare> && std::is_same_v<typename T::allocator_type, Allocator>;
  requires std::is_same_v<typename T::value_type, std::pair<const K, V>>;
  { map.insert(item) } -> std::same_as<std::pair<typename T::iterator, bool>>;
};

// Set<K, Compare, Allocator>, with unique keys or not (std::set, std::multiset).
template <class T, class K, class Compare, class Allocator>
concept ordered_set_shape = requires(T& set, const K& key) {
  requires std::is_same_v<typename T::key_type, K> && std::is_same_v<typename T::value_type, K>;
  requires std::is_same_v<typename T::key_compare, Compare> && std::is_same_v<typename T::allocator_type, Allocator>;
  set.insert(key);
  set.lower_bound(key);
};

// Sequence<E, Allocator> with both ends open: std::deque (indexed, shrinks to fit) or std::list
// (spliced). std::vector has no push_front, std::forward_list no push_back.
template <class T, class E, class Allocator>
concept double_ended_shape = requires(T& sequence, E&& item) {
  requires std::is_same_v<typename T::value_type, E> && std::is_same_v<typename T::allocator_type, Allocator>;
  sequence.push_front(std::move(item));
  sequence.push_back(std::move(item));
  { sequence.size() } -> std::same_as<typename T::size_type>;
};
template <class T>
concept deque_shape = requires(T& sequence) {
  sequence.shrink_to_fit();
  sequence[0];
};
template <class T>
concept list_shape = requires(T& sequence) {
  sequence.splice(sequence.begin(), sequence);
};

// Bitset<N>: bits tested and set one by one, through a proxy reference.
template <class T>
concept bitset_shape = requires(T& bits, const T& constant) {
  typename T::reference;
  { constant.size() } -> std::same_as<std::size_t>;
  { constant.test(std::size_t{}) } -> std::same_as<bool>;
  bits.set(std::size_t{}, true);
  bits.reset();
};

template <class T>
struct is_std_ordered_map : std::false_type {};
template <template <class, class, class, class> class Map, class K, class V, class Compare, class Allocator>
struct is_std_ordered_map<Map<K, V, Compare, Allocator>>
    : std::bool_constant<ordered_map_shape<Map<K, V, Compare, Allocator>, K, V, Compare, Allocator>> {};

template <class T>
struct is_std_ordered_set : std::false_type {};
template <template <class, class, class> class Set, class K, class Compare, class Allocator>
struct is_std_ordered_set<Set<K, Compare, Allocator>>
    : std::bool_constant<ordered_set_shape<Set<K, Compare, Allocator>, K, Compare, Allocator>> {};

template <class T>
struct is_std_sequence : std::false_type {};
template <template <class, class> class Sequence, class E, class Allocator>
struct is_std_sequence<Sequence<E, Allocator>>
    : std::bool_constant<double_ended_shape<Sequence<E, Allocator>, E, Allocator> &&
                         (deque_shape<Sequence<E, Allocator>> || list_shape<Sequence<E, Allocator>>)> {};

template <class T>
struct is_std_bitset : std::false_type {};
template <template <std::size_t> class Bitset, std::size_t N>
struct is_std_bitset<Bitset<N>> : std::bool_constant<bitset_shape<Bitset<N>>> {};

}  // namespace detail
}  // namespace codec
GEERPC_END_NAMESPACE
