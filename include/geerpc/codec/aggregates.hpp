// geerpc: the codecs of values made of members: std::pair and std::tuple (the elements in order, no
// prefix), and plain aggregates (a byte length, then the fields in declaration order, through
// Boost.PFR).
#pragma once

#include <boost/pfr/core.hpp>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../config.hpp"
#include "kind_codec.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

template <class T>
struct kind_codec<T, type_kind::tuple> {
  static void encode(writer& out, const T& value) {
    encode_elements(out, value, std::make_index_sequence<std::tuple_size_v<T>>{});
  }
  static bool decode(reader& in, T& value) {
    return decode_elements(in, value, std::make_index_sequence<std::tuple_size_v<T>>{});
  }

 private:
  template <std::size_t... I>
  static void encode_elements(writer& out, const T& value, std::index_sequence<I...>) {
    (value_codec<std::tuple_element_t<I, T>>::encode(out, std::get<I>(value)), ...);
  }
  template <std::size_t... I>
  static bool decode_elements(reader& in, T& value, std::index_sequence<I...>) {
    return (value_codec<std::tuple_element_t<I, T>>::decode(in, std::get<I>(value)) && ...);
  }
};

// A struct is its byte length, then its fields: so a reader built with fewer trailing fields skips
// the ones it does not know, and one built with more leaves those the input ends before at their
// defaults (docs/protocol.md 5.1, "Evolving a struct"). `value` is freshly made by every caller,
// so a field left alone holds its default member initializer.
template <class T>
struct kind_codec<T, type_kind::aggregate> {
  static void encode(writer& out, const T& value) {
    const std::size_t length_at = out.begin_length();
    boost::pfr::for_each_field(
        value, [&](const auto& field) { value_codec<std::remove_cvref_t<decltype(field)>>::encode(out, field); });
    out.end_length(length_at);
  }
  static bool decode(reader& in, T& value) {
    const std::byte* outer = in.narrow_to_length();
    if (outer == nullptr) return false;
    bool ok = true;
    boost::pfr::for_each_field(value, [&](auto& field) {
      ok = ok && (in.remaining() == 0 || value_codec<std::remove_cvref_t<decltype(field)>>::decode(in, field));
    });
    in.widen(outer);
    return ok;
  }
};

}  // namespace codec
GEERPC_END_NAMESPACE
