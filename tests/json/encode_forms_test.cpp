// The JSON codec's encoder (json/encode.hpp), every type but the scalars and strings: the exact text
// of each of their rows of docs/protocol.md 8.1 (bytes, sequences, maps, structs, time points,
// variants, bitsets, classes with a serializer), and the values that have no JSON form (years past
// 9999, a valueless variant), refused with a message that names the field.
#include <array>
#include <bitset>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <geerpc/json/encode.hpp>
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

#include "catch.hpp"
#include "encode_fixtures.hpp"

namespace json_encode_test {

struct legacy_point {
  int x;
  int y;
};

// A class with a wire_type serializer, and one whose serializer writes its own bytes.
class money {
 public:
  money() = default;
  money(std::string currency, std::int64_t cents) : currency_(std::move(currency)), cents_(cents) {}
  const std::string& currency() const { return currency_; }
  std::int64_t cents() const { return cents_; }

 private:
  std::string currency_;
  std::int64_t cents_ = 0;
};

class ip4 {
 public:
  ip4() = default;
  explicit ip4(std::uint32_t bits) : bits_(bits) {}
  std::uint32_t bits() const { return bits_; }

 private:
  std::uint32_t bits_ = 0;
};

// Constructing one from an int throws: what leaves a variant valueless.
// (Not trivially copyable, so that std::variant constructs it in place rather than beside.)
struct boom {
  boom() = default;
  explicit boom(int) { throw std::runtime_error("boom"); }
  boom(const boom&) {}
  boom& operator=(const boom&) { return *this; }
};

}  // namespace json_encode_test

template <>
struct geerpc::codec::field_naming<json_encode_test::legacy_point> {
  static constexpr std::array<std::string_view, 2> names{"X", "Y_2"};
};

template <>
struct geerpc::codec::serializer<json_encode_test::money> {
  using wire_type = std::tuple<std::string, std::int64_t>;
  static wire_type to_wire(const json_encode_test::money& m) { return {m.currency(), m.cents()}; }
  static json_encode_test::money from_wire(wire_type&& w) { return {std::get<0>(w), std::get<1>(w)}; }
};

template <>
struct geerpc::codec::serializer<json_encode_test::ip4> {
  static constexpr std::size_t min_encoded_size = 4;
  static void encode(geerpc::codec::writer& out, const json_encode_test::ip4& a) { out.fixed(a.bits()); }
  static bool decode(geerpc::codec::reader&, json_encode_test::ip4&) { return false; }
};

template <>
struct geerpc::codec::serializer<json_encode_test::boom> {
  using wire_type = int;
  static wire_type to_wire(const json_encode_test::boom&) { return 0; }
  static json_encode_test::boom from_wire(wire_type&&) { return {}; }
};

namespace json_encode_test {

using namespace std::chrono_literals;

// ============================================================================ bytes and sequences

TEST_CASE("json encode: bytes as base64 strings, other vectors as arrays", "[json]") {
  CHECK(json_of(std::vector<std::byte>{std::byte{'v'}}) == R"("dg==")");
  CHECK(json_of(std::vector<unsigned char>{'h', 'i'}) == R"("aGk=")");
  CHECK(json_of(std::vector<std::uint8_t>{0xfb, 0xff, 0xbf}) == R"("+/+/")");
  CHECK(json_of(std::vector<std::byte>{}) == R"("")");
  const std::array<std::byte, 2> raw{std::byte{'h'}, std::byte{'i'}};
  CHECK(json_of(std::span<const std::byte>(raw)) == R"("aGk=")");
  CHECK(json_of(std::vector<std::int8_t>{-1, 2}) == "[-1,2]");
  CHECK(json_of(std::vector<char>{'a'}) == "[97]");
  CHECK(json_of(std::array<std::uint8_t, 2>{1, 2}) == "[1,2]");
}

TEST_CASE("json encode: vectors, deques, lists, spans, arrays and sets as arrays", "[json]") {
  CHECK(json_of(std::vector<int>{1, -2, 3}) == "[1,-2,3]");
  CHECK(json_of(std::vector<int>{}) == "[]");
  CHECK(json_of(std::vector<bool>{true, false, true}) == "[true,false,true]");
  CHECK(json_of(std::vector<std::string>{"a", "b\n"}) == R"(["a","b\n"])");
  CHECK(json_of(std::vector<std::vector<int>>{{1}, {}, {2, 3}}) == "[[1],[],[2,3]]");
  CHECK(json_of(std::deque<int>{4, 5}) == "[4,5]");
  CHECK(json_of(std::list<std::string>{"x"}) == R"(["x"])");
  const std::vector<int> viewed{7, 8};
  CHECK(json_of(std::span<const int>(viewed)) == "[7,8]");
  CHECK(json_of(std::array<int, 3>{1, 2, 3}) == "[1,2,3]");
  CHECK(json_of(std::array<int, 0>{}) == "[]");
  CHECK(json_of(std::set<int>{3, 1, 2}) == "[1,2,3]");
  CHECK(json_of(std::multiset<int>{2, 1, 2}) == "[1,2,2]");
  CHECK(json_of(std::unordered_set<int>{9}) == "[9]");
  CHECK(json_of(std::unordered_multiset<int>{9, 9}) == "[9,9]");
}

TEST_CASE("json encode: optional and unique_ptr as null or the value", "[json]") {
  CHECK(json_of(std::optional<int>()) == "null");
  CHECK(json_of(std::optional<int>(5)) == "5");
  CHECK(json_of(std::optional<std::string>("s")) == R"("s")");
  CHECK(json_of(std::optional<std::optional<int>>(std::optional<int>())) == "null");
  CHECK(json_of(std::unique_ptr<int>()) == "null");
  CHECK(json_of(std::make_unique<named>(named{1, "u"})) == R"({"id":1,"name":"u"})");
  CHECK(json_of(std::vector<std::optional<int>>{1, std::nullopt}) == "[1,null]");
}

// ============================================================================ maps

enum class colour : std::uint8_t { red = 1, blue = 200 };

TEST_CASE("json encode: maps with string keys as objects", "[json]") {
  CHECK(json_of(std::map<std::string, int>{{"b", 2}, {"a", 1}}) == R"({"a":1,"b":2})");
  CHECK(json_of(std::map<std::string, int>{}) == "{}");
  CHECK(json_of(std::map<std::string, std::string>{{"k\"\\", "\t"}}) == R"({"k\"\\":"\t"})");
  CHECK(json_of(std::unordered_map<std::string, bool>{{"only", true}}) == R"({"only":true})");
  CHECK(json_of(std::map<std::string_view, int>{{"v", 1}}) == R"({"v":1})");
}

TEST_CASE("json encode: maps with integer or enum keys as objects keyed by the decimal", "[json]") {
  CHECK(json_of(std::map<int, std::string>{{7, "x"}, {-1, "y"}}) == R"({"-1":"y","7":"x"})");
  CHECK(json_of(std::map<std::uint64_t, int>{{18446744073709551615u, 1}}) == R"({"18446744073709551615":1})");
  CHECK(json_of(std::map<std::int8_t, int>{{-128, 0}}) == R"({"-128":0})");
  CHECK(json_of(std::map<char, int>{{'a', 0}}) == R"({"97":0})");
  CHECK(json_of(std::map<colour, int>{{colour::red, 1}, {colour::blue, 2}}) == R"({"1":1,"200":2})");
  CHECK(json_of(std::unordered_map<int, int>{{5, 6}}) == R"({"5":6})");
  CHECK(json_of(std::map<int, std::vector<int>>{{1, {2}}}) == R"({"1":[2]})");
}

TEST_CASE("json encode: maps with any other key as an array of [key, value] arrays", "[json]") {
  CHECK(json_of(std::map<std::pair<int, int>, std::string>{{{1, 2}, "a"}, {{0, 5}, "b"}}) ==
        R"([[[0,5],"b"],[[1,2],"a"]])");
  CHECK(json_of(std::map<std::pair<int, int>, int>{}) == "[]");
  CHECK(json_of(std::map<bool, int>{{false, 1}, {true, 2}}) == "[[false,1],[true,2]]");
  CHECK(json_of(std::map<flag, int>{{flag::on, 3}}) == "[[true,3]]");
  CHECK(json_of(std::map<double, int>{{0.5, 1}}) == "[[0.5,1]]");
  CHECK(json_of(std::map<std::vector<std::byte>, int>{{{std::byte{'v'}}, 1}}) == R"([["dg==",1]])");
}

// ============================================================================ members

struct sample {
  bool b;
  double d;
  std::string s;
  std::vector<std::uint16_t> v;
  std::optional<std::int8_t> o;
  std::map<std::string, std::int32_t> m;
};
struct put {
  std::string key;
  std::vector<std::byte> value;
};
struct nothing {};
struct order {
  std::uint64_t id;
  std::vector<named> lines;
  std::map<int, named> by_slot;
  std::optional<named> gift;
  std::unique_ptr<nothing> none;
};

TEST_CASE("json encode: pairs and tuples as arrays of exactly their elements", "[json]") {
  CHECK(json_of(std::pair<int, std::string>{1, "x"}) == R"([1,"x"])");
  CHECK(json_of(std::tuple<int, double, bool>{1, 2.5, false}) == "[1,2.5,false]");
  CHECK(json_of(std::tuple<>{}) == "[]");
  CHECK(json_of(std::tuple<std::tuple<>, std::pair<int, int>>{}) == "[[],[0,0]]");
}

TEST_CASE("json encode: structs as objects of their fields by name, in declaration order", "[json]") {
  CHECK(json_of(sample{true, 1.5, "hi", {1, 300}, -1, {{"a", -2}}}) ==
        R"({"b":true,"d":1.5,"s":"hi","v":[1,300],"o":-1,"m":{"a":-2}})");
  CHECK(json_of(put{"k", {std::byte{'v'}}}) == R"({"key":"k","value":"dg=="})");
  CHECK(json_of(nothing{}) == "{}");
  order o{42, {{1, "a"}, {2, "b"}}, {}, std::nullopt, nullptr};
  o.by_slot[3] = {3, "c"};
  CHECK(json_of(o) ==
        R"({"id":42,"lines":[{"id":1,"name":"a"},{"id":2,"name":"b"}],"by_slot":{"3":{"id":3,"name":"c"}},)"
        R"("gift":null,"none":null})");
  o.gift = named{9, "g"};
  o.none = std::make_unique<nothing>();
  CHECK(json_of(o).ends_with(R"("gift":{"id":9,"name":"g"},"none":{}})"));
  CHECK(json_of(std::vector<nothing>{{}, {}}) == "[{},{}]");
}

TEST_CASE("json encode: a struct's fields under the names its field_naming gives", "[json]") {
  CHECK(json_of(legacy_point{1, -2}) == R"({"X":1,"Y_2":-2})");
  CHECK(json_of(std::vector<legacy_point>{{3, 4}}) == R"([{"X":3,"Y_2":4}])");
}

// ============================================================================ time

TEST_CASE("json encode: durations as their count, in their own period", "[json]") {
  CHECK(json_of(5s) == "5");
  CHECK(json_of(-3ms) == "-3");
  CHECK(json_of(std::chrono::hours(2)) == "2");
  CHECK(json_of(std::chrono::duration<double>(1.5)) == "1.5");
  CHECK(json_of(std::chrono::duration<float, std::milli>(0.1f)) == "0.1");
  CHECK(json_of(std::chrono::duration<std::uint64_t, std::nano>(18446744073709551615u)) == "18446744073709551615");
}

template <class Duration>
using sys_time = std::chrono::time_point<std::chrono::system_clock, Duration>;

// The time point of a civil date and time, through the standard library's own calendar.
template <class Duration = std::chrono::seconds>
sys_time<Duration> at(int year, unsigned month, unsigned day, std::chrono::seconds time_of_day, Duration extra = {}) {
  const std::chrono::sys_days date{std::chrono::year(year) / std::chrono::month(month) / std::chrono::day(day)};
  return sys_time<Duration>(std::chrono::duration_cast<Duration>(date.time_since_epoch() + time_of_day) + extra);
}

TEST_CASE("json encode: time points in RFC 3339 UTC with the fraction digits their period needs", "[json]") {
  const std::chrono::seconds t = 3h + 4min + 5s;
  CHECK(json_of(at(2026, 12, 6, t)) == R"("2026-12-06T03:04:05Z")");
  CHECK(json_of(at<std::chrono::milliseconds>(2026, 12, 6, t, 123ms)) == R"("2026-12-06T03:04:05.123Z")");
  CHECK(json_of(at<std::chrono::microseconds>(2026, 12, 6, t, 123456us)) == R"("2026-12-06T03:04:05.123456Z")");
  CHECK(json_of(at<std::chrono::nanoseconds>(2026, 12, 6, t, 7ns)) == R"("2026-12-06T03:04:05.000000007Z")");
  CHECK(json_of(sys_time<std::chrono::seconds>()) == R"("1970-01-01T00:00:00Z")");
  CHECK(json_of(sys_time<std::chrono::minutes>(std::chrono::minutes(-1))) == R"("1969-12-31T23:59:00Z")");
  CHECK(json_of(sys_time<std::chrono::hours>(std::chrono::hours(24 * 365))) == R"("1971-01-01T00:00:00Z")");
  CHECK(json_of(sys_time<std::chrono::milliseconds>(-1ms)) == R"("1969-12-31T23:59:59.999Z")");
  CHECK(json_of(sys_time<std::chrono::nanoseconds>(-1ns)) == R"("1969-12-31T23:59:59.999999999Z")");
  CHECK(json_of(at(2024, 2, 29, 23h + 59min + 59s)) == R"("2024-02-29T23:59:59Z")");
  CHECK(json_of(at(2000, 3, 1, 0s)) == R"("2000-03-01T00:00:00Z")");
  CHECK(json_of(at(1900, 2, 28, 12h)) == R"("1900-02-28T12:00:00Z")");
  CHECK(json_of(at(0, 1, 1, 0s)) == R"("0000-01-01T00:00:00Z")");
  CHECK(json_of(at(9999, 12, 31, 23h + 59min + 59s)) == R"("9999-12-31T23:59:59Z")");
  CHECK(json_of(at<std::chrono::microseconds>(9999, 12, 31, 23h + 59min + 59s, 999999us)) ==
        R"("9999-12-31T23:59:59.999999Z")");
  using centiseconds = std::chrono::duration<std::int64_t, std::centi>;
  CHECK(json_of(sys_time<centiseconds>(centiseconds(150))) == R"("1970-01-01T00:00:01.500Z")");
  using thirds = std::chrono::duration<std::int64_t, std::ratio<1, 3>>;
  CHECK(json_of(sys_time<thirds>(thirds(1))) == R"("1970-01-01T00:00:00.333333333Z")");
  CHECK(json_of(sys_time<thirds>(thirds(-1))) == R"("1969-12-31T23:59:59.666666666Z")");
  using picoseconds = std::chrono::duration<std::int64_t, std::pico>;
  CHECK(json_of(sys_time<picoseconds>(picoseconds(-1))) == R"("1969-12-31T23:59:59.999999999Z")");
  using double_seconds = std::chrono::duration<double>;
  CHECK(json_of(sys_time<double_seconds>(double_seconds(1.5))) == R"("1970-01-01T00:00:01.500000000Z")");
  CHECK(json_of(sys_time<double_seconds>(double_seconds(-0.25))) == R"("1969-12-31T23:59:59.750000000Z")");
}

TEST_CASE("json encode: a time point outside the years 0000 to 9999 is refused", "[json]") {
  const std::string reason = "JSON (RFC 3339) cannot carry a time point outside the years 0000 to 9999";
  CHECK(error_of(at(10000, 1, 1, 0s)) == reason);
  CHECK(error_of(at(-1, 12, 31, 23h + 59min + 59s)) == reason);
  CHECK(error_of(sys_time<std::chrono::seconds>(std::chrono::seconds(std::numeric_limits<std::int64_t>::max()))) ==
        reason);
  CHECK(error_of(sys_time<std::chrono::seconds>(std::chrono::seconds(std::numeric_limits<std::int64_t>::min()))) ==
        reason);
  using years = std::chrono::duration<std::int64_t, std::ratio<31556952>>;
  CHECK(error_of(sys_time<years>(years(std::numeric_limits<std::int64_t>::max()))) == reason);
  CHECK(error_of(sys_time<years>(years(8030))) == reason);
  CHECK(error_of(sys_time<years>(years(8029))).empty());
  using double_seconds = std::chrono::duration<double>;
  CHECK(error_of(sys_time<double_seconds>(double_seconds(1e300))) == reason);
  CHECK(error_of(sys_time<double_seconds>(double_seconds(std::numeric_limits<double>::quiet_NaN()))) ==
        "JSON cannot carry a time point of NaN or infinite ticks");
  struct stamped {
    sys_time<std::chrono::seconds> when;
  };
  CHECK(error_of(stamped{at(10000, 1, 1, 0s)}) == "field \"when\": " + reason);
}

// Every day of the years RFC 3339 writes, against the standard library's calendar.
TEST_CASE("json encode: the civil date of every day from 0000 to 9999 is the standard library's", "[json]") {
  using geerpc::json::detail::civil_from_days;
  const long long first = std::chrono::sys_days(std::chrono::year(0) / 1 / 1).time_since_epoch().count();
  const long long last = std::chrono::sys_days(std::chrono::year(9999) / 12 / 31).time_since_epoch().count();
  long long wrong = 0;
  for (long long day = first; day <= last; ++day) {
    const auto date = civil_from_days(day);
    const std::chrono::year_month_day expected{std::chrono::sys_days(std::chrono::days(day))};
    if (date.year != static_cast<int>(expected.year()) || date.month != static_cast<unsigned>(expected.month()) ||
        date.day != static_cast<unsigned>(expected.day()))
      ++wrong;
  }
  CHECK(wrong == 0);
  CHECK(last - first + 1 == 3652425);
}

// ============================================================================ variants, bitsets, custom

TEST_CASE("json encode: a variant as [index, value]", "[json]") {
  CHECK(json_of(std::variant<int, std::string>("text")) == R"([1,"text"])");
  CHECK(json_of(std::variant<int, std::string>(5)) == "[0,5]");
  CHECK(json_of(std::variant<std::string, std::vector<named>>(std::vector<named>{{1, "v"}})) ==
        R"([1,[{"id":1,"name":"v"}]])");
  CHECK(json_of(std::vector<std::variant<bool, double>>{true, 0.5}) == "[[0,true],[1,0.5]]");
}

TEST_CASE("json encode: a variant left valueless by an exception is refused", "[json]") {
  std::variant<int, boom> v;
  CHECK_THROWS(v.emplace<1>(1));
  REQUIRE(v.valueless_by_exception());
  CHECK(error_of(v) == "a variant left valueless by an exception has no value");
}

TEST_CASE("json encode: a bitset as its to_string, bit N-1 first", "[json]") {
  std::bitset<5> bits;
  bits.set(0).set(2);
  CHECK(json_of(bits) == R"("00101")");
  CHECK(json_of(bits) == "\"" + bits.to_string() + "\"");
  CHECK(json_of(std::bitset<0>()) == R"("")");
  std::bitset<70> wide;
  wide.set(69).set(3);
  CHECK(json_of(wide) == "\"" + wide.to_string() + "\"");
}

TEST_CASE("json encode: a class with a serializer as its wire_type, or its own bytes in base64", "[json]") {
  CHECK(json_of(money("EUR", 150)) == R"(["EUR",150])");
  CHECK(error_of(money("\xff", 1)) == "string is not valid UTF-8 (byte 0)");
  CHECK(json_of(ip4(0x04030201)) == R"("AQIDBA==")");  // bytes 01 02 03 04, little-endian
  struct route {
    ip4 gateway;
    money cost;
  };
  CHECK(json_of(route{ip4(0x04030201), money("USD", -5)}) == R"({"gateway":"AQIDBA==","cost":["USD",-5]})");
}

}  // namespace json_encode_test
