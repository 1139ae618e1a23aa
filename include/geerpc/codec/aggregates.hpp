// geerpc: the codecs of values made of members: std::pair and std::tuple (the elements in order),
// and plain aggregates (the fields in declaration order, through Boost.PFR). No count, no prefix.
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

template <class T>
struct kind_codec<T, type_kind::aggregate> {
  static void encode(writer& out, const T& value) {
    boost::pfr::for_each_field(
        value, [&](const auto& field) { value_codec<std::remove_cvref_t<decltype(field)>>::encode(out, field); });
  }
  static bool decode(reader& in, T& value) {
    bool ok = true;
    boost::pfr::for_each_field(
        value, [&](auto& field) { ok = ok && value_codec<std::remove_cvref_t<decltype(field)>>::decode(in, field); });
    return ok;
  }
};

}  // namespace codec
GEERPC_END_NAMESPACE
