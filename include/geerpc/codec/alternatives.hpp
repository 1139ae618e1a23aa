// geerpc: the codecs of values that may be absent or one of several: std::optional and
// std::unique_ptr (a tag byte 0 or 1, then the value if 1), std::variant (a varint index, then the
// alternative held).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <variant>

#include "../config.hpp"
#include "../detail/integer_cast.hpp"
#include "allocation.hpp"
#include "kind_codec.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {
namespace detail {
// Reads a tag byte that must be 0 or 1.
inline bool decode_tag(reader& in, bool& present, const char* why) {
  const std::byte* at = in.position();
  std::uint8_t tag = 0;
  if (!in.fixed(tag)) return false;
  if (tag > 1) return in.fail_at(why, at);
  present = tag == 1;
  return true;
}
}  // namespace detail

template <class T>
struct kind_codec<T, type_kind::optional> {
  using element = typename T::value_type;

  static void encode(writer& out, const T& value) {
    out.fixed(static_cast<std::uint8_t>(value.has_value() ? 1 : 0));
    if (value) value_codec<element>::encode(out, *value);
  }
  static bool decode(reader& in, T& value) {
    const std::byte* at = in.position();
    bool present = false;
    if (!detail::decode_tag(in, present, "optional tag is neither 0 nor 1")) return false;
    if (!present) {
      value.reset();
      return true;
    }
    if (!detail::charge_made<element>(in, 1, at)) return false;
    return value_codec<element>::decode(in, value.emplace());
  }
};

template <class T>
struct kind_codec<T, type_kind::pointer> {
  using element = typename T::element_type;

  static void encode(writer& out, const T& value) {
    out.fixed(static_cast<std::uint8_t>(value ? 1 : 0));
    if (value) value_codec<element>::encode(out, *value);
  }
  static bool decode(reader& in, T& value) {
    const std::byte* at = in.position();
    bool present = false;
    if (!detail::decode_tag(in, present, "unique_ptr tag is neither 0 nor 1")) return false;
    if (!present) {
      value.reset();
      return true;
    }
    if (!value) {
      if (!in.charge(detail::round_up(sizeof(element), alignof(std::max_align_t)), at) ||
          !detail::charge_made<element>(in, 1, at))
        return false;
      value = std::make_unique<element>();
    }
    return value_codec<element>::decode(in, *value);
  }
};

template <class T>
struct kind_codec<T, type_kind::variant> {
  static void encode(writer& out, const T& value) {
    // A variant left valueless by an exception has no value to send.
    if (value.valueless_by_exception()) throw std::bad_variant_access();
    out.varint(value.index());
    std::visit(
        [&](const auto& alternative) {
          value_codec<std::remove_cvref_t<decltype(alternative)>>::encode(out, alternative);
        },
        value);
  }
  static bool decode(reader& in, T& value) {
    const std::byte* at = in.position();
    std::uint64_t index = 0;
    if (!in.varint(index)) return false;
    if (index >= std::variant_size_v<T>) return in.fail_at("variant index out of range", at);
    return decode_alternative(in, value, geerpc::detail::integer_cast<std::size_t>(index),
                              std::make_index_sequence<std::variant_size_v<T>>{});
  }

 private:
  // Makes alternative `index` and decodes into it.
  template <std::size_t... I>
  static bool decode_alternative(reader& in, T& value, std::size_t index, std::index_sequence<I...>) {
    bool decoded = false;
    (void)((index == I &&
            (decoded = detail::charge_made<std::variant_alternative_t<I, T>>(in, 1, in.position()) &&
                       value_codec<std::variant_alternative_t<I, T>>::decode(in, value.template emplace<I>()),
             true)) ||
           ...);
    return decoded;
  }
};

}  // namespace codec
GEERPC_END_NAMESPACE
