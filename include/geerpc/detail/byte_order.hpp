// geerpc: fixed-size little-endian loads and stores, the byte order of everything geerpc puts on
// the wire. memcpy keeps them free of alignment and aliasing UB; compilers turn them into one move.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

template <class T>
constexpr T byteswap_if_big_endian(T value) noexcept {
  static_assert(std::is_unsigned_v<T>);
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
    T swapped = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      swapped = static_cast<T>((swapped << 8) | (value & 0xff));
      value = static_cast<T>(value >> 8);
    }
    return swapped;
  } else {
    return value;
  }
}

template <class T>
inline void store_le(std::byte* out, T value) noexcept {
  static_assert(std::is_unsigned_v<T>, "store_le takes an unsigned integer; bit_cast other types first");
  value = byteswap_if_big_endian(value);
  std::memcpy(out, &value, sizeof value);
}

template <class T>
inline T load_le(const std::byte* in) noexcept {
  static_assert(std::is_unsigned_v<T>, "load_le yields an unsigned integer; bit_cast to other types");
  T value;
  std::memcpy(&value, in, sizeof value);
  return byteswap_if_big_endian(value);
}

// The unsigned integer of the same size as T, for moving T's bits through store_le/load_le.
template <std::size_t Size>
struct unsigned_of_size;
template <>
struct unsigned_of_size<1> {
  using type = std::uint8_t;
};
template <>
struct unsigned_of_size<2> {
  using type = std::uint16_t;
};
template <>
struct unsigned_of_size<4> {
  using type = std::uint32_t;
};
template <>
struct unsigned_of_size<8> {
  using type = std::uint64_t;
};
template <class T>
using bits_of = typename unsigned_of_size<sizeof(T)>::type;

}  // namespace detail
GEERPC_END_NAMESPACE
