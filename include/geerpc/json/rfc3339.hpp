// geerpc: time points as RFC 3339 text, both ways (docs/protocol.md 8.1): the years it can write,
// the civil date arithmetic, a duration's ticks split into UTC seconds and a fraction and the text
// written from them (the encoder's), and the text read back into seconds and nanoseconds and those
// counted as ticks (the decoder's).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

#include "../config.hpp"
#include "writer.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {
namespace detail {

// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z, in seconds since 1970-01-01T00:00:00Z: the
// years RFC 3339 can write.
inline constexpr long long earliest_rfc3339_second = -62167219200;
inline constexpr long long latest_rfc3339_second = 253402300799;

// ============================================================================ the calendar

constexpr unsigned days_in_month(unsigned year, unsigned month) noexcept {
  constexpr std::array<unsigned, 12> days{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
  return month == 2 && leap ? 29 : days[month - 1];
}

// Days from 1970-01-01 to a proleptic Gregorian date: Howard Hinnant's days_from_civil
// (http://howardhinnant.github.io/date_algorithms.html), by hand as its inverse below is.
constexpr long long days_from_civil(long long year, unsigned month, unsigned day) noexcept {
  year -= month <= 2 ? 1 : 0;
  const long long era = (year >= 0 ? year : year - 399) / 400;
  const auto year_of_era = static_cast<unsigned>(year - era * 400);                            // [0, 399]
  const unsigned day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;  // [0, 365]
  const unsigned day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + static_cast<long long>(day_of_era) - 719468;
}

// The civil (proleptic Gregorian) date of a day counted from 1970-01-01: Howard Hinnant's
// civil_from_days (http://howardhinnant.github.io/date_algorithms.html). Hand-written rather than
// std::chrono::year_month_day, whose <chrono> calendar geerpc keeps out of its headers
// (detail/chrono.hpp says why).
struct civil_date {
  long long year;
  unsigned month, day;
};
constexpr civil_date civil_from_days(long long days) noexcept {
  days += 719468;  // from 0000-03-01, so that a leap day ends its year
  const long long era = (days >= 0 ? days : days - 146096) / 146097;
  const auto day_of_era = static_cast<unsigned>(days - era * 146097);  // [0, 146096]
  const unsigned year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const unsigned day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);  // [0, 365]
  const unsigned shifted_month = (5 * day_of_year + 2) / 153;                                           // March = 0
  const unsigned day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
  const unsigned month = shifted_month < 10 ? shifted_month + 3 : shifted_month - 9;
  return {static_cast<long long>(year_of_era) + era * 400 + (month <= 2 ? 1 : 0), month, day};
}

// ============================================================================ writing

// A UTC time: whole seconds since the epoch and a fraction of `digits` decimal digits.
struct utc_time {
  long long seconds = 0;
  std::uint32_t fraction = 0;
  int digits = 0;
};

[[noreturn]] inline void throw_year_out_of_range() {
  throw encode_error("JSON (RFC 3339) cannot carry a time point outside the years 0000 to 9999");
}

// The fewest of 0, 3, 6 or 9 fraction digits that write a tick of Period exactly; 9 for ticks
// finer than a nanosecond or not a decimal fraction (1/3 s), whose times round towards the past.
template <class Period>
constexpr int fraction_digits() {
  constexpr auto den = static_cast<std::uint64_t>(Period::den);
  return den == 1 ? 0 : 1000 % den == 0 ? 3 : 1000000 % den == 0 ? 6 : 9;
}

constexpr std::uint32_t power_of_ten(int digits) noexcept {
  std::uint32_t power = 1;
  for (int i = 0; i < digits; ++i) power *= 10;
  return power;
}

// An integer count of ticks, split exactly: ticks x num / den seconds, in 128 bits (a 64-bit count
// times a 64-bit numerator fits; the fraction's remainder times 10^9 too).
template <class Rep, class Period>
utc_time split_integer_ticks(Rep count) {
  __extension__ typedef __int128 wide;
  constexpr int digits = fraction_digits<Period>();
  const wide total = static_cast<wide>(count) * Period::num;
  wide seconds = total / Period::den, rest = total % Period::den;
  if (rest < 0) --seconds, rest += Period::den;  // towards the past
  if (seconds < earliest_rfc3339_second || seconds > latest_rfc3339_second) throw_year_out_of_range();
  const wide fraction = rest * power_of_ten(digits) / Period::den;
  return {static_cast<long long>(seconds), static_cast<std::uint32_t>(fraction), digits};
}

// A floating count: to the nanosecond, towards the past.
template <class Rep, class Period>
utc_time split_floating_ticks(Rep count) {
  const double seconds =
      static_cast<double>(count) * static_cast<double>(Period::num) / static_cast<double>(Period::den);
  if (!std::isfinite(seconds)) throw encode_error("JSON cannot carry a time point of NaN or infinite ticks");
  const double whole = std::floor(seconds);
  if (whole < static_cast<double>(earliest_rfc3339_second) || whole > static_cast<double>(latest_rfc3339_second))
    throw_year_out_of_range();
  const double nanoseconds = std::min(std::floor((seconds - whole) * 1e9), 999999999.0);
  return {static_cast<long long>(whole), static_cast<std::uint32_t>(nanoseconds), 9};
}

inline char* put_digits(char* at, unsigned long long value, int width) noexcept {
  for (int i = width - 1; i >= 0; --i, value /= 10) at[i] = static_cast<char>('0' + value % 10);
  return at + width;
}

// "YYYY-MM-DDTHH:MM:SS[.fraction]Z"; the seconds are within the years 0000..9999.
inline void write_rfc3339(writer& out, const utc_time& time) {
  const long long days = (time.seconds >= 0 ? time.seconds : time.seconds - 86399) / 86400;
  const auto second_of_day = static_cast<unsigned>(time.seconds - days * 86400);
  const civil_date date = civil_from_days(days);
  char text[40];
  char* at = text;
  *at++ = '"';
  at = put_digits(at, static_cast<unsigned long long>(date.year), 4);
  *at++ = '-';
  at = put_digits(at, date.month, 2);
  *at++ = '-';
  at = put_digits(at, date.day, 2);
  *at++ = 'T';
  at = put_digits(at, second_of_day / 3600, 2);
  *at++ = ':';
  at = put_digits(at, second_of_day / 60 % 60, 2);
  *at++ = ':';
  at = put_digits(at, second_of_day % 60, 2);
  if (time.digits > 0) *at++ = '.', at = put_digits(at, time.fraction, time.digits);
  *at++ = 'Z';
  *at++ = '"';
  out.raw(std::string_view(text, static_cast<std::size_t>(at - text)));
}

// ============================================================================ reading

// A UTC time read from RFC 3339 text: seconds since 1970-01-01T00:00:00Z and nanoseconds after.
struct rfc3339_time {
  long long seconds = 0;
  std::uint32_t nanoseconds = 0;
};

constexpr bool read_digits(std::string_view text, std::size_t at, std::size_t count, unsigned& out) noexcept {
  if (at > text.size() || count > text.size() - at) return false;
  unsigned value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    value = value * 10 + static_cast<unsigned>(text[i] - '0');
  }
  out = value;
  return true;
}
constexpr bool char_at(std::string_view text, std::size_t at, char lower, char upper) noexcept {
  return at < text.size() && (text[at] == lower || text[at] == upper);
}

// "YYYY-MM-DDTHH:MM:SS" ('T' in either case), a real date and time (no second 60): its seconds.
constexpr bool read_date_time(std::string_view text, long long& seconds) noexcept {
  unsigned year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!read_digits(text, 0, 4, year) || !char_at(text, 4, '-', '-') || !read_digits(text, 5, 2, month) ||
      !char_at(text, 7, '-', '-') || !read_digits(text, 8, 2, day) || !char_at(text, 10, 't', 'T') ||
      !read_digits(text, 11, 2, hour) || !char_at(text, 13, ':', ':') || !read_digits(text, 14, 2, minute) ||
      !char_at(text, 16, ':', ':') || !read_digits(text, 17, 2, second))
    return false;
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || hour > 23 || minute > 59 || second > 59)
    return false;
  const long long time_of_day = (hour * 60LL + minute) * 60 + second;  // in range: checked above
  seconds = days_from_civil(year, month, day) * 86400 + time_of_day;
  return true;
}

// An optional ".fraction" of 1 to 9 digits at `at`, as nanoseconds; `at` moves past it.
constexpr bool read_fraction(std::string_view text, std::size_t& at, std::uint32_t& nanoseconds) noexcept {
  nanoseconds = 0;
  if (!char_at(text, at, '.', '.')) return true;
  std::size_t digits = 0;
  for (++at; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at) {
    if (++digits > 9) return false;
    nanoseconds = nanoseconds * 10 + static_cast<std::uint32_t>(text[at] - '0');
  }
  for (std::size_t i = digits; i < 9; ++i) nanoseconds *= 10;
  return digits > 0;
}

// "Z" (either case) or "+HH:MM" / "-HH:MM", ending the text: the zone's offset from UTC in seconds.
constexpr bool read_zone(std::string_view text, std::size_t at, long long& offset) noexcept {
  offset = 0;
  if (char_at(text, at, 'z', 'Z')) return at + 1 == text.size();
  unsigned hours = 0, minutes = 0;
  if (!char_at(text, at, '+', '-') || text.size() != at + 6 || !read_digits(text, at + 1, 2, hours) ||
      !char_at(text, at + 3, ':', ':') || !read_digits(text, at + 4, 2, minutes) || hours > 23 || minutes > 59)
    return false;
  offset = (text[at] == '-' ? -1 : 1) * static_cast<long long>(hours * 3600 + minutes * 60);
  return true;
}

constexpr bool parse_rfc3339(std::string_view text, rfc3339_time& time) noexcept {
  std::size_t at = 19;
  long long seconds = 0, offset = 0;
  if (!read_date_time(text, seconds) || !read_fraction(text, at, time.nanoseconds) || !read_zone(text, at, offset))
    return false;
  time.seconds = seconds - offset;
  return true;
}

// The time as ticks of Duration since the epoch, rounded towards the past; false beyond its range.
template <class Duration>
bool ticks_since_epoch(const rfc3339_time& time, typename Duration::rep& ticks) noexcept {
  using rep = typename Duration::rep;
  using period = typename Duration::period;
  if constexpr (std::is_floating_point_v<rep>) {
    const double seconds = static_cast<double>(time.seconds) + static_cast<double>(time.nanoseconds) * 1e-9;
    const double count = seconds * static_cast<double>(period::den) / static_cast<double>(period::num);
    if (!(std::fabs(count) <= static_cast<double>(std::numeric_limits<rep>::max()))) return false;
    ticks = static_cast<rep>(count);
    return true;
  } else {
    __extension__ typedef __int128 wide;
    const wide nanoseconds = static_cast<wide>(time.seconds) * 1000000000 + time.nanoseconds;
    wide scaled = 0;
    if (__builtin_mul_overflow(nanoseconds, static_cast<wide>(period::den), &scaled)) return false;
    const wide divisor = static_cast<wide>(period::num) * 1000000000;
    const wide count = scaled / divisor - (scaled % divisor < 0 ? 1 : 0);
    if (count < static_cast<wide>(std::numeric_limits<rep>::min()) ||
        count > static_cast<wide>(std::numeric_limits<rep>::max()))
      return false;
    ticks = static_cast<rep>(count);
    return true;
  }
}

}  // namespace detail
}  // namespace json
GEERPC_END_NAMESPACE
