// geerpc: the codecs of fixed-size values: bool, integers, float, double, enums (docs/protocol.md,
// 5.1), std::chrono durations and system_clock time points (their count), std::bitset (its bits).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "../config.hpp"
#include "../detail/byte_order.hpp"
#include "kind_codec.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

// One byte, 0 or 1; also an enum whose underlying type is bool.
template <class T>
struct bool_codec {
  static void encode(writer& out, const T& value) { out.fixed(std::bit_cast<geerpc::detail::bits_of<T>>(value)); }
  static bool decode(reader& in, T& value) {
    const std::byte* at = in.position();
    std::uint8_t byte = 0;
    if (!in.fixed(byte)) return false;
    if (byte > 1) return in.fail_at("bool is neither 0 nor 1", at);
    value = static_cast<T>(byte == 1);
    return true;
  }
};

template <class T>
struct kind_codec<T, type_kind::boolean> {
  static void encode(writer& out, const T& value) { out.fixed(static_cast<std::uint8_t>(value ? 1 : 0)); }
  static bool decode(reader& in, T& value) { return bool_codec<T>::decode(in, value); }
};

// sizeof(T) bytes, little-endian, bit for bit.
template <class T>
struct number_codec {
  static void encode(writer& out, const T& value) { out.fixed(std::bit_cast<geerpc::detail::bits_of<T>>(value)); }
  static bool decode(reader& in, T& value) {
    geerpc::detail::bits_of<T> bits{};
    if (!in.fixed(bits)) return false;
    value = std::bit_cast<T>(bits);
    return true;
  }
};

template <class T>
struct kind_codec<T, type_kind::integer> : number_codec<T> {};
template <class T>
struct kind_codec<T, type_kind::floating> : number_codec<T> {};
// Its underlying integer; over bool, checked as a bool.
template <class T>
struct kind_codec<T, type_kind::enumeration>
    : std::conditional_t<detail::is_bool_like<T>(), bool_codec<T>, number_codec<T>> {};

// Its count, as its representation.
template <class T>
struct kind_codec<T, type_kind::duration> {
  static void encode(writer& out, const T& value) { value_codec<typename T::rep>::encode(out, value.count()); }
  static bool decode(reader& in, T& value) {
    typename T::rep count{};
    if (!value_codec<typename T::rep>::decode(in, count)) return false;
    value = T(count);
    return true;
  }
};

// Its count of ticks since 1970-01-01 00:00 UTC.
template <class T>
struct kind_codec<T, type_kind::time_point> {
  static void encode(writer& out, const T& value) {
    value_codec<typename T::rep>::encode(out, value.time_since_epoch().count());
  }
  static bool decode(reader& in, T& value) {
    typename T::rep count{};
    if (!value_codec<typename T::rep>::decode(in, count)) return false;
    value = T(typename T::duration(count));
    return true;
  }
};

// ceil(N / 8) bytes: bit i in byte i / 8, at bit i % 8 (the low bits first).
template <class T>
struct kind_codec<T, type_kind::bitset> {
  static constexpr std::size_t bits = T{}.size();

  static void encode(writer& out, const T& value) {
    for (std::size_t at = 0; at < bits; at += 8) {
      unsigned byte = 0;
      for (std::size_t bit = 0; bit < 8 && at + bit < bits; ++bit)
        if (value.test(at + bit)) byte |= 1u << bit;
      out.fixed(static_cast<std::uint8_t>(byte));
    }
  }
  static bool decode(reader& in, T& value) {
    const std::byte* at = in.take((bits + 7) / 8);
    if (at == nullptr) return false;
    value.reset();
    for (std::size_t i = 0; i < (bits + 7) / 8; ++i) {
      const auto byte = static_cast<unsigned>(at[i]);
      for (std::size_t bit = 0; bit < 8; ++bit) {
        if ((byte & (1u << bit)) == 0) continue;
        if (i * 8 + bit >= bits) return in.fail_at("bitset has a bit set beyond its size", at + i);
        value.set(i * 8 + bit);
      }
    }
    return true;
  }
};

}  // namespace codec
GEERPC_END_NAMESPACE
