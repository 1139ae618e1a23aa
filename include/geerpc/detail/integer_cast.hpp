// geerpc: a conversion between integer types that are one type on some ABIs and two on others
// (std::uint64_t and std::size_t, time_t and long). Where they differ it is a static_cast; where
// they are the same it is no cast at all, so a user's -Wuseless-cast stays quiet on every platform.
#pragma once

#include <type_traits>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// The caller knows that `value` fits in To: this states the conversion, it does not check it.
template <class To, class From>
constexpr To integer_cast(From value) noexcept {
  static_assert(std::is_integral_v<To> && std::is_integral_v<From>, "integer_cast converts integers only");
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else {
    return static_cast<To>(value);
  }
}

}  // namespace detail
GEERPC_END_NAMESPACE
