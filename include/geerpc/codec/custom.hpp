// geerpc: the codec of a class with a geerpc::codec::serializer (type_kind.hpp): its value travels
// as its serializer's wire_type, made by to_wire and taken apart by from_wire; or, with a
// serializer of the lower-level form, as its own encode writes it.
#pragma once

#include <cstddef>
#include <exception>
#include <type_traits>
#include <utility>

#include "../config.hpp"
#include "allocation.hpp"
#include "kind_codec.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

inline constexpr char serializer_refusal_reason[] = "value refused by its geerpc::codec::serializer";

template <class T>
struct wire_serializer_codec {
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
      return in.fail_at(serializer_refusal_reason, at);
    }
    return true;
  }
};

// The user's code reads the bytes: a false it returns fails the reader if it has not failed yet,
// and a true after a failed read (left unchecked) is a failure too.
template <class T>
struct direct_serializer_codec {
  static void encode(writer& out, const T& value) { serializer<T>::encode(out, value); }
  static bool decode(reader& in, T& value) {
    const std::byte* at = in.position();
    if (serializer<T>::decode(in, value) && in.ok()) return true;
    return in.fail_at(serializer_refusal_reason, at);
  }
};

template <class T>
struct kind_codec<T, type_kind::custom>
    : std::conditional_t<detail::has_direct_serializer<T>, direct_serializer_codec<T>, wire_serializer_codec<T>> {};

}  // namespace codec
GEERPC_END_NAMESPACE
