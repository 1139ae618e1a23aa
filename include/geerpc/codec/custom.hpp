// geerpc: the codec of a class with a geerpc::codec::serializer (type_kind.hpp): its value travels
// as its serializer's wire_type, made by to_wire and taken apart by from_wire.
#pragma once

#include <cstddef>
#include <exception>
#include <utility>

#include "../config.hpp"
#include "allocation.hpp"
#include "kind_codec.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

template <class T>
struct kind_codec<T, type_kind::custom> {
  using wire_type = typename serializer<T>::wire_type;

  static void encode(writer& out, const T& value) {
    value_codec<wire_type>::encode(out, serializer<T>::to_wire(value));
  }
  // A from_wire that throws refuses the value: a decode error, like any malformed input.
  static bool decode(reader& in, T& value) {
    const std::byte* at = in.position();
    if (!detail::charge_made<wire_type>(in, 1, at)) return false;
    wire_type wire{};
    if (!value_codec<wire_type>::decode(in, wire)) return false;
    try {
      value = serializer<T>::from_wire(std::move(wire));
    } catch (const std::exception&) {
      return in.fail_at("value refused by its geerpc::codec::serializer", at);
    }
    return true;
  }
};

}  // namespace codec
GEERPC_END_NAMESPACE
