// geerpc: durations printed the way Go prints them ("1s", "500ms", "1.5s", "250us"), so that
// messages read like GeeRPC's ("rpc client: connect timeout: expect within 1s").
#pragma once

#include <cstdint>
#include <string>

#include "../config.hpp"
#include "chrono.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// `value` / `unit` as a decimal with trailing zeros trimmed, e.g. (1500, 1000) -> "1.5".
inline std::string decimal_text(std::uint64_t value, std::uint64_t unit) {
  std::string text = std::to_string(value / unit);
  std::uint64_t rest = value % unit;
  if (rest == 0) return text;
  std::string fraction;
  for (std::uint64_t scale = unit / 10; scale > 0 && rest > 0; scale /= 10) {
    fraction += static_cast<char>('0' + rest / scale);
    rest %= scale;
  }
  return text + "." + fraction;
}

inline std::string duration_text(std::chrono::nanoseconds d) {
  // The magnitude in unsigned arithmetic: -nanoseconds::min() does not fit in the signed count.
  const std::int64_t count = d.count();
  const std::uint64_t ns = count < 0 ? 0 - static_cast<std::uint64_t>(count) : static_cast<std::uint64_t>(count);
  const std::string sign = count < 0 ? "-" : "";
  if (ns < 1'000) return sign + std::to_string(ns) + "ns";
  if (ns < 1'000'000) return sign + decimal_text(ns, 1'000) + "us";
  if (ns < 1'000'000'000) return sign + decimal_text(ns, 1'000'000) + "ms";
  // From a minute up Go writes hours and minutes too: "1m30s", "2h0m0s".
  constexpr std::uint64_t minute = 60'000'000'000, hour = 60 * minute;
  std::string text = sign;
  if (ns >= hour) text += std::to_string(ns / hour) + "h";
  if (ns >= minute) text += std::to_string(ns % hour / minute) + "m";
  return text + decimal_text(ns % minute, 1'000'000'000) + "s";
}

}  // namespace detail
GEERPC_END_NAMESPACE
