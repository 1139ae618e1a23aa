// geerpc: the codecs of sequences: std::vector, std::deque and std::list (a varint count, then each
// element; a vector of numbers as one block), and std::array (its N elements, no count).
//
// Indexed sequences are walked by index, not by iterator: Clang 14 takes time exponential in the
// nesting depth to compile the iterator comparisons of a range-for over a vector of vectors of...
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "../config.hpp"
#include "allocation.hpp"
#include "kind_codec.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

template <class T>
struct kind_codec<T, type_kind::vector> {
  using element = typename T::value_type;
  static constexpr bool bulk = detail::copies_as_block<element>;

  static void encode(writer& out, const T& value) {
    out.varint(value.size());
    if constexpr (bulk)
      out.raw(value.data(), value.size() * sizeof(element));
    else  // the cast reads a vector<bool>'s proxies as bools
      for (std::size_t i = 0; i < value.size(); ++i)
        value_codec<element>::encode(out, static_cast<const element&>(value[i]));
  }

  // A buffer is charged, then reserved exactly, so that growth never takes more than was charged.
  static bool decode(reader& in, T& value) {
    const std::byte* start = in.position();
    std::size_t size = 0;
    if (!in.count(size, min_encoded_size<element>())) return false;
    if constexpr (std::is_same_v<element, bool>) {
      return decode_bools(in, value, size, start);
    } else {
      if (size > value.capacity()) {
        if (!in.charge(size, sizeof(element), start)) return false;
        value.clear();
        value.reserve(size);  // exactly `size` elements (growth by resize could take more)
      }
      if constexpr (bulk) {
        value.resize(size);
        return in.raw(value.data(), size * sizeof(element));
      } else {
        if (!detail::charge_made<element>(in, size, start)) return false;
        value.clear();
        // Each element is made where it will stay, within the capacity reserved, and decoded there:
        // a large one is never copied. (resize, not emplace_back per element: Clang 14 compiles
        // emplace_back's growth path in time exponential in the nesting depth of vectors.)
        value.resize(size);
        for (std::size_t i = 0; i < size; ++i)
          if (!value_codec<element>::decode(in, value[i])) return false;
        return true;
      }
    }
  }

 private:
  static bool decode_bools(reader& in, T& value, std::size_t size, const std::byte* start) {
    value.clear();
    if (size > value.capacity()) {
      if (!in.charge(detail::bool_vector_allocation(size), start)) return false;
      value.reserve(size);
    }
    for (std::size_t i = 0; i < size; ++i) {
      bool item = false;
      if (!value_codec<bool>::decode(in, item)) return false;
      value.push_back(item);
    }
    return true;
  }
};

template <class T>
struct kind_codec<T, type_kind::array> {
  using element = typename T::value_type;

  static void encode(writer& out, const T& value) {
    for (std::size_t i = 0; i < value.size(); ++i) value_codec<element>::encode(out, value[i]);
  }
  static bool decode(reader& in, T& value) {
    for (std::size_t i = 0; i < value.size(); ++i)
      if (!value_codec<element>::decode(in, value[i])) return false;
    return true;
  }
};

// A deque or a list, as a vector.
template <class T>
struct kind_codec<T, type_kind::sequence> {
  using element = typename T::value_type;
  static constexpr bool is_deque = requires(T & d) {
    d.push_front(std::declval<element>());
    d.shrink_to_fit();
  };

  static void encode(writer& out, const T& value) {
    out.varint(value.size());
    if constexpr (is_deque)
      for (std::size_t i = 0; i < value.size(); ++i) value_codec<element>::encode(out, value[i]);
    else
      for (const auto& item : value) value_codec<element>::encode(out, item);
  }
  static bool decode(reader& in, T& value) {
    const std::byte* start = in.position();
    std::size_t size = 0;
    if (!in.count(size, min_encoded_size<element>())) return false;
    if constexpr (is_deque)
      return decode_deque(in, value, size, start);
    else
      return decode_list(in, value, size, start);
  }

 private:
  static bool decode_deque(reader& in, T& value, std::size_t size, const std::byte* start) {
    if (size > detail::deque_limit<element>() || !in.charge(detail::deque_allocation<element>(size), start) ||
        !detail::charge_made<element>(in, size, start))
      return in.fail_at(memory_limit_reason, start);
    // Made at its size in one go, so that it never grows block by block and map by map.
    T filled(size, value.get_allocator());
    for (std::size_t i = 0; i < size; ++i)
      if (!value_codec<element>::decode(in, filled[i])) return false;
    value.swap(filled);
    return true;
  }
  static bool decode_list(reader& in, T& value, std::size_t size, const std::byte* start) {  // a node per element
    if (!in.charge(size, detail::list_node_allocation<element>(), start) ||
        !detail::charge_made<element>(in, size, start))
      return false;
    value.clear();
    for (std::size_t i = 0; i < size; ++i)
      if (!value_codec<element>::decode(in, value.emplace_back())) return false;
    return true;
  }
};

}  // namespace codec
GEERPC_END_NAMESPACE
