// What the JSON decoder's tests share (decode_test.cpp, decode_refusal_test.cpp): the types they
// decode into, classes with a serializer, and helpers that decode a text or give its failure.
#pragma once

#include <array>
#include <bit>
#include <bitset>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include <geerpc/json/decode.hpp>

#include "catch.hpp"

namespace json_decode_test {

enum class colour : std::uint8_t { red, green, blue };
enum class toggle : bool { off, on };
enum class level : std::int16_t { low = -1, high = 1 };

struct counter {
  int count = 7;
  std::string name;
};

struct kv {
  std::string key;
  std::vector<std::byte> value;
};

struct both_cases {
  int a;
  int A;
};

struct outer {
  counter inner;
  std::vector<counter> list;
  std::optional<double> ratio;
};

// A class that keeps an invariant (cents >= 0) and travels as a tuple.
class money {
 public:
  money() = default;
  money(std::string currency, std::int64_t cents) : currency_(std::move(currency)), cents_(cents) {
    if (cents < 0) throw std::invalid_argument("negative money");
  }
  const std::string& currency() const { return currency_; }
  std::int64_t cents() const { return cents_; }

 private:
  std::string currency_;
  std::int64_t cents_ = 0;
};

// A class whose serializer writes its own four bytes.
class ip4 {
 public:
  ip4() = default;
  explicit ip4(std::uint32_t bits) : bits_(bits) {}
  std::uint32_t bits() const { return bits_; }

 private:
  std::uint32_t bits_ = 0;
};

}  // namespace json_decode_test

template <>
struct geerpc::codec::serializer<json_decode_test::money> {
  using wire_type = std::tuple<std::string, std::int64_t>;
  static wire_type to_wire(const json_decode_test::money& m) { return {m.currency(), m.cents()}; }
  static json_decode_test::money from_wire(wire_type&& w) {
    return json_decode_test::money(std::move(std::get<0>(w)), std::get<1>(w));
  }
};

template <>
struct geerpc::codec::serializer<json_decode_test::ip4> {
  static constexpr std::size_t min_encoded_size = 4;
  static void encode(writer& out, const json_decode_test::ip4& a) { out.fixed(a.bits()); }
  static bool decode(reader& in, json_decode_test::ip4& a) {
    std::uint32_t bits = 0;
    if (!in.fixed(bits)) return false;
    if (bits == 0xffffffffu) return false;  // refused
    a = json_decode_test::ip4(bits);
    return true;
  }
};

namespace json_decode_test {

namespace json = geerpc::json;
using std::chrono::system_clock;

inline std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

template <class T>
T decoded(std::string_view text) {
  T value{};
  const json::decode_status status = json::decode(bytes_of(text), value);
  INFO(text);
  INFO(status.message());
  REQUIRE(status);
  return value;
}

// The decoder's message for `text` as a T: "ok", or "<reason> at byte <offset>".
template <class T>
std::string message(std::string_view text) {
  T value{};
  return json::decode(bytes_of(text), value).message();
}

inline std::vector<std::byte> byte_vector(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (const int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

}  // namespace json_decode_test
