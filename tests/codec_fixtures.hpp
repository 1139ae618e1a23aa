// What the codec tests share (codec_test.cpp, codec_decode_test.cpp): helpers that encode,
// decode and compare, the types the tests carry, the types the codec must refuse, a counting
// allocator and a seeded random source.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <geerpc/codec/binary.hpp>
#include <geerpc/codec/type_kind.hpp>
#include <initializer_list>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "codec_bytes.hpp"
#include "counting_allocator.hpp"

namespace codec_fixtures {

using geerpc::binary_codec;
using geerpc::codec::decode_status;
using geerpc::codec::first_unsupported;
using geerpc::codec::is_serializable_v;
using geerpc::codec::kind_of;
using geerpc::codec::min_encoded_size;
using geerpc::codec::type_kind;
using test::byte_vector;
using test::bytes_of;
using test::encode;

inline byte_vector concat(byte_vector a, const byte_vector& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

template <class T>
decode_status decode(std::span<const std::byte> in, T& value) {
  return binary_codec::decode(in, value);
}

// The little-endian bytes of an unsigned integer, computed with shifts rather than memcpy so the
// expectation does not share the implementation's approach.
template <class U>
byte_vector little_endian(U bits) {
  static_assert(std::is_unsigned_v<U>);
  byte_vector out;
  for (std::size_t i = 0; i < sizeof(U); ++i) out.push_back(static_cast<std::byte>((bits >> (8 * i)) & 0xffu));
  return out;
}

template <class T>
auto unsigned_bits(T value) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(value);
  } else if constexpr (std::is_enum_v<T>) {
    return static_cast<std::make_unsigned_t<std::underlying_type_t<T>>>(value);
  } else {
    return static_cast<std::make_unsigned_t<T>>(value);
  }
}

// Decodes into `decoded`, which callers start from a value different from the original, so that a
// decoder that wrote nothing cannot pass.
template <class T>
T round_trip(const T& value, T decoded) {
  const byte_vector encoded = encode(value);
  const decode_status status = decode(encoded, decoded);
  INFO("decode: " << status.message());
  REQUIRE(status);
  return decoded;
}

template <class T>
void check_round_trip(const T& value, const T& different) {
  REQUIRE_FALSE(value == different);
  CHECK(round_trip(value, different) == value);
}

template <class T>
std::string decode_error(std::span<const std::byte> in) {
  T value{};
  const decode_status status = decode(in, value);
  return status ? std::string("decoded") : status.message();
}

// ---- the types the tests carry

struct point {
  std::int32_t x;
  std::int32_t y;
  bool operator==(const point&) const = default;
};

struct segment {
  point from;
  point to;
  std::string label;
  bool operator==(const segment&) const = default;
};

enum class shape_kind : std::uint8_t { polyline = 1, polygon = 2 };

struct shape {
  shape_kind kind;
  std::vector<segment> segments;
  std::optional<point> anchor;
  std::map<std::string, double> attributes;
  bool operator==(const shape&) const = default;
};

struct drawing {
  std::string title;
  std::vector<shape> shapes;
  std::array<std::uint16_t, 3> rgb;
  std::tuple<bool, std::int64_t, std::string> meta;
  std::unordered_map<std::uint32_t, std::vector<std::string>> layers;
  std::pair<float, std::optional<std::vector<bool>>> extra;
  std::vector<std::uint64_t> ids;  // the memcpy path, inside a struct
  bool operator==(const drawing&) const = default;
};

inline drawing sample_drawing() {
  drawing d;
  d.title = "floor plan";
  d.shapes.push_back({shape_kind::polygon,
                      {{{0, 0}, {10, 0}, "south wall"}, {{10, 0}, {10, -7}, ""}},
                      point{5, -3},
                      {{"weight", 2.5}, {"opacity", 0.75}}});
  d.shapes.push_back({shape_kind::polyline, {}, std::nullopt, {}});
  d.rgb = {0x0102, 0xfffe, 7};
  d.meta = {true, -1234567890123, "meta"};
  d.layers = {{1, {"walls", "doors"}}, {300, {}}, {70000, {"x"}}};
  d.extra = {3.25f, std::vector<bool>{true, false, true}};
  d.ids = {1, 0xffffffffffffffff, 1ull << 40};
  return d;
}

struct packed_fields {
  std::uint8_t a;
  std::uint16_t b;
  bool c;
  bool operator==(const packed_fields&) const = default;
};

struct two_words {
  std::uint32_t first;
  std::uint32_t second;
};

struct nothing {
  bool operator==(const nothing&) const = default;
};

struct holds_nothing {
  nothing n;
  std::uint8_t x;
  bool operator==(const holds_nothing&) const = default;
};

enum class small_signed : std::int8_t { low = -100, high = 100 };
enum class mid_unsigned : std::uint16_t { one_two = 0x0102 };
enum class wide_unsigned : std::uint64_t { big = 0xfedcba9876543210 };
enum class wide_signed : std::int64_t { negative = -2 };
enum plain_color : int { red, green = 1000, blue };  // unscoped, with a fixed underlying type
enum unfixed_color { cyan, magenta };                // no fixed type: its valid range is unknowable, so refused
enum class flag : bool { off, on };                  // bool-backed: only 0 and 1 are values

struct base_part {
  int a;
};
struct derived_part : base_part {  // an aggregate with a base class: PFR cannot reflect it
  int b;
};

// ---- types the codec must refuse

struct with_pointer {
  int* p;
};
struct with_reference {
  int& r;
};
struct with_const_member {
  const int x = 0;
};
struct with_volatile_member {
  volatile int x;
};
struct with_long_double {
  long double x;
};
union int_or_float {
  int i;
  float f;
};
struct with_union {
  int_or_float u;
};
struct with_virtual {
  virtual ~with_virtual() = default;
  int x = 0;
};
struct with_constructor {
  explicit with_constructor(int v) : x(v) {}
  int x;
};
class with_private_field {
 public:
  int get() const { return x_; }

 private:
  int x_ = 0;
};
struct with_function_pointer {
  void (*callback)();
};
struct deep_culprit {
  std::vector<std::optional<with_pointer>> items;
};

// ---- an allocator that counts, to prove a refused count allocated nothing

using test::allocation_log;
using test::counting_allocator;

// A fixed, portable generator: the same mutations on every platform and standard library.
class splitmix64 {
 public:
  explicit splitmix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }

 private:
  std::uint64_t state_;
};

}  // namespace codec_fixtures
