// The JSON codec's encoder (json/encode.hpp, json/writer.hpp), its scalars and strings: the exact
// text of each of their rows of docs/protocol.md 8.1, and the values that have no JSON form (NaN,
// infinities, strings that are not UTF-8), refused with a message that names the field; the other
// types' forms are encode_forms_test.cpp's.
#include <cstddef>
#include <cstdint>
#include <geerpc/json/encode.hpp>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "catch.hpp"
#include "encode_fixtures.hpp"

namespace json_encode_test {

// ============================================================================ scalars

TEST_CASE("json encode: bool and every integer type's min and max, exactly", "[json]") {
  CHECK(json_of(true) == "true");
  CHECK(json_of(false) == "false");
  CHECK(json_of(std::int8_t{-128}) == "-128");
  CHECK(json_of(std::int8_t{127}) == "127");
  CHECK(json_of(std::uint8_t{0}) == "0");
  CHECK(json_of(std::uint8_t{255}) == "255");
  CHECK(json_of(std::int16_t{-32768}) == "-32768");
  CHECK(json_of(std::int16_t{32767}) == "32767");
  CHECK(json_of(std::uint16_t{65535}) == "65535");
  CHECK(json_of(std::numeric_limits<std::int32_t>::min()) == "-2147483648");
  CHECK(json_of(std::numeric_limits<std::int32_t>::max()) == "2147483647");
  CHECK(json_of(std::numeric_limits<std::uint32_t>::max()) == "4294967295");
  CHECK(json_of(std::numeric_limits<std::int64_t>::min()) == "-9223372036854775808");
  CHECK(json_of(std::numeric_limits<std::int64_t>::max()) == "9223372036854775807");
  CHECK(json_of(std::numeric_limits<std::uint64_t>::max()) == "18446744073709551615");
  CHECK(json_of(std::numeric_limits<long long>::min()) == "-9223372036854775808");
  CHECK(json_of(std::numeric_limits<unsigned long>::max()) == "18446744073709551615");
  CHECK(json_of(std::numeric_limits<short>::min()) == "-32768");
  CHECK(json_of(std::numeric_limits<signed char>::min()) == "-128");
  CHECK(json_of(std::numeric_limits<unsigned char>::max()) == "255");
  CHECK(json_of('A') == "65");
  CHECK(json_of(std::numeric_limits<char8_t>::max()) == "255");
  CHECK(json_of(std::numeric_limits<char16_t>::max()) == "65535");
  CHECK(json_of(std::numeric_limits<char32_t>::max()) == "4294967295");
  CHECK(json_of(std::numeric_limits<wchar_t>::min()) == "-2147483648");
  CHECK(json_of(std::numeric_limits<wchar_t>::max()) == "2147483647");
  CHECK(json_of(0) == "0");
  CHECK(json_of(-7) == "-7");
}

TEST_CASE("json encode: floating point as the shortest text that reads back the same", "[json]") {
  CHECK(json_of(1.5) == "1.5");
  CHECK(json_of(0.1) == "0.1");
  CHECK(json_of(1e300) == "1e+300");
  CHECK(json_of(0.0) == "0");
  CHECK(json_of(-0.0) == "-0");
  CHECK(json_of(100.0) == "100");
  CHECK(json_of(-2.25) == "-2.25");
  CHECK(json_of(5e-324) == "5e-324");
  CHECK(json_of(std::numeric_limits<double>::max()) == "1.7976931348623157e+308");
  CHECK(json_of(3.4e38f) == "3.4e+38");
  CHECK(json_of(0.1f) == "0.1");
  CHECK(json_of(-0.0f) == "-0");
  CHECK(json_of(std::numeric_limits<float>::max()) == "3.4028235e+38");
  CHECK(json_of(16777216.0f) == "16777216");
}

TEST_CASE("json encode: NaN and the infinities of a double and a float are refused", "[json]") {
  CHECK(error_of(std::numeric_limits<double>::quiet_NaN()) == "JSON cannot carry NaN");
  CHECK(error_of(std::numeric_limits<double>::infinity()) == "JSON cannot carry infinity");
  CHECK(error_of(-std::numeric_limits<double>::infinity()) == "JSON cannot carry -infinity");
  CHECK(error_of(std::numeric_limits<float>::quiet_NaN()) == "JSON cannot carry NaN");
  CHECK(error_of(std::numeric_limits<float>::infinity()) == "JSON cannot carry infinity");
  CHECK(error_of(-std::numeric_limits<float>::infinity()) == "JSON cannot carry -infinity");
  CHECK(error_of(std::vector<double>{1.0, std::numeric_limits<double>::signaling_NaN()}) == "JSON cannot carry NaN");
  CHECK(error_of(std::chrono::duration<float>(std::numeric_limits<float>::infinity())) == "JSON cannot carry infinity");
}

enum class small : std::int8_t { low = -3, high = 100 };
enum plain_fixed : std::uint64_t { huge = 18446744073709551615u };

TEST_CASE("json encode: an enum as its underlying integer, true/false over bool", "[json]") {
  CHECK(json_of(small::low) == "-3");
  CHECK(json_of(small::high) == "100");
  CHECK(json_of(flag::on) == "true");
  CHECK(json_of(flag::off) == "false");
  CHECK(json_of(huge) == "18446744073709551615");
  CHECK(json_of(std::byte{0xab}) == "171");
}

// ============================================================================ strings

// Every control character, escaped as 8.1 says: five by their letters, the others as \u00XX.
TEST_CASE("json encode: a string escapes the control characters, quote and backslash, nothing else", "[json]") {
  std::string controls;
  for (char c = 0; c < 0x20; ++c) controls += c;
  CHECK(json_of(controls) ==
        R"("\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f)"
        R"(\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f")");
  CHECK(json_of(std::string(R"(say "hi" \ bye)")) == R"("say \"hi\" \\ bye")");
  CHECK(json_of(std::string("/<>&'\x7f")) == "\"/<>&'\x7f\"");
  CHECK(json_of(std::string()) == R"("")");
  CHECK(json_of(std::string_view("view")) == R"("view")");
}

TEST_CASE("json encode: multi-byte UTF-8 passes unchanged, U+2028 and U+2029 included", "[json]") {
  const std::string text = "caf\u00e9 \u20ac \u4e2d\u6587 \U0001F600 \u2028\u2029 \U0010FFFF \u0080 \u07ff \uffff";
  CHECK(json_of(text) == "\"" + text + "\"");
  // The edges of each class of sequence: U+0080, U+07FF, U+0800, U+D7FF, U+E000, U+FFFF, U+10000.
  const std::string edges = "\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf\xf0\x90\x80\x80";
  CHECK(json_of(edges) == "\"" + edges + "\"");
}

// The same string as a byte-at-a-time escaper writes it: what the bulk copy (8 bytes at a time)
// must agree with wherever the bytes that end a run fall.
std::string escaped_one_by_one(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      static constexpr std::array<std::string_view, 32> escapes{
          "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007",
          "\\b",     "\\t",     "\\n",     "\\u000b", "\\f",     "\\r",     "\\u000e", "\\u000f",
          "\\u0010", "\\u0011", "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017",
          "\\u0018", "\\u0019", "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f"};
      out += escapes[u];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

TEST_CASE("json encode: strings escape right wherever the special bytes fall in the bulk copy", "[json]") {
  const std::array<std::string_view, 9> specials{
      "\"", "\\", "\n", "\x01", "\x1f", "\xc3\xa9", "\xe2\x80\xa8", "\xf0\x9f\x98\x80", " "};
  for (std::size_t length = 0; length < 40; ++length)
    for (std::size_t at = 0; at <= length; ++at)
      for (const std::string_view special : specials) {
        std::string text(length, 'a');
        text.insert(at, special);
        INFO("length " << length << ", at " << at);
        CHECK(json_of(text) == escaped_one_by_one(text));
      }
  std::mt19937 random(29);
  std::uniform_int_distribution<int> pick(0, static_cast<int>(specials.size()) + 3);
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    for (int i = pick(random) * 3; i > 0; --i) {
      const auto choice = static_cast<std::size_t>(pick(random));
      text +=
          choice < specials.size() ? specials[choice] : std::string_view("xyz~").substr(choice - specials.size(), 1);
    }
    CHECK(json_of(text) == escaped_one_by_one(text));
  }
}

struct holder {
  std::vector<named> items;
  named inner;
};

TEST_CASE("json encode: a string that is not UTF-8 is refused, each class of fault, naming the byte", "[json]") {
  const auto reason = [](std::size_t byte) { return "string is not valid UTF-8 (byte " + std::to_string(byte) + ")"; };
  CHECK(error_of(std::string("ab\x80")) == reason(2));                    // a stray continuation byte
  CHECK(error_of(std::string("\xbf")) == reason(0));                      // another
  CHECK(error_of(std::string("abc\xc3")) == reason(3));                   // cut short: 2 bytes
  CHECK(error_of(std::string("\xe2\x82")) == reason(0));                  // cut short: 3 bytes
  CHECK(error_of(std::string("x\xf0\x9f\x98")) == reason(1));             // cut short: 4 bytes
  CHECK(error_of(std::string("\xc3(")) == reason(0));                     // not a continuation
  CHECK(error_of(std::string("\xe2\x28\xa1")) == reason(0));              // not a continuation, 2nd of 3
  CHECK(error_of(std::string("\xf0\x9f\x98(")) == reason(0));             // not a continuation, 4th of 4
  CHECK(error_of(std::string("\xc0\x80")) == reason(0));                  // overlong NUL
  CHECK(error_of(std::string("\xc1\xbf")) == reason(0));                  // overlong U+007F
  CHECK(error_of(std::string("\xe0\x80\xaf")) == reason(0));              // overlong '/'
  CHECK(error_of(std::string("\xe0\x9f\xbf")) == reason(0));              // overlong U+07FF
  CHECK(error_of(std::string("\xf0\x8f\xbf\xbf")) == reason(0));          // overlong U+FFFF
  CHECK(error_of(std::string("a\xed\xa0\x80")) == reason(1));             // surrogate U+D800
  CHECK(error_of(std::string("\xed\xbf\xbf")) == reason(0));              // surrogate U+DFFF
  CHECK(error_of(std::string("\xed\xa0\xbd\xed\xb8\x80")) == reason(0));  // a surrogate pair (CESU-8)
  CHECK(error_of(std::string("\xf4\x90\x80\x80")) == reason(0));          // U+110000
  CHECK(error_of(std::string("\xf5\x80\x80\x80")) == reason(0));          // past U+10FFFF
  CHECK(error_of(std::string("\xf8\x88\x80\x80\x80")) == reason(0));
  CHECK(error_of(std::string("\xfe")) == reason(0));
  CHECK(error_of(std::string("\xff")) == reason(0));
  CHECK(error_of(std::string("0123456789abcdef\xff")) == reason(16));  // after the bulk copy
  CHECK(error_of(std::string_view("ok\xed\xa0\x80")) == reason(2));
  CHECK(error_of(std::map<std::string, int>{{"\xff", 1}}) == reason(0));  // a key too
}

TEST_CASE("json encode: an error inside a struct names the field, by its path", "[json]") {
  CHECK(error_of(named{1, "ab\xc3"}) == "field \"name\": string is not valid UTF-8 (byte 2)");
  holder in_vector{{{1, "fine"}, {2, "caf\xed\xa0\x80"}}, {3, "ok"}};
  CHECK(error_of(in_vector) == "field \"items.name\": string is not valid UTF-8 (byte 3)");
  holder in_member{{}, {3, "\xe0\x80\x80"}};
  CHECK(error_of(in_member) == "field \"inner.name\": string is not valid UTF-8 (byte 0)");
  struct measured {
    double x;
  };
  CHECK(error_of(measured{std::numeric_limits<double>::quiet_NaN()}) == "field \"x\": JSON cannot carry NaN");
  try {
    (void)json_of(in_vector);
    FAIL("no encode_error");
  } catch (const encode_error& error) {
    CHECK(error.path() == "items.name");
    CHECK(error.reason() == "string is not valid UTF-8 (byte 3)");
  }
  try {
    (void)json_of(std::string("\xff"));
    FAIL("no encode_error");
  } catch (const encode_error& error) {
    CHECK(error.path().empty());
    CHECK(error.reason() == "string is not valid UTF-8 (byte 0)");
  }
}

TEST_CASE("json encode: encode appends, and a refused value leaves the buffer as it was", "[json]") {
  std::vector<std::byte> out{std::byte{'x'}};
  geerpc::json::encode(named{7, "a"}, out);
  CHECK(std::string(reinterpret_cast<const char*>(out.data()), out.size()) == R"(x{"id":7,"name":"a"})");
  const std::vector<std::byte> before = out;
  CHECK_THROWS_AS(geerpc::json::encode(holder{{{1, "fine"}, {2, "\xff"}}, {}}, out), encode_error);
  CHECK(out == before);
  CHECK_THROWS_AS(geerpc::json::encode(std::vector<float>{1, std::numeric_limits<float>::infinity()}, out),
                  encode_error);
  CHECK(out == before);
}

}  // namespace json_encode_test
