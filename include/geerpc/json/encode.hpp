// geerpc: the JSON codec's encoder: a value as JSON text, in the forms of docs/protocol.md 8.1.
// kind_encoder<T> writes the values of one kind (a string, a map, an aggregate...), one
// specialization per kind of codec/type_kind.hpp, through json::writer (json/writer.hpp), which
// makes each token right. Recursion goes through class templates only, as in the binary codec
// (codec/kind_codec.hpp says why).
#pragma once

#include <algorithm>
#include <array>
#include <boost/pfr/core.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "../codec/field_names.hpp"
#include "../codec/serializable.hpp"
#include "../codec/type_kind.hpp"
#include "../codec/writer.hpp"
#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "writer.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {

// Left undefined for codec::type_kind::unsupported: encode() refuses such a T with
// codec::require_serializable's message.
template <class T, codec::type_kind K = codec::kind_of<T>()>
struct kind_encoder;

// Writes `value` as JSON after what `out` holds; throws encode_error for a value with no JSON form.
template <class T>
void encode_value(writer& out, const T& value) {
  kind_encoder<T>::encode(out, value);
}

// Appends the JSON text of `value` to `out`. On encode_error (or any exception a user's serializer
// throws), `out` is left as it was.
template <class T>
void encode(const T& value, std::vector<std::byte>& out) {
  codec::require_serializable<T>();
  if constexpr (codec::is_serializable_v<T>) {
    const std::size_t before = out.size();
    writer w(out);
    try {
      encode_value(w, value);
    } catch (...) {
      out.resize(before);
      throw;
    }
  }
}

// ============================================================================ scalars

template <class T>
struct kind_encoder<T, codec::type_kind::boolean> {
  static void encode(writer& out, bool value) { out.boolean(value); }
};

template <class T>
struct kind_encoder<T, codec::type_kind::integer> {
  static void encode(writer& out, T value) { out.integer(value); }
};

template <class T>
struct kind_encoder<T, codec::type_kind::floating> {
  static void encode(writer& out, T value) { out.number(value); }
};

// Its underlying integer; true/false over bool.
template <class T>
struct kind_encoder<T, codec::type_kind::enumeration> {
  static void encode(writer& out, T value) {
    using underlying = std::underlying_type_t<T>;
    kind_encoder<underlying>::encode(out, static_cast<underlying>(value));
  }
};

template <class T>
struct kind_encoder<T, codec::type_kind::string> {
  static void encode(writer& out, const T& value) { out.string(std::string_view(value.data(), value.size())); }
};

// A count of ticks of its own period, as its representation is written.
template <class T>
struct kind_encoder<T, codec::type_kind::duration> {
  static void encode(writer& out, const T& value) { kind_encoder<typename T::rep>::encode(out, value.count()); }
};

// ============================================================================ sequences

namespace detail {
// Bytes travel as base64 strings, as Go writes []byte.
template <class Element>
inline constexpr bool is_byte = std::is_same_v<Element, std::byte> || std::is_same_v<Element, unsigned char>;

template <class T, class Element = typename T::value_type>
struct range_encoder {
  static void encode(writer& out, const T& range) {
    out.begin_array();
    bool first = true;
    for (const Element& element : range) {
      if (!first) out.comma();
      first = false;
      kind_encoder<Element>::encode(out, element);
    }
    out.end_array();
  }
};
// std::vector<bool>'s elements are proxies, read as bool.
template <class Alloc>
struct range_encoder<std::vector<bool, Alloc>, bool> {
  static void encode(writer& out, const std::vector<bool, Alloc>& range) {
    out.begin_array();
    for (std::size_t i = 0; i < range.size(); ++i) {
      if (i != 0) out.comma();
      out.boolean(range[i]);
    }
    out.end_array();
  }
};

template <class T>
struct bytes_encoder {
  static void encode(writer& out, const T& bytes) { out.base64(std::as_bytes(std::span(bytes.data(), bytes.size()))); }
};
}  // namespace detail

template <class T>
struct kind_encoder<T, codec::type_kind::vector>
    : std::conditional_t<detail::is_byte<typename T::value_type>, detail::bytes_encoder<T>, detail::range_encoder<T>> {
};

template <class T>
struct kind_encoder<T, codec::type_kind::array> : detail::range_encoder<T> {};

template <class T>
struct kind_encoder<T, codec::type_kind::set> : detail::range_encoder<T> {};

template <class T>
struct kind_encoder<T, codec::type_kind::sequence> : detail::range_encoder<T> {};

// What a view views, as what the receiver decodes it into: a string_view as a string, a span as the
// vector (bytes in base64).
template <class T>
struct kind_encoder<T, codec::type_kind::view> {
  static void encode(writer& out, const T& value) {
    if constexpr (std::is_same_v<T, std::string_view>)
      out.string(value);
    else if constexpr (detail::is_byte<typename T::value_type>)
      detail::bytes_encoder<T>::encode(out, value);
    else
      detail::range_encoder<T>::encode(out, value);
  }
};

// A string of N '0'/'1' characters, bit N-1 first (std::bitset::to_string's order).
template <class T>
struct kind_encoder<T, codec::type_kind::bitset> {
  static void encode(writer& out, const T& bits) {
    out.put('"');
    for (std::size_t i = bits.size(); i-- > 0;) out.put(bits.test(i) ? '1' : '0');
    out.put('"');
  }
};

// ============================================================================ alternatives

template <class T>
struct kind_encoder<T, codec::type_kind::optional> {
  static void encode(writer& out, const T& value) {
    if (value)
      kind_encoder<typename T::value_type>::encode(out, *value);
    else
      out.null();
  }
};

template <class T>
struct kind_encoder<T, codec::type_kind::pointer> {
  static void encode(writer& out, const T& value) {
    if (value)
      kind_encoder<typename T::element_type>::encode(out, *value);
    else
      out.null();
  }
};

// [index, value].
template <class T>
struct kind_encoder<T, codec::type_kind::variant> {
  static void encode(writer& out, const T& value) {
    if (value.valueless_by_exception()) throw encode_error("a variant left valueless by an exception has no value");
    out.begin_array();
    out.integer(value.index());
    out.comma();
    std::visit(
        [&](const auto& alternative) {
          kind_encoder<std::remove_cvref_t<decltype(alternative)>>::encode(out, alternative);
        },
        value);
    out.end_array();
  }
};

// ============================================================================ maps

namespace detail {
enum class key_form { string, number, pair };

// How a map's keys are written: strings as they are, integers and enums (not over bool) in decimal
// in a string, as Go writes map[int]T; anything else makes the map an array of [key, value].
template <class K>
constexpr key_form key_form_of() {
  constexpr codec::type_kind kind = codec::kind_of<K>();
  if constexpr (kind == codec::type_kind::string || std::is_same_v<K, std::string_view>)
    return key_form::string;
  else if constexpr (kind == codec::type_kind::integer)
    return key_form::number;
  else if constexpr (kind == codec::type_kind::enumeration)
    return std::is_same_v<std::underlying_type_t<K>, bool> ? key_form::pair : key_form::number;
  else
    return key_form::pair;
}

template <class K, key_form Form = key_form_of<K>()>
struct key_encoder {
  static void encode(writer& out, const K& key) { out.string(std::string_view(key.data(), key.size())); }
};
template <class K>
struct key_encoder<K, key_form::number> {
  static void encode(writer& out, K key) {
    out.put('"');
    if constexpr (std::is_enum_v<K>)
      out.integer(static_cast<std::underlying_type_t<K>>(key));
    else
      out.integer(key);
    out.put('"');
  }
};
}  // namespace detail

template <class T>
struct kind_encoder<T, codec::type_kind::map> {
  using key = typename T::key_type;
  using mapped = typename T::mapped_type;
  static constexpr bool as_object = detail::key_form_of<key>() != detail::key_form::pair;

  static void encode(writer& out, const T& map) {
    as_object ? out.begin_object() : out.begin_array();
    bool first = true;
    for (const auto& [k, v] : map) {
      if (!first) out.comma();
      first = false;
      if constexpr (as_object) {
        detail::key_encoder<key>::encode(out, k);
        out.colon();
        kind_encoder<mapped>::encode(out, v);
      } else {
        out.begin_array();
        kind_encoder<key>::encode(out, k);
        out.comma();
        kind_encoder<mapped>::encode(out, v);
        out.end_array();
      }
    }
    as_object ? out.end_object() : out.end_array();
  }
};

// ============================================================================ members

// [first, second, ...].
template <class T>
struct kind_encoder<T, codec::type_kind::tuple> {
  static void encode(writer& out, const T& value) {
    out.begin_array();
    encode_elements(out, value, std::make_index_sequence<std::tuple_size_v<T>>{});
    out.end_array();
  }

 private:
  template <std::size_t... I>
  static void encode_elements([[maybe_unused]] writer& out, [[maybe_unused]] const T& value,
                              std::index_sequence<I...>) {
    ((I == 0 ? void() : out.comma(), kind_encoder<std::tuple_element_t<I, T>>::encode(out, std::get<I>(value))), ...);
  }
};

namespace detail {
// The text before each field's value, `"name":` (after a comma but for the first field), made once
// at compile time: names are identifiers (codec::field_names checks the user's), nothing to escape.
template <class T>
struct field_keys {
  static constexpr auto names = codec::field_names<T>();
  static constexpr std::size_t size = [] {
    std::size_t total = 0;
    for (const std::string_view name : names) total += name.size() + 4;  // ,"name":
    return total;
  }();
  static constexpr std::array<char, size + 1> text = [] {
    std::array<char, size + 1> out{};
    std::size_t at = 0;
    for (const std::string_view name : names) {
      out[at++] = ',';
      out[at++] = '"';
      for (const char c : name) out[at++] = c;
      out[at++] = '"';
      out[at++] = ':';
    }
    return out;
  }();

  // Field `index`'s key: its text starts after those of the fields before it.
  static constexpr std::string_view key(std::size_t index) noexcept {
    std::size_t start = 0;
    for (std::size_t i = 0; i < index; ++i) start += names[i].size() + 4;
    const std::size_t comma = index == 0 ? 1 : 0;
    return {text.data() + start + comma, names[index].size() + 4 - comma};
  }
};
template <class T, std::size_t Index>
inline constexpr std::string_view field_key = field_keys<T>::key(Index);
}  // namespace detail

// An object of the fields by name, in declaration order. A field whose value has no JSON form
// adds its name to the error's path as the exception passes (nothing is done while none is thrown).
template <class T>
struct kind_encoder<T, codec::type_kind::aggregate> {
  static void encode(writer& out, const T& value) {
    std::size_t field = 0;
    try {
      out.begin_object();
      boost::pfr::for_each_field(value, [&](const auto& member, auto index) {
        field = index;
        out.raw(detail::field_key<T, decltype(index)::value>);
        kind_encoder<std::remove_cvref_t<decltype(member)>>::encode(out, member);
      });
      out.end_object();
    } catch (const encode_error& error) {
      throw error.in_field(detail::field_keys<T>::names[field]);
    }
  }
};

// ============================================================================ time points

namespace detail {
// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z, in seconds since 1970-01-01T00:00:00Z: the
// years RFC 3339 can write.
inline constexpr long long earliest_rfc3339_second = -62167219200;
inline constexpr long long latest_rfc3339_second = 253402300799;

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
}  // namespace detail

// RFC 3339 in UTC, with the fraction digits the duration's period needs: "2026-12-06T03:04:05.123Z".
template <class T>
struct kind_encoder<T, codec::type_kind::time_point> {
  using rep = typename T::rep;
  using period = typename T::period;

  static void encode(writer& out, const T& value) {
    const rep count = value.time_since_epoch().count();
    if constexpr (std::is_integral_v<rep>)
      detail::write_rfc3339(out, detail::split_integer_ticks<rep, period>(count));
    else
      detail::write_rfc3339(out, detail::split_floating_ticks<rep, period>(count));
  }
};

// ============================================================================ custom

// A serializer's wire_type, as that type is written; with a serializer that writes its own bytes
// (codec::serializer<T>::encode), those bytes in base64.
template <class T>
struct kind_encoder<T, codec::type_kind::custom> {
  static void encode(writer& out, const T& value) {
    if constexpr (codec::detail::has_direct_serializer<T>) {
      std::vector<std::byte> bytes;
      codec::writer binary(bytes);
      codec::serializer<T>::encode(binary, value);
      out.base64(bytes);
    } else {
      using wire_type = typename codec::serializer<T>::wire_type;
      kind_encoder<wire_type>::encode(out, codec::serializer<T>::to_wire(value));
    }
  }
};

}  // namespace json
GEERPC_END_NAMESPACE
