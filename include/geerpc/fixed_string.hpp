// geerpc: a string usable as a template argument, so that service and method names are part of the
// type and checked by the compiler.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

#include "config.hpp"

GEERPC_BEGIN_NAMESPACE

template <std::size_t N>
struct fixed_string {
  char chars[N]{};  // includes the terminating '\0'

  constexpr fixed_string(const char (&text)[N]) { std::copy_n(text, N, chars); }  // NOLINT: implicit by design
  constexpr fixed_string() = default;

  static constexpr std::size_t size() noexcept { return N - 1; }
  constexpr std::string_view view() const noexcept { return {chars, N - 1}; }
  constexpr operator std::string_view() const noexcept { return view(); }  // NOLINT

  template <std::size_t M>
  constexpr bool operator==(const fixed_string<M>& other) const noexcept {
    return view() == other.view();
  }
};

// "Service" + '.' + "Method" at compile time: the name a request carries on the wire.
template <std::size_t A, std::size_t B>
constexpr fixed_string<A + B> join_dotted(const fixed_string<A>& left, const fixed_string<B>& right) {
  fixed_string<A + B> out;
  std::copy_n(left.chars, A - 1, out.chars);
  out.chars[A - 1] = '.';
  std::copy_n(right.chars, B, out.chars + A);
  return out;
}

GEERPC_END_NAMESPACE
