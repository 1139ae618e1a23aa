// geerpc: the codecs of std::string (a varint byte count, then the bytes) and of the views that
// encode as a string or a vector: std::string_view and std::span<const T>, sent, never decoded.
#pragma once

#include <cstddef>
#include <string_view>
#include <type_traits>

#include "../config.hpp"
#include "allocation.hpp"
#include "kind_codec.hpp"
#include "serializable.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

template <class T>
struct kind_codec<T, type_kind::string> {
  static void encode(writer& out, const T& value) {
    out.varint(value.size());
    out.raw(value.data(), value.size());
  }
  static bool decode(reader& in, T& value) {
    const std::byte* start = in.position();
    std::size_t size = 0;
    if (!in.count(size, 1)) return false;
    if (size > value.capacity()) {
      if (!in.charge(detail::string_allocation(size), start)) return false;
      // Grown from a buffer of its own, a string may take twice that buffer; from the inline one,
      // what was charged. So a heap buffer is let go first (swapped away: move-assigning an empty
      // string would keep it).
      T empty(value.get_allocator());
      if (value.capacity() > empty.capacity()) value.swap(empty);
    }
    const std::byte* at = in.take(size);
    if (at == nullptr) return false;
    value.assign(reinterpret_cast<const char*>(at), size);
    return true;
  }
};

// A string_view as a string; a span as the vector it views.
template <class T>
struct kind_codec<T, type_kind::view> {
  static void encode(writer& out, const T& value) {
    if constexpr (std::is_same_v<T, std::string_view>) {
      out.varint(value.size());
      out.raw(value.data(), value.size());
    } else {
      using element = std::remove_const_t<typename T::element_type>;
      out.varint(value.size());
      if constexpr (detail::copies_as_block<element>)
        out.raw(value.data(), value.size() * sizeof(element));
      else
        for (std::size_t i = 0; i < value.size(); ++i) value_codec<element>::encode(out, value[i]);
    }
  }
  static bool decode(reader&, T&) { return view_cannot_be_decoded<T>::value; }
};

}  // namespace codec
GEERPC_END_NAMESPACE
