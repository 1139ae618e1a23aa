// The JSON codec's decoder (json/decode.hpp, json/tape.hpp): every refusal of docs/protocol.md 8.2
// with its exact reason and byte offset, the tape's tokens and where they start, and a value read
// from inside a larger text through the cursor; the forms of 8.1 are decode_test.cpp's.
#include <array>
#include <bit>
#include <bitset>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "catch.hpp"
#include "decode_fixtures.hpp"

namespace json_decode_test {
namespace {

// ============================================================================ 8.2, refused

TEST_CASE("json decode: values nest at most 64 deep", "[json]") {
  const auto nested = [](std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  const std::string deepest = nested(64);
  json::tape sixty_four(bytes_of(deepest));
  CHECK(sixty_four.parse());
  CHECK(sixty_four.size() == 128);
  CHECK(message<int>(nested(65)) == "nested deeper than 64 levels at byte 64");
  // 100000 deep fails at the 65th level, without recursing further (nor overflowing the stack).
  CHECK(message<int>(nested(100000)) == "nested deeper than 64 levels at byte 64");
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += R"({"a":)";
  CHECK(message<int>(objects) == "nested deeper than 64 levels at byte 320");
}

TEST_CASE("json decode: numbers beyond their type's range are errors, never infinity", "[json]") {
  CHECK(message<double>("1e400") == "number out of range at byte 0");
  CHECK(message<std::vector<double>>("[1, -1e400]") == "number out of range at byte 4");
  // Refused when parsed, whatever the type: even where it would be skipped.
  CHECK(message<counter>(R"({"unknown":1e400})") == "number out of range at byte 11");
  CHECK(message<float>("1e39") == "number out of range for a float at byte 0");
  CHECK(message<float>("-3.5e38") == "number out of range for a float at byte 0");
  CHECK(message<std::uint64_t>("18446744073709551616") == "integer out of range (0 to 18446744073709551615) at byte 0");
  CHECK(message<std::int64_t>("-9223372036854775809") ==
        "integer out of range (-9223372036854775808 to 9223372036854775807) at byte 0");
  CHECK(message<unsigned>("-1") == "integer out of range (0 to 4294967295) at byte 0");
  CHECK(message<std::uint8_t>("300") == "integer out of range (0 to 255) at byte 0");
  CHECK(message<std::int8_t>("-129") == "integer out of range (-128 to 127) at byte 0");
  CHECK(message<int>("1.0") == "expected an integer, got 1.0 at byte 0");
  CHECK(message<int>("1e3") == "expected an integer, got 1e3 at byte 0");
  CHECK(message<int>("0." + std::string(60, '5')) ==
        "expected an integer, got 0." + std::string(38, '5') + "... at byte 0");
}

TEST_CASE("json decode: JSON's grammar and nothing more", "[json]") {
  CHECK(message<double>("NaN") == "syntax error at byte 0");
  CHECK(message<std::vector<double>>("[-Infinity]") == "syntax error at byte 2");
  CHECK(message<double>("Infinity") == "syntax error at byte 0");
  CHECK(message<std::vector<int>>("[1,]") == "syntax error at byte 3");
  CHECK(message<counter>(R"({"count":1,})") == "syntax error at byte 11");
  CHECK(message<int>("1 x") == "extra data after the value at byte 2");
  CHECK(message<int>("01") == "extra data after the value at byte 1");
  CHECK(message<int>("1 // comment") == "extra data after the value at byte 2");
  CHECK(message<std::string>("'x'") == "syntax error at byte 0");
  CHECK(message<int>("") == "incomplete JSON at byte 0");
  CHECK(message<std::vector<int>>("[1,2") == "incomplete JSON at byte 4");
  CHECK(message<int>("\xef\xbb\xbf"
                     "1") == "syntax error at byte 0");  // no byte order mark
  CHECK(decoded<int>(" \t\r\n1\n") == 1);
}

TEST_CASE("json decode: strings must be UTF-8, without lone surrogate escapes", "[json]") {
  CHECK(message<std::string>("\"\xff\"") == "syntax error at byte 1");
  CHECK(message<std::string>("\"a\xc3\"") == "syntax error at byte 2");
  CHECK(message<std::string>("\"\xed\xa0\x80\"") == "syntax error at byte 1");  // a surrogate in UTF-8
  CHECK(message<std::string>(R"("\ud800")") == "syntax error at byte 7");
  CHECK(message<std::string>(R"("\ud800\u0041")") == "illegal trailing surrogate at byte 9");
  CHECK(message<std::string>(R"("\udc00")") == "illegal trailing surrogate at byte 7");
}

TEST_CASE("json decode: a key twice in one object is an error", "[json]") {
  CHECK(message<counter>(R"({"count":1,"count":2})") == R"(duplicate key "count" at byte 11)");
  // Differing in case, naming one field.
  CHECK(message<counter>(R"({"count":1, "Count":2})") == R"(duplicate key "Count" for field "count" at byte 12)");
  // Naming no field; and in an object skipped as unknown.
  CHECK(message<counter>(R"({"x":1,"x":2})") == R"(duplicate key "x" at byte 7)");
  CHECK(message<counter>(R"({"u":{"y":[],"y":{}}})") == R"(duplicate key "y" at byte 13)");
  CHECK(message<std::map<std::string, int>>(R"({"a":1,"b":2,"a":3})") == R"(duplicate key "a" at byte 13)");
  // Keys compare after their escapes are read.
  CHECK(message<std::map<std::string, int>>(R"({"a":1,"\u0061":2})") == R"(duplicate key "a" at byte 7)");
  // A large object's keys are sorted to find the first repeat in the text's order.
  std::string large = "{";
  for (int i = 0; i < 40; ++i) large += "\"k" + std::to_string(i) + "\":0,";
  const std::size_t first_repeat = large.size();
  large += R"("k7":1,"k3":2})";
  CHECK(message<std::map<std::string, int>>(large) == R"(duplicate key "k7" at byte )" + std::to_string(first_repeat));
  // The key is printed escaped, and cut after 40 bytes.
  CHECK(message<counter>(R"({"\u0001":1,"\u0001":2})") == R"(duplicate key "\u0001" at byte 12)");
  const std::string key = "\\n\\\"" + std::string(50, 'z');
  CHECK(message<counter>("{\"" + key + "\":1,\"" + key + "\":2}") ==
        R"(duplicate key "\n\")" + std::string(38, 'z') + R"("... at byte )" + std::to_string(key.size() + 6));
}

TEST_CASE("json decode: null only where the type is an optional or a unique_ptr", "[json]") {
  CHECK(message<int>("null") == "expected an integer, got null at byte 0");
  CHECK(message<std::string>("null") == "expected a string, got null at byte 0");
  CHECK(message<std::vector<int>>("null") == "expected an array, got null at byte 0");
  CHECK(message<counter>(R"({"count":null})") == R"(field "count": expected an integer, got null at byte 9)");
}

TEST_CASE("json decode: a value of the wrong type names the field it sits in", "[json]") {
  CHECK(message<counter>(R"({"name":"x", "count":"12"})") ==
        R"(field "count": expected an integer, got a string at byte 21)");
  CHECK(message<outer>(R"({"inner":{"name":7}})") ==
        R"(field "inner.name": expected a string, got a number at byte 17)");
  CHECK(message<outer>(R"({"list":[{"count":1},{"count":true}]})") ==
        R"(field "list.count": expected an integer, got a boolean at byte 30)");
  CHECK(message<counter>("[]") == "expected an object, got an array at byte 0");
  CHECK(message<bool>(R"("true")") == "expected true or false, got a string at byte 0");
  CHECK(message<double>("{}") == "expected a number, got an object at byte 0");
}

TEST_CASE("json decode: arrays of a fixed size must have exactly it", "[json]") {
  CHECK(message<std::array<int, 3>>("[1,2]") ==
        "expected an array of 3 elements, got an array of 2 elements at byte 0");
  CHECK(message<std::array<int, 1>>("[1,2]") == "expected an array of 1 element, got an array of 2 elements at byte 0");
  CHECK(message<std::pair<int, int>>("[1,2,3]") ==
        "expected an array of 2 elements, got an array of 3 elements at byte 0");
  CHECK(message<std::tuple<int>>("7") == "expected an array of 1 element, got a number at byte 0");
  using choice = std::variant<int, std::string>;
  CHECK(message<choice>("[0]") == "expected an array [index, value], got an array of 1 element at byte 0");
  CHECK(message<choice>("[2,1]") == "variant index out of range at byte 1");
  CHECK(message<choice>("[-1,1]") == "variant index out of range at byte 1");
  CHECK(message<choice>(R"(["0",1])") == "expected a variant index, got a string at byte 1");
  CHECK(message<choice>(R"([1,1])") == "expected a string, got a number at byte 3");
  CHECK(message<std::map<std::pair<int, int>, int>>("[[[1,2]]]") ==
        "expected a [key, value] pair, got an array of 1 element at byte 1");
}

TEST_CASE("json decode: a repeated map key or set element is an error", "[json]") {
  CHECK(message<std::set<int>>("[1,2,1]") == "duplicate set element at byte 5");
  CHECK(message<std::unordered_set<std::string>>(R"(["a","a"])") == "duplicate set element at byte 5");
  CHECK(message<std::map<int, int>>(R"({"7":1,"07":2})") == "duplicate map key at byte 7");
  CHECK(message<std::map<std::pair<int, int>, int>>("[[[1,2],3],[[1,2],4]]") == "duplicate map key at byte 11");
}

TEST_CASE("json decode: integer map keys are strictly decimal and in range", "[json]") {
  using by_int = std::map<int, int>;
  using by_byte = std::map<std::uint8_t, int>;
  CHECK(message<by_int>(R"({"+1":0})") ==
        R"(map key "+1": expected an integer from -2147483648 to 2147483647 at byte 1)");
  CHECK(message<by_int>(R"({" 1":0})") ==
        R"(map key " 1": expected an integer from -2147483648 to 2147483647 at byte 1)");
  CHECK(message<by_int>(R"({"1 ":0})") ==
        R"(map key "1 ": expected an integer from -2147483648 to 2147483647 at byte 1)");
  CHECK(message<by_int>(R"({"":0})") == R"(map key "": expected an integer from -2147483648 to 2147483647 at byte 1)");
  CHECK(message<by_int>(R"({"1.0":0})") ==
        R"(map key "1.0": expected an integer from -2147483648 to 2147483647 at byte 1)");
  CHECK(message<by_byte>(R"({"-0":0})") == R"(map key "-0": expected an integer from 0 to 255 at byte 1)");
  CHECK(message<by_byte>(R"({"256":0})") == R"(map key "256": expected an integer from 0 to 255 at byte 1)");
  CHECK(decoded<by_int>(R"({"-0":5})") == by_int{{0, 5}});
  CHECK(message<std::map<colour, int>>(R"({"red":0})") ==
        R"(map key "red": expected an integer from 0 to 255 at byte 1)");
}

TEST_CASE("json decode: base64 must be padded, without whitespace", "[json]") {
  using bytes = std::vector<std::byte>;
  CHECK(message<bytes>(R"("QQ=")") == "invalid base64 at byte 0");
  CHECK(message<bytes>(R"("QQ")") == "invalid base64 at byte 0");
  CHECK(message<bytes>(R"("QQ ==")") == "invalid base64 at byte 0");
  CHECK(message<bytes>(R"("Q===")") == "invalid base64 at byte 0");
  CHECK(message<bytes>(R"("QQ==QQ==")") == "invalid base64 at byte 0");
  CHECK(message<bytes>(R"("QQ-_")") == "invalid base64 at byte 0");
  CHECK(message<kv>(R"({"value":[1,2]})") == R"(field "value": expected a base64 string, got an array at byte 9)");
}

TEST_CASE("json decode: a bitset's string has exactly N '0'/'1' characters", "[json]") {
  CHECK(message<std::bitset<5>>(R"("1011")") ==
        R"(expected a string of 5 '0' or '1' characters, got "1011" at byte 0)");
  CHECK(message<std::bitset<5>>(R"("10112")") ==
        R"(expected a string of 5 '0' or '1' characters, got "10112" at byte 0)");
  CHECK(message<std::bitset<5>>("22") == "expected a string of 5 '0' or '1' characters, got a number at byte 0");
}

TEST_CASE("json decode: time points must be real RFC 3339 times within their type's range", "[json]") {
  using whole = std::chrono::time_point<system_clock, std::chrono::seconds>;
  const auto refused = [](std::string_view text) {
    return "invalid RFC 3339 time " + std::string(text) + " at byte 0";
  };
  for (const std::string_view text :
       {R"("2026-13-01T00:00:00Z")", R"("2026-02-30T00:00:00Z")", R"("2023-02-29T00:00:00Z")",
        R"("2026-01-01T24:00:00Z")", R"("2026-01-01T00:60:00Z")", R"("2026-01-01T00:00:60Z")",
        R"("2026-01-01T00:00:00")", R"("2026-01-01 00:00:00Z")", R"("2026-01-01T00:00:00.Z")",
        R"("2026-01-01T00:00:00.1234567890Z")", R"("2026-01-01T00:00:00+24:00")", R"("2026-01-01T00:00:00+0100")",
        R"("2026-01-01T00:00:00ZZ")", R"("26-01-01T00:00:00Z")", R"("2026-00-01T00:00:00Z")", R"("")"}) {
    CHECK(message<whole>(text) == refused(text));
  }
  CHECK(message<whole>("0") == "expected an RFC 3339 time, got a number at byte 0");
  CHECK(message<whole>(R"("0000-01-01T00:59:59+01:00")") ==
        R"(time "0000-01-01T00:59:59+01:00" is outside the years 0000 to 9999 in UTC at byte 0)");
  CHECK(message<whole>(R"("9999-12-31T23:00:00-01:00")") ==
        R"(time "9999-12-31T23:00:00-01:00" is outside the years 0000 to 9999 in UTC at byte 0)");
  CHECK(decoded<whole>(R"("0000-01-01T01:00:00+01:00")").time_since_epoch().count() == -62167219200);
  // Nanoseconds in 64 bits reach 1677 to 2262 only.
  CHECK(message<system_clock::time_point>(R"("9999-12-31T23:59:59Z")") ==
        R"(time "9999-12-31T23:59:59Z" is beyond the range of its type at byte 0)");
  CHECK(decoded<system_clock::time_point>(R"("2262-04-11T23:47:16.854775807Z")").time_since_epoch().count() ==
        std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("json decode: the memory budget refuses bulk empties and takes them with a larger limit", "[json]") {
  // 1 MiB of empty arrays (349525 of them): a vector<int> of 24 bytes and two tokens of 16 bytes
  // each, for 3 bytes of text, pass 16 x the text's size.
  std::string text = "[";
  while (text.size() + 4 <= (std::size_t{1} << 20)) text += "[],";
  text += "[]]";
  const std::size_t arrays = (text.size() - 1) / 3;
  using rows = std::vector<std::vector<int>>;
  rows value;
  const json::decode_status refused = json::decode(bytes_of(text), value);
  const std::size_t limit = 16 * text.size() + 65536;
  CHECK(refused.message() == "decoded value would need more than " + std::to_string(limit) +
                                 " bytes of memory (limit: 16 x " + std::to_string(text.size()) +
                                 " input bytes + 65536) at byte 0");
  REQUIRE(json::decode(bytes_of(text), value, 64 * text.size()));
  CHECK(value.size() == arrays);
  // The tape's own blocks are charged: its second (4 KiB) at its 257th token, the 128th "]".
  CHECK(json::decode(bytes_of(text), value, 1000).message() ==
        "decoded value would need more than 1000 bytes of memory (limit set by the caller) at byte 383");
  // Honest values pass: 1 MiB of one-digit numbers (tokens of 16 bytes and ints of 4, for 2 bytes).
  std::string digits = "[";
  while (digits.size() + 3 <= (std::size_t{1} << 20)) digits += "7,";
  digits += "7]";
  std::vector<int> numbers;
  REQUIRE(json::decode(bytes_of(digits), numbers));
  CHECK(numbers.size() == (digits.size() - 1) / 2);
  // A string's characters are charged: 40000 bytes of an escaped string with a 10000-byte limit.
  const std::string escaped = "\"" + std::string(40000, 'a') + "\\n\"";
  std::string s;
  CHECK(json::decode(bytes_of(escaped), s, 10000).message() ==
        "decoded value would need more than 10000 bytes of memory (limit set by the caller) at byte 0");
}

// ============================================================================ the tape and the cursor

TEST_CASE("json decode: the tape holds each token with the byte where it starts", "[json]") {
  const std::string text = R"( [ 1 , "a\n" , {"k" : null, "x":[true]}, -2.5e1, 18446744073709551615 ] )";
  json::tape t(bytes_of(text));
  REQUIRE(t.parse());
  using k = json::token_kind;
  const std::vector<std::pair<k, std::size_t>> expected{
      {k::array_begin, 1}, {k::int64, 3},     {k::string, 7},       {k::object_begin, 15}, {k::key, 16},
      {k::null, 22},       {k::key, 28},      {k::array_begin, 32}, {k::boolean, 33},      {k::array_end, 37},
      {k::object_end, 38}, {k::floating, 41}, {k::uint64, 49},      {k::array_end, 70}};
  REQUIRE(t.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(t[i].kind == expected[i].first);
    CHECK(t[i].offset == expected[i].second);
  }
  CHECK(t[0].end() == 13);
  CHECK(t[0].count() == 5);
  CHECK(t[3].end() == 10);
  CHECK(t[3].count() == 2);
  CHECK(t.chars(t[2]) == "a\n");
  CHECK(t.chars(t[4]) == "k");
  CHECK(t[11].floating() == -25.0);
  CHECK(t[12].uint64() == std::numeric_limits<std::uint64_t>::max());
}

struct sum_args {
  int num1;
  int num2;
};

TEST_CASE("json decode: a value inside a larger text, as a JSON-RPC request's params", "[json]") {
  const std::string text = R"({"jsonrpc":"2.0","method":"Foo.Sum","params":[{"num1":1,"num2":2}],"id":7})";
  json::tape t(bytes_of(text));
  REQUIRE(t.parse());
  json::cursor in(t);
  REQUIRE(in.peek().kind == json::token_kind::object_begin);
  const std::size_t members = in.peek().count();
  in.next();
  std::tuple<sum_args> params{};
  std::string method;
  for (std::size_t i = 0; i < members; ++i) {
    const std::string_view key = in.chars(in.peek());
    in.next();
    if (key == "params")
      REQUIRE(json::decode_value(in, params));
    else if (key == "method")
      REQUIRE(json::decode_value(in, method));
    else
      in.skip();
  }
  CHECK(in.peek().kind == json::token_kind::object_end);
  CHECK(method == "Foo.Sum");
  CHECK(std::get<0>(params).num1 == 1);
  CHECK(std::get<0>(params).num2 == 2);
  // A failure there says where in the whole text.
  const std::string bad = R"({"params":[{"num1":"1"}]})";
  json::tape tb(bytes_of(bad));
  REQUIRE(tb.parse());
  json::cursor at_params(tb, 2);
  std::tuple<sum_args> wrong{};
  CHECK_FALSE(json::decode_value(at_params, wrong));
  CHECK(at_params.status().message() == R"(field "num1": expected an integer, got a string at byte 19)");
}

TEST_CASE("json decode: a call's one argument is the only element of an array", "[json]") {
  counter c;
  REQUIRE(json::decode_only_element(bytes_of(R"([{"count":2}])"), c));
  CHECK(c.count == 2);
  CHECK(json::decode_only_element(bytes_of(R"({"count":2})"), c).message() ==
        "expected an array of 1 element, got an object at byte 0");
  CHECK(json::decode_only_element(bytes_of("[1,2]"), c).message() ==
        "expected an array of 1 element, got an array of 2 elements at byte 0");
}

}  // namespace
}  // namespace json_decode_test
