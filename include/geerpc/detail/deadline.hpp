// geerpc: turning a duration a user gave into a deadline without overflow. `now + timeout` is
// undefined behaviour once the sum leaves the clock's range (nanoseconds::max(), hours::max()),
// and converting a long duration to the clock's unit can overflow before the sum is even made.
#pragma once

#include <cstdint>
#include <ratio>

#include "../config.hpp"
#include "chrono.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// `now + timeout`, rounded up to the clock's tick, saturated at both ends:
//  - a timeout too long for the clock gives time_point::max(), the farthest deadline (in effect,
//    none: it never passes);
//  - a zero or negative timeout (and a floating-point NaN) gives `now`: the deadline has passed.
// Any Rep and Period, floating point included. `now` must not be before the clock's epoch, as
// steady_clock::now() never is.
template <class Clock, class Duration, class Rep, class Period>
std::chrono::time_point<Clock, Duration> saturating_deadline(std::chrono::time_point<Clock, Duration> now,
                                                             std::chrono::duration<Rep, Period> timeout) {
  using time_point = std::chrono::time_point<Clock, Duration>;
  using seconds = std::chrono::duration<double>;
  if (!(timeout > timeout.zero())) return now;  // written so that NaN lands here too
  // Judged in double seconds, where nothing overflows whatever the types: the second of margin is
  // far wider than any rounding there, and no one waits 292 years minus a second.
  const double wanted = seconds(timeout).count();
  const double room = seconds(time_point::max().time_since_epoch()).count() - seconds(now.time_since_epoch()).count();
  if (wanted >= room - 1.0) return time_point::max();
  // Up to about 30 years the exact conversion has room to spare in every intermediate product;
  // beyond that, a deadline off by a fraction of a microsecond does not matter.
  if (wanted < 1e9) return now + std::chrono::ceil<Duration>(timeout);
  using period = typename Duration::period;
  using rep = typename Duration::rep;
  // Rounded up by hand (std::ceil's <cmath> is thousands of lines in every user's translation unit);
  // `ticks` is below the clock's range here, so neither conversion overflows.
  const double ticks = wanted * static_cast<double>(period::den) / static_cast<double>(period::num);
  rep whole = static_cast<rep>(ticks);
  if (static_cast<double>(whole) < ticks) ++whole;
  return now + Duration(whole);
}

// The deadline a handler gives the calls it makes: its own, less a reserve for its reply of
// `fraction` of its budget (from `start` to `deadline`), capped at `cap`. A setting that makes no
// sense cannot make undefined behaviour: a fraction that is not a number or below 0 counts as 0, one
// above 1 (infinity too) as 1, a negative cap as 0. Never before the clock's epoch.
template <class Clock, class Duration>
std::chrono::time_point<Clock, Duration> downstream_deadline(std::chrono::time_point<Clock, Duration> deadline,
                                                             std::chrono::time_point<Clock, Duration> start,
                                                             double fraction, std::chrono::nanoseconds cap) {
  if (!(fraction > 0.0)) fraction = 0.0;  // written so that NaN lands here too
  if (fraction > 1.0) fraction = 1.0;
  if (cap < cap.zero()) cap = cap.zero();
  // In double nanoseconds, where neither the budget nor its fraction overflows.
  using nanos = std::chrono::duration<double, std::nano>;
  const double budget = nanos(deadline.time_since_epoch()).count() - nanos(start.time_since_epoch()).count();
  const double wanted = fraction * budget;
  Duration reserve = Duration::zero();
  if (wanted >= static_cast<double>(cap.count()))
    reserve = std::chrono::duration_cast<Duration>(cap);
  else if (wanted > 0.0)  // below the cap, so within the integer's range: the conversion is defined
    reserve = std::chrono::duration_cast<Duration>(std::chrono::nanoseconds(static_cast<std::int64_t>(wanted)));
  if (reserve > deadline.time_since_epoch()) reserve = deadline.time_since_epoch();
  return deadline - reserve;
}

}  // namespace detail
GEERPC_END_NAMESPACE
