// geerpc: the codecs of associative containers: std::map and std::unordered_map (a varint pair
// count, then key, value, key, value...), and the sets (a varint count, then each element). A key
// that repeats is refused, except in a multiset.
#pragma once

#include <cstddef>
#include <utility>

#include "../config.hpp"
#include "allocation.hpp"
#include "kind_codec.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {
namespace detail {
// Reserves an unordered container's buckets once, charged, so that its table never grows (and
// holds two bucket arrays) while filling; an ordered one has nothing to reserve.
template <class T>
bool reserve_buckets(reader& in, T& value, std::size_t size, const std::byte* start) {
  if constexpr (requires { value.reserve(size); }) {
    if (size != 0) {
      if (!in.charge(bucket_allocation(size), start)) return false;
      value.reserve(size);
    }
  }
  return true;
}
}  // namespace detail

template <class T>
struct kind_codec<T, type_kind::map> {
  using key_type = typename T::key_type;
  using mapped_type = typename T::mapped_type;

  static void encode(writer& out, const T& value) {
    out.varint(value.size());
    for (const auto& [key, mapped] : value) {
      value_codec<key_type>::encode(out, key);
      value_codec<mapped_type>::encode(out, mapped);
    }
  }
  static bool decode(reader& in, T& value) {
    const std::byte* start = in.position();
    std::size_t size = 0;
    if (!in.count(size, min_encoded_size<key_type>() + min_encoded_size<mapped_type>())) return false;
    // Every node is charged before the first is made (a duplicate key's node is made, then freed).
    if (!in.charge(size, detail::map_node_allocation<typename T::value_type>(), start) ||
        !detail::charge_made<key_type, mapped_type>(in, size, start))
      return false;
    value.clear();
    if (!detail::reserve_buckets(in, value, size, start)) return false;
    for (std::size_t i = 0; i < size; ++i) {
      const std::byte* at = in.position();
      key_type key{};
      mapped_type mapped{};
      if (!value_codec<key_type>::decode(in, key) || !value_codec<mapped_type>::decode(in, mapped)) return false;
      if (!value.emplace(std::move(key), std::move(mapped)).second) return in.fail_at("duplicate map key", at);
    }
    return true;
  }
};

template <class T>
struct kind_codec<T, type_kind::set> {
  using key_type = typename T::value_type;
  static constexpr bool unique = requires(T & value) { value.emplace(std::declval<key_type>()).second; };

  static void encode(writer& out, const T& value) {
    out.varint(value.size());
    for (const auto& item : value) value_codec<key_type>::encode(out, item);
  }
  static bool decode(reader& in, T& value) {
    const std::byte* start = in.position();
    std::size_t size = 0;
    if (!in.count(size, min_encoded_size<key_type>())) return false;
    if (!in.charge(size, detail::map_node_allocation<key_type>(), start) ||
        !detail::charge_made<key_type>(in, size, start))
      return false;
    value.clear();
    if (!detail::reserve_buckets(in, value, size, start)) return false;
    for (std::size_t i = 0; i < size; ++i) {
      const std::byte* at = in.position();
      key_type key{};
      if (!value_codec<key_type>::decode(in, key)) return false;
      if constexpr (unique) {
        if (!value.emplace(std::move(key)).second) return in.fail_at("duplicate set element", at);
      } else {
        value.emplace(std::move(key));
      }
    }
    return true;
  }
};

}  // namespace codec
GEERPC_END_NAMESPACE
