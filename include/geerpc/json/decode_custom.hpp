// geerpc: the JSON decoder's classes with a serializer (codec/custom.hpp): through the serializer's
// wire_type, or, for one that reads its own bytes, from a base64 string of them.
#pragma once

#include <exception>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "../codec/custom.hpp"
#include "../codec/reader.hpp"
#include "../codec/serializable.hpp"
#include "../codec/type_kind.hpp"
#include "../config.hpp"
#include "cursor.hpp"
#include "decode_scalars.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {

// ============================================================================ custom

namespace detail {
// Through its serializer's wire_type; a from_wire that throws refuses the value.
template <class T>
struct wire_custom_decoder {
  using wire_type = typename codec::serializer<T>::wire_type;
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (!in.charge_made<wire_type>(1, at)) return false;
    wire_type wire{};
    if (!kind_decoder<wire_type>::decode(in, wire)) return false;
    try {
      value = codec::serializer<T>::from_wire(std::move(wire));
    } catch (const std::exception&) {
      return in.fail(codec::serializer_refusal_reason, at);
    }
    return true;
  }
};

// A base64 string of the bytes its serializer's own decode reads, all of them, through a
// codec::reader whose budget is what this decode has left (and is charged what it took).
template <class T>
struct direct_custom_decoder {
  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != token_kind::string) return in.fail_expected("a base64 string", at);
    std::optional<std::string> bytes;
    if (!decode_base64(in, at, bytes)) return false;
    // Viewed through one reference: clang-analyzer takes each optional::operator-> for a reallocation.
    const std::string& held = *bytes;
    codec::reader binary(std::as_bytes(std::span(held.data(), held.size())), in.memory_left());
    const bool decoded = codec::serializer<T>::decode(binary, value) && binary.ok();
    (void)in.charge(binary.memory_limit() - binary.memory_left(), at);  // within what was left
    if (!decoded) {
      if (binary.error() == codec::memory_limit_reason) return in.fail_memory(at);
      return in.fail(binary.ok() ? codec::serializer_refusal_reason : binary.error(), at);
    }
    if (binary.remaining() != 0) return in.fail("trailing bytes after the serializer's value", at);
    in.next();
    return true;
  }
};
}  // namespace detail

template <class T>
struct kind_decoder<T, codec::type_kind::custom>
    : std::conditional_t<codec::detail::has_direct_serializer<T>, detail::direct_custom_decoder<T>,
                         detail::wire_custom_decoder<T>> {};

}  // namespace json
GEERPC_END_NAMESPACE
