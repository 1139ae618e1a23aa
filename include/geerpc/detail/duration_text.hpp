// geerpc: durations printed the way Go prints them ("1s", "500ms", "1.5s", "250us"), so that
// messages read like GeeRPC's ("rpc client: connect timeout: expect within 1s").
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// `value` / `unit` as a decimal with trailing zeros trimmed, e.g. (1500, 1000) -> "1.5".
inline std::string decimal_text(std::int64_t value, std::int64_t unit) {
  std::string text = std::to_string(value / unit);
  std::int64_t rest = value % unit;
  if (rest == 0) return text;
  std::string fraction;
  for (std::int64_t scale = unit / 10; scale > 0 && rest > 0; scale /= 10) {
    fraction += static_cast<char>('0' + rest / scale);
    rest %= scale;
  }
  return text + "." + fraction;
}

inline std::string duration_text(std::chrono::nanoseconds d) {
  std::int64_t ns = d.count();
  std::string sign;
  if (ns < 0) {
    sign = "-";
    ns = -ns;
  }
  if (ns < 1'000) return sign + std::to_string(ns) + "ns";
  if (ns < 1'000'000) return sign + decimal_text(ns, 1'000) + "us";
  if (ns < 1'000'000'000) return sign + decimal_text(ns, 1'000'000) + "ms";
  // From a minute up Go writes hours and minutes too: "1m30s", "2h0m0s".
  constexpr std::int64_t minute = 60'000'000'000, hour = 60 * minute;
  std::string text = sign;
  if (ns >= hour) text += std::to_string(ns / hour) + "h";
  if (ns >= minute) text += std::to_string(ns % hour / minute) + "m";
  return text + decimal_text(ns % minute, 1'000'000'000) + "s";
}

}  // namespace detail
GEERPC_END_NAMESPACE
