// The JSON codec's decoder (json/decode.hpp): every form of docs/protocol.md 8.1 read back from
// hand-written text (not from the encoder, so that the two cannot agree on a mistake), and struct
// fields matched by name; the refusals of 8.2 are decode_refusal_test.cpp's.
#include <array>
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
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "catch.hpp"
#include "decode_fixtures.hpp"

namespace json_decode_test {
namespace {

// ============================================================================ 8.1, read back

TEST_CASE("json decode: bool from true and false", "[json]") {
  CHECK(decoded<bool>("true"));
  CHECK_FALSE(decoded<bool>(" false "));
}

TEST_CASE("json decode: integers exact, at both ends of every width", "[json]") {
  CHECK(decoded<std::int32_t>("-7") == -7);
  CHECK(decoded<std::uint64_t>("18446744073709551615") == std::numeric_limits<std::uint64_t>::max());
  CHECK(decoded<std::int64_t>("-9223372036854775808") == std::numeric_limits<std::int64_t>::min());
  CHECK(decoded<std::int64_t>("9223372036854775807") == std::numeric_limits<std::int64_t>::max());
  CHECK(decoded<std::int8_t>("-128") == -128);
  CHECK(decoded<std::uint8_t>("255") == 255);
  CHECK(decoded<char>("65") == 'A');
  CHECK(decoded<char32_t>("128512") == U'\U0001F600');
  CHECK(decoded<int>("-0") == 0);
}

TEST_CASE("json decode: floats and doubles from any number, correctly rounded", "[json]") {
  CHECK(decoded<double>("1.5") == 1.5);
  CHECK(decoded<double>("1e+300") == 1e300);
  CHECK(decoded<double>("0") == 0.0);
  CHECK(decoded<double>("0.1") == 0.1);
  CHECK(decoded<double>("-7") == -7.0);
  CHECK(decoded<double>("18446744073709551615") == 18446744073709551615.0);
  CHECK(std::signbit(decoded<double>("-0.0")));
  CHECK(std::signbit(decoded<double>("-0")));  // -0.0 written shortest
  CHECK(std::signbit(decoded<float>("-0")));
  CHECK_FALSE(std::signbit(decoded<double>("0")));
  CHECK(decoded<double>("1.7976931348623157e308") == std::numeric_limits<double>::max());
  CHECK(decoded<double>("4.9406564584124654e-324") == std::numeric_limits<double>::denorm_min());
  CHECK(decoded<double>("1e-400") == 0.0);  // below the smallest: its zero, not an error
  CHECK(decoded<float>("0.1") == 0.1f);
  CHECK(decoded<float>("3.4028235e38") == std::numeric_limits<float>::max());
  CHECK(decoded<float>("16777217") == 16777216.0f);
  // Just below the midpoint of two floats: read through a double, it would round twice, up.
  CHECK(std::bit_cast<std::uint32_t>(decoded<float>("1.00000017881393432617187499")) == 0x3f800001u);
}

TEST_CASE("json decode: enums from their underlying integer, over bool from true and false", "[json]") {
  CHECK(decoded<colour>("2") == colour::blue);
  CHECK(decoded<level>("-1") == level::low);
  CHECK(decoded<toggle>("true") == toggle::on);
  CHECK(message<colour>("256") == "integer out of range (0 to 255) at byte 0");
  CHECK(message<toggle>("1") == "expected true or false, got a number at byte 0");
}

TEST_CASE("json decode: strings with every escape, and UTF-8 as it is", "[json]") {
  CHECK(decoded<std::string>(R"("a\"b\\c\/d\n\t\r\b\f\u0001")") == "a\"b\\c/d\n\t\r\b\f\x01");
  CHECK(decoded<std::string>(R"("\u00e9\ud83d\ude00")") == "\xc3\xa9\xf0\x9f\x98\x80");
  CHECK(decoded<std::string>("\"\xc3\xa9t\xc3\xa9\"") == "\xc3\xa9t\xc3\xa9");
  CHECK(decoded<std::string>(R"("")").empty());
  const std::string long_text(1000, 'x');
  CHECK(decoded<std::string>("\"" + long_text + "\"") == long_text);
}

TEST_CASE("json decode: bytes from base64, as Go writes []byte", "[json]") {
  CHECK(decoded<std::vector<std::byte>>(R"("AQID")") == byte_vector({1, 2, 3}));
  CHECK(decoded<std::vector<std::byte>>(R"("/w==")") == byte_vector({0xff}));
  CHECK(decoded<std::vector<unsigned char>>(R"("AAE=")") == std::vector<unsigned char>{0, 1});
  CHECK(decoded<std::vector<std::byte>>(R"("")").empty());
  // Other vectors of small integers are arrays.
  CHECK(decoded<std::vector<signed char>>("[1,-2]") == std::vector<signed char>{1, -2});
}

TEST_CASE("json decode: sequences and sets from arrays", "[json]") {
  CHECK(decoded<std::vector<int>>("[1, 2 ,3]") == std::vector<int>{1, 2, 3});
  CHECK(decoded<std::vector<bool>>("[true,false,true]") == std::vector<bool>{true, false, true});
  CHECK(decoded<std::vector<std::vector<int>>>("[[],[1],[2,3]]") == std::vector<std::vector<int>>{{}, {1}, {2, 3}});
  CHECK(decoded<std::deque<std::string>>(R"(["a","b"])") == std::deque<std::string>{"a", "b"});
  CHECK(decoded<std::list<int>>("[3,1]") == std::list<int>{3, 1});
  CHECK(decoded<std::array<int, 3>>("[1,2,3]") == std::array<int, 3>{1, 2, 3});
  CHECK(decoded<std::array<int, 0>>("[]").empty());
  CHECK(decoded<std::set<int>>("[3,1,2]") == std::set<int>{1, 2, 3});
  CHECK(decoded<std::multiset<int>>("[1,1]") == std::multiset<int>{1, 1});
  CHECK(decoded<std::unordered_set<std::string>>(R"(["x","y"])") == std::unordered_set<std::string>{"x", "y"});
}

TEST_CASE("json decode: optional and unique_ptr from null or the value", "[json]") {
  CHECK(decoded<std::optional<int>>("null") == std::nullopt);
  CHECK(decoded<std::optional<int>>("5") == 5);
  CHECK(decoded<std::unique_ptr<int>>("null") == nullptr);
  const auto owned = decoded<std::unique_ptr<std::string>>(R"("x")");
  REQUIRE(owned != nullptr);
  CHECK(*owned == "x");
  // null is the outer optional empty, not an inner one.
  CHECK_FALSE(decoded<std::optional<std::optional<int>>>("null").has_value());
  CHECK(decoded<std::vector<std::optional<int>>>("[null,1]") == std::vector<std::optional<int>>{std::nullopt, 1});
}

TEST_CASE("json decode: maps from objects (string or decimal keys) or arrays of pairs", "[json]") {
  CHECK(decoded<std::map<std::string, int>>(R"({"b":2,"a":1})") == std::map<std::string, int>{{"a", 1}, {"b", 2}});
  CHECK(decoded<std::unordered_map<int, std::string>>(R"({"7":"x","-3":"y"})") ==
        std::unordered_map<int, std::string>{{7, "x"}, {-3, "y"}});
  CHECK(decoded<std::map<std::uint64_t, int>>(R"({"18446744073709551615":1})") ==
        std::map<std::uint64_t, int>{{std::numeric_limits<std::uint64_t>::max(), 1}});
  CHECK(decoded<std::map<colour, int>>(R"({"2":5})") == std::map<colour, int>{{colour::blue, 5}});
  CHECK(decoded<std::map<std::pair<int, int>, int>>("[[[1,2],3],[[0,0],4]]") ==
        std::map<std::pair<int, int>, int>{{{1, 2}, 3}, {{0, 0}, 4}});
  CHECK(decoded<std::map<toggle, int>>("[[true,1]]") == std::map<toggle, int>{{toggle::on, 1}});
  CHECK(decoded<std::map<std::string, int>>("{}").empty());
}

TEST_CASE("json decode: pairs and tuples from arrays of exactly their elements", "[json]") {
  CHECK(decoded<std::pair<int, std::string>>(R"([1, "x"])") == std::pair<int, std::string>{1, "x"});
  CHECK(decoded<std::tuple<bool, double, colour>>("[true,2.5,1]") ==
        std::tuple<bool, double, colour>{true, 2.5, colour::green});
  CHECK(decoded<std::tuple<>>("[]") == std::tuple<>{});
}

TEST_CASE("json decode: a struct from an object of its fields by name", "[json]") {
  const kv pair = decoded<kv>(R"({"key":"k","value":"dg=="})");
  CHECK(pair.key == "k");
  CHECK(pair.value == byte_vector({'v'}));
  const outer nested = decoded<outer>(R"({"inner":{"count":1,"name":"a"},"list":[{"count":2}],"ratio":null})");
  CHECK(nested.inner.count == 1);
  CHECK(nested.inner.name == "a");
  REQUIRE(nested.list.size() == 1);
  CHECK(nested.list[0].count == 2);
  CHECK_FALSE(nested.ratio.has_value());
}

TEST_CASE("json decode: durations from a number of their ticks", "[json]") {
  CHECK(decoded<std::chrono::milliseconds>("1500") == std::chrono::milliseconds(1500));
  CHECK(decoded<std::chrono::duration<double>>("1.5").count() == 1.5);
  CHECK(decoded<std::chrono::seconds>("-3") == std::chrono::seconds(-3));
  CHECK(message<std::chrono::seconds>("1.5") == "expected an integer, got 1.5 at byte 0");
}

TEST_CASE("json decode: time points from RFC 3339, finer digits dropped towards the past", "[json]") {
  using std::chrono::seconds;
  using std::chrono::time_point;
  using micro = time_point<system_clock, std::chrono::microseconds>;
  constexpr std::int64_t at_2026 = 1796526245;  // 2026-12-06T03:04:05Z
  CHECK(decoded<micro>(R"("2026-12-06T03:04:05.123456Z")").time_since_epoch().count() == at_2026 * 1000000 + 123456);
  CHECK(decoded<system_clock::time_point>(R"("2026-12-06T03:04:05.123456789Z")").time_since_epoch() ==
        std::chrono::nanoseconds(at_2026 * 1000000000 + 123456789));
  CHECK(decoded<micro>(R"("2026-12-06t03:04:05.1234567z")").time_since_epoch().count() == at_2026 * 1000000 + 123456);
  using whole = time_point<system_clock, seconds>;
  CHECK(decoded<whole>(R"("1970-01-01T00:00:00Z")").time_since_epoch().count() == 0);
  CHECK(decoded<whole>(R"("1969-12-31T23:59:59.5Z")").time_since_epoch().count() == -1);  // towards the past
  CHECK(decoded<whole>(R"("1970-01-01T01:00:00+01:00")").time_since_epoch().count() == 0);
  CHECK(decoded<whole>(R"("1969-12-31T19:00:00-05:00")").time_since_epoch().count() == 0);
  CHECK(decoded<whole>(R"("2024-02-29T00:00:00Z")").time_since_epoch().count() == 1709164800);
  CHECK(decoded<whole>(R"("0000-01-01T00:00:00Z")").time_since_epoch().count() == -62167219200);
  CHECK(decoded<whole>(R"("9999-12-31T23:59:59Z")").time_since_epoch().count() == 253402300799);
  CHECK(decoded<time_point<system_clock, std::chrono::duration<double>>>(R"("1970-01-01T00:00:01.5Z")")
            .time_since_epoch()
            .count() == 1.5);
}

TEST_CASE("json decode: variants from [index, value]", "[json]") {
  using choice = std::variant<std::monostate, int, std::string>;
  CHECK(decoded<choice>(R"([2, "text"])") == choice(std::in_place_index<2>, "text"));
  CHECK(decoded<choice>("[1,-4]") == choice(-4));
  CHECK(decoded<choice>("[0,{}]") == choice());  // std::monostate: a struct without fields
}

TEST_CASE("json decode: bitsets from N '0'/'1' characters, bit N-1 first", "[json]") {
  CHECK(decoded<std::bitset<5>>(R"("10110")") == std::bitset<5>("10110"));
  CHECK(decoded<std::bitset<0>>(R"("")").none());
}

TEST_CASE("json decode: classes with a serializer, through their wire type or as base64 of their bytes", "[json]") {
  const money m = decoded<money>(R"(["EUR", 250])");
  CHECK(m.currency() == "EUR");
  CHECK(m.cents() == 250);
  CHECK(decoded<ip4>(R"("AQIDBA==")").bits() == 0x04030201u);
  CHECK(message<money>(R"(["EUR", -1])") == "value refused by its geerpc::codec::serializer at byte 0");
  CHECK(message<std::vector<ip4>>(R"(["AQID"])") == "truncated input at byte 1");
  CHECK(message<ip4>(R"("/////w==")") == "value refused by its geerpc::codec::serializer at byte 0");
  CHECK(message<ip4>(R"("AQIDBAU=")") == "trailing bytes after the serializer's value at byte 0");
  CHECK(message<ip4>("4") == "expected a base64 string, got a number at byte 0");
}

// ============================================================================ struct fields

TEST_CASE("json decode: fields match by exact name, else ignoring ASCII case", "[json]") {
  const counter exact = decoded<counter>(R"({"name":"n","count":3})");
  CHECK(exact.count == 3);
  CHECK(exact.name == "n");
  const counter folded = decoded<counter>(R"({"COUNT":4,"Name":"m"})");
  CHECK(folded.count == 4);
  CHECK(folded.name == "m");
  // Where two fields differ only in case, each key sets the one it names exactly.
  const both_cases both = decoded<both_cases>(R"({"A":1,"a":2})");
  CHECK(both.a == 2);
  CHECK(both.A == 1);
}

TEST_CASE("json decode: unknown keys are skipped whatever their value, nested ones included", "[json]") {
  const counter c = decoded<counter>(
      R"({"extra":{"count":99,"deep":[[{"x":[]}],{}]},"count":5,"list":[1,[2,{"name":"no"}]],"z":null,"name":"y"})");
  CHECK(c.count == 5);
  CHECK(c.name == "y");
}

TEST_CASE("json decode: missing fields keep their defaults, default member initializers included", "[json]") {
  const counter empty = decoded<counter>("{}");
  CHECK(empty.count == 7);
  CHECK(empty.name.empty());
  // The value decoded into is made afresh: what it held before does not leak into missing fields.
  counter reused{1, "old"};
  REQUIRE(json::decode(bytes_of(R"({"name":"new"})"), reused));
  CHECK(reused.count == 7);
  CHECK(reused.name == "new");
}

}  // namespace
}  // namespace json_decode_test
