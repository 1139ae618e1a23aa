// geerpc: a JSON number's text: the characters it is made of, and its value read as a float or a
// double, correctly rounded (for the tape's parse, src/json_tape.cpp, and the float decoder).
#pragma once

#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>
#include <system_error>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {
namespace detail {

// A number's text read as F, correctly rounded (Boost 1.81's own doubles may be a unit in the last
// place off, which would break a round trip): false when it is beyond F's range. A value too small
// for F is its zero. `approximate` is Boost's reading: where the library has no floating from_chars,
// it is used as it is; otherwise it tells an overflow from an underflow.
template <class F>
bool read_number(std::string_view text, double approximate, F& out) noexcept {
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
  F value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range) {
    if (std::fabs(approximate) >= 1) return false;
    out = text.starts_with('-') ? -F{0} : F{0};
    return true;
  }
  if (error == std::errc{} && end == text.data() + text.size()) {
    out = value;
    return true;
  }
#else
  (void)text;
#endif
  if (!std::isfinite(approximate) || std::fabs(approximate) > static_cast<double>(std::numeric_limits<F>::max()))
    return false;
  out = static_cast<F>(approximate);
  return true;
}

constexpr bool is_number_char(char c) noexcept {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

}  // namespace detail
}  // namespace json
GEERPC_END_NAMESPACE
