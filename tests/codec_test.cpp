// The binary codec's wire format: the exact bytes each kind of value is written as (the format is
// a contract with other implementations, so it is pinned byte for byte), and that each kind round
// trips. Hostile input and the compile-time facts: codec_decode_test.cpp.
#include "codec_fixtures.hpp"

namespace codec_test {

using namespace codec_fixtures;

// ============================================================================ scalars

TEST_CASE("bool is one byte, 0 or 1, and round trips", "[codec]") {
  CHECK(encode(true) == bytes_of({0x01}));
  CHECK(encode(false) == bytes_of({0x00}));
  check_round_trip(true, false);
  check_round_trip(false, true);
}

TEMPLATE_TEST_CASE("integers of every width and signedness round trip as fixed-size little-endian bytes", "[codec]",
                   std::int8_t, std::uint8_t, std::int16_t, std::uint16_t, std::int32_t, std::uint32_t, std::int64_t,
                   std::uint64_t, char, signed char, unsigned char, char8_t, char16_t, char32_t, wchar_t, short,
                   long long, unsigned long) {
  using limits = std::numeric_limits<TestType>;
  const std::array<TestType, 6> values{limits::min(),
                                       limits::max(),
                                       TestType{0},
                                       TestType{1},
                                       static_cast<TestType>(limits::max() / 3),
                                       static_cast<TestType>(limits::min() + 1)};
  STATIC_REQUIRE(kind_of<TestType>() == type_kind::integer);
  STATIC_REQUIRE(min_encoded_size<TestType>() == sizeof(TestType));
  for (const TestType value : values) {
    const byte_vector encoded = encode(value);
    CHECK(encoded == little_endian(unsigned_bits(value)));
    const auto different = static_cast<TestType>(value ^ TestType{1});
    CHECK(unsigned_bits(round_trip(value, different)) == unsigned_bits(value));
  }
}

TEST_CASE("integers are written little-endian whatever the host order", "[codec]") {
  CHECK(encode(std::uint16_t{0x1234}) == bytes_of({0x34, 0x12}));
  CHECK(encode(std::int32_t{-2}) == bytes_of({0xfe, 0xff, 0xff, 0xff}));
  CHECK(encode(std::uint64_t{0x0102030405060708}) == bytes_of({0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01}));
  CHECK(encode(std::int8_t{-128}) == bytes_of({0x80}));
  CHECK(encode('A') == bytes_of({0x41}));
  CHECK(encode(char32_t{0x1f600}) == bytes_of({0x00, 0xf6, 0x01, 0x00}));
}

TEMPLATE_TEST_CASE("floating point values round trip bit-exact, NaN payloads, infinities and -0.0 included", "[codec]",
                   float, double) {
  using limits = std::numeric_limits<TestType>;
  using bits = decltype(unsigned_bits(TestType{}));
  constexpr bool is_float = sizeof(TestType) == 4;
  const std::vector<TestType> values{
      TestType{0},
      -TestType{0},
      TestType{1.5},
      TestType{-2.25},
      limits::infinity(),
      -limits::infinity(),
      limits::quiet_NaN(),
      std::bit_cast<TestType>(static_cast<bits>(is_float ? 0x7fc01234u : 0x7ff8000000001234ull)),  // payload
      std::bit_cast<TestType>(static_cast<bits>(is_float ? 0xffc00001u : 0xfff8000000000001ull)),  // negative NaN
      std::bit_cast<TestType>(static_cast<bits>(is_float ? 0x7f800001u : 0x7ff0000000000001ull)),  // signalling
      limits::denorm_min(),
      limits::min(),
      limits::max(),
      limits::lowest(),
      limits::epsilon(),
  };
  STATIC_REQUIRE(kind_of<TestType>() == type_kind::floating);
  STATIC_REQUIRE(min_encoded_size<TestType>() == sizeof(TestType));
  for (const TestType value : values) {
    CAPTURE(unsigned_bits(value));
    CHECK(encode(value) == little_endian(unsigned_bits(value)));
    CHECK(unsigned_bits(round_trip(value, TestType{42})) == unsigned_bits(value));
  }
}

TEST_CASE("float and double are IEEE 754 bits, little-endian", "[codec]") {
  CHECK(encode(1.0f) == bytes_of({0x00, 0x00, 0x80, 0x3f}));
  CHECK(encode(1.0) == bytes_of({0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f}));
  CHECK(encode(-0.0) == bytes_of({0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80}));
}

TEST_CASE("enums travel as their underlying integer, whatever its width and signedness", "[codec]") {
  CHECK(encode(small_signed::low) == bytes_of({0x9c}));
  CHECK(encode(mid_unsigned::one_two) == bytes_of({0x02, 0x01}));
  CHECK(encode(wide_unsigned::big) == bytes_of({0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe}));
  CHECK(encode(wide_signed::negative) == bytes_of({0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
  CHECK(encode(green) == little_endian(unsigned_bits(green)));
  CHECK(encode(std::byte{0xab}) == bytes_of({0xab}));

  check_round_trip(small_signed::low, small_signed::high);
  check_round_trip(mid_unsigned::one_two, mid_unsigned{});
  check_round_trip(wide_unsigned::big, wide_unsigned{});
  check_round_trip(wide_signed::negative, wide_signed{});
  check_round_trip(blue, red);
  check_round_trip(std::byte{0xab}, std::byte{0});
  // The codec carries the value, not the enumerator: a value with no name survives too.
  check_round_trip(static_cast<mid_unsigned>(0xbeef), mid_unsigned::one_two);

  STATIC_REQUIRE(min_encoded_size<small_signed>() == 1);
  STATIC_REQUIRE(min_encoded_size<wide_unsigned>() == 8);
  STATIC_REQUIRE(min_encoded_size<plain_color>() == sizeof(int));
}

TEST_CASE("a bool-backed enum takes only 0 and 1, alone or in a vector", "[codec]") {
  check_round_trip(flag::on, flag::off);
  check_round_trip(std::vector<flag>{flag::on, flag::off, flag::on}, std::vector<flag>{});
  flag single{};
  CHECK_FALSE(decode(bytes_of({0x02}), single));
  std::vector<flag> many;
  CHECK_FALSE(decode(bytes_of({0x02, 0x01, 0x02}), many));
}

// ============================================================================ strings and varints

TEST_CASE("a string is a varint length then its bytes", "[codec]") {
  CHECK(encode(std::string("abc")) == bytes_of({0x03, 'a', 'b', 'c'}));
  CHECK(encode(std::string()) == bytes_of({0x00}));
  CHECK(encode(std::string("a\0b\0", 4)) == bytes_of({0x04, 'a', 0x00, 'b', 0x00}));

  const std::string three_hundred(300, 'x');
  const byte_vector encoded = encode(three_hundred);
  REQUIRE(encoded.size() == 302);
  CHECK(encoded[0] == std::byte{0xac});
  CHECK(encoded[1] == std::byte{0x02});
  CHECK(encoded[2] == std::byte{'x'});
}

TEST_CASE("strings round trip: empty, embedded NULs, every byte value, 100 KiB", "[codec]") {
  check_round_trip(std::string(), std::string("not empty"));
  check_round_trip(std::string("a\0b\0", 4), std::string("a"));

  std::string every_byte;
  for (int i = 0; i < 256; ++i) every_byte.push_back(static_cast<char>(i));
  check_round_trip(every_byte, std::string());

  std::string large(std::size_t{100} * 1024, '\0');
  for (std::size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>((i * 7919) >> 3);
  const byte_vector encoded = encode(large);
  REQUIRE(encoded.size() == 3 + large.size());
  CHECK(byte_vector(encoded.begin(), encoded.begin() + 3) == bytes_of({0x80, 0xa0, 0x06}));  // 102400
  check_round_trip(large, std::string("short"));
}

TEST_CASE("element counts are LEB128 varints: 7 bits a byte, low group first", "[codec][varint]") {
  // Through the public API, at each boundary where the count grows a byte.
  const std::vector<std::pair<std::size_t, byte_vector>> cases{
      {0, bytes_of({0x00})},
      {1, bytes_of({0x01})},
      {127, bytes_of({0x7f})},
      {128, bytes_of({0x80, 0x01})},
      {300, bytes_of({0xac, 0x02})},
      {16383, bytes_of({0xff, 0x7f})},
      {16384, bytes_of({0x80, 0x80, 0x01})},
  };
  for (const auto& [count, prefix] : cases) {
    CAPTURE(count);
    const std::vector<std::uint8_t> value(count, 0x5a);
    const byte_vector encoded = encode(value);
    REQUIRE(encoded.size() == prefix.size() + count);
    CHECK(byte_vector(encoded.begin(), encoded.begin() + static_cast<std::ptrdiff_t>(prefix.size())) == prefix);
  }
}

TEST_CASE("the varint writer and reader agree on every width up to 64 bits", "[codec][varint]") {
  // Counts this large cannot be built as containers, so the writer and reader are exercised directly.
  const std::vector<std::pair<std::uint64_t, byte_vector>> cases{
      {(1ull << 21) - 1, bytes_of({0xff, 0xff, 0x7f})},
      {1ull << 21, bytes_of({0x80, 0x80, 0x80, 0x01})},
      {1ull << 32, bytes_of({0x80, 0x80, 0x80, 0x80, 0x10})},
      {1ull << 63, bytes_of({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})},
      {~0ull, bytes_of({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})},
  };
  for (const auto& [value, expected] : cases) {
    CAPTURE(value);
    byte_vector out{std::byte{0xee}};  // the writer appends
    geerpc::codec::writer w(out);
    w.varint(value);
    CHECK(out == concat(bytes_of({0xee}), expected));

    geerpc::codec::reader r(expected);
    std::uint64_t decoded = 0;
    CHECK(r.varint(decoded));
    CHECK(decoded == value);
    CHECK(r.remaining() == 0);
  }
}

// ============================================================================ containers

TEST_CASE("a vector of scalars is a count then the elements back to back", "[codec]") {
  CHECK(encode(std::vector<std::uint16_t>{1, 0x0203}) == bytes_of({0x02, 0x01, 0x00, 0x03, 0x02}));
  CHECK(encode(std::vector<std::int32_t>{}) == bytes_of({0x00}));
  CHECK(encode(std::vector<std::byte>{std::byte{9}, std::byte{8}}) == bytes_of({0x02, 0x09, 0x08}));
  CHECK(encode(std::vector<mid_unsigned>{mid_unsigned::one_two}) == bytes_of({0x01, 0x02, 0x01}));
  CHECK(encode(std::vector<std::string>{"", "a", "bc"}) == bytes_of({0x03, 0x00, 0x01, 'a', 0x02, 'b', 'c'}));
  // A struct element is its length, then its fields.
  CHECK(encode(std::vector<point>{{1, -1}}) == bytes_of({0x01, 0x08, 0x01, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff}));
}

TEST_CASE("vectors of scalars round trip through the bulk-copy path", "[codec]") {
  std::vector<std::int64_t> numbers;
  for (std::int64_t i = -500; i < 500; ++i) numbers.push_back(i * 0x10000000001);
  check_round_trip(numbers, std::vector<std::int64_t>{1, 2, 3});
  check_round_trip(std::vector<char>{'a', '\0', 'z'}, std::vector<char>{});
  check_round_trip(std::vector<std::byte>{std::byte{0}, std::byte{0xff}}, std::vector<std::byte>(9));
  check_round_trip(std::vector<small_signed>{small_signed::low, small_signed::high}, std::vector<small_signed>{});
  check_round_trip(std::vector<std::uint16_t>{}, std::vector<std::uint16_t>{4, 5});

  // Bit patterns survive the bulk copy too.
  const std::vector<double> specials{-0.0, std::numeric_limits<double>::infinity(),
                                     std::bit_cast<double>(0x7ff8000000001234ull)};
  const std::vector<double> decoded = round_trip(specials, {});
  REQUIRE(decoded.size() == specials.size());
  for (std::size_t i = 0; i < specials.size(); ++i) CHECK(unsigned_bits(decoded[i]) == unsigned_bits(specials[i]));
}

TEST_CASE("vectors of strings, structs and vectors round trip, replacing what was there", "[codec]") {
  check_round_trip(std::vector<std::string>{"", "one", std::string(200, 'q')},
                   std::vector<std::string>{"old", "old", "old", "old", "old"});
  check_round_trip(std::vector<point>{{1, 2}, {-3, 4}}, std::vector<point>{{9, 9}});
  check_round_trip(std::vector<std::vector<std::int32_t>>{{}, {1}, {2, 3}},
                   std::vector<std::vector<std::int32_t>>{{7}});
  check_round_trip(std::vector<holds_nothing>{{{}, 1}, {{}, 2}}, std::vector<holds_nothing>{});
}

TEST_CASE("std::vector<bool> is one byte per element", "[codec]") {
  CHECK(encode(std::vector<bool>{true, false, true, true}) == bytes_of({0x04, 0x01, 0x00, 0x01, 0x01}));
  std::vector<bool> pattern;
  for (int i = 0; i < 1000; ++i) pattern.push_back(i % 3 == 0);
  check_round_trip(pattern, std::vector<bool>{false});
  check_round_trip(std::vector<bool>{}, std::vector<bool>{true});
}

TEST_CASE("std::array has no count: its size is in the type", "[codec]") {
  CHECK(encode(std::array<std::uint8_t, 3>{1, 2, 3}) == bytes_of({0x01, 0x02, 0x03}));
  CHECK(encode(std::array<std::uint16_t, 2>{0x0102, 0x0304}) == bytes_of({0x02, 0x01, 0x04, 0x03}));
  CHECK(encode(std::array<bool, 2>{false, true}) == bytes_of({0x00, 0x01}));
  CHECK(encode(std::array<std::uint8_t, 0>{}).empty());

  check_round_trip(std::array<std::string, 3>{"a", "", "ccc"}, std::array<std::string, 3>{});
  check_round_trip(std::array<point, 2>{{{1, 2}, {3, 4}}}, std::array<point, 2>{});
  check_round_trip(std::array<double, 2>{0.5, -8}, std::array<double, 2>{});
  STATIC_REQUIRE(kind_of<std::array<int, 2>>() == type_kind::array);
}

TEST_CASE("std::optional is a tag byte, then the value when the tag is 1", "[codec]") {
  CHECK(encode(std::optional<std::int16_t>{}) == bytes_of({0x00}));
  CHECK(encode(std::optional<std::int16_t>{5}) == bytes_of({0x01, 0x05, 0x00}));
  CHECK(encode(std::optional<std::optional<std::int32_t>>{}) == bytes_of({0x00}));
  CHECK(encode(std::optional<std::optional<std::int32_t>>{std::optional<std::int32_t>{}}) == bytes_of({0x01, 0x00}));
  CHECK(encode(std::optional<std::optional<std::int32_t>>{7}) == bytes_of({0x01, 0x01, 0x07, 0x00, 0x00, 0x00}));

  check_round_trip(std::optional<std::string>{"set"}, std::optional<std::string>{});
  check_round_trip(std::optional<std::string>{}, std::optional<std::string>{"was set"});
  check_round_trip(std::optional<point>{point{0, 0}}, std::optional<point>{});
  check_round_trip(std::optional<std::optional<bool>>{std::optional<bool>{}}, std::optional<std::optional<bool>>{});
}

TEST_CASE("a map is a count then key, value pairs", "[codec]") {
  // std::map iterates in key order, so its encoding is deterministic.
  CHECK(encode(std::map<std::uint8_t, bool>{{2, true}, {1, false}}) == bytes_of({0x02, 0x01, 0x00, 0x02, 0x01}));
  CHECK(encode(std::map<std::string, std::uint8_t>{}) == bytes_of({0x00}));
  CHECK(encode(std::unordered_map<std::uint8_t, std::string>{{9, "x"}}) == bytes_of({0x01, 0x09, 0x01, 'x'}));
}

TEST_CASE("maps and unordered maps round trip, replacing what was there", "[codec]") {
  check_round_trip(std::map<std::string, std::vector<int>>{{"", {}}, {"a", {1, 2}}, {"b", {-1}}},
                   std::map<std::string, std::vector<int>>{{"z", {0}}});
  check_round_trip(std::map<int, int>{}, std::map<int, int>{{1, 1}});

  std::unordered_map<std::uint32_t, std::string> many;
  for (std::uint32_t i = 0; i < 100; ++i) many.emplace(i * 2654435761u, std::to_string(i));
  check_round_trip(many, std::unordered_map<std::uint32_t, std::string>{{5, "five"}});
  check_round_trip(std::unordered_map<std::string, point>{{"origin", {0, 0}}, {"far", {1 << 30, -(1 << 30)}}},
                   std::unordered_map<std::string, point>{});
}

TEST_CASE("pairs and tuples are their elements in order, nothing else", "[codec]") {
  CHECK(encode(std::pair<std::uint8_t, std::int16_t>{7, -1}) == bytes_of({0x07, 0xff, 0xff}));
  CHECK(encode(std::tuple<std::uint8_t, bool, std::string>{1, true, "z"}) == bytes_of({0x01, 0x01, 0x01, 'z'}));
  CHECK(encode(std::tuple<>{}).empty());

  using record = std::tuple<bool, std::string, double, std::vector<int>, std::pair<char, point>>;
  check_round_trip(record{true, "t", -1e300, {1, 2}, {'c', {3, 4}}}, record{});
  check_round_trip(std::pair<std::string, std::optional<int>>{"k", 0}, std::pair<std::string, std::optional<int>>{});
  STATIC_REQUIRE(kind_of<std::pair<int, int>>() == type_kind::tuple);
}

// ============================================================================ aggregates

TEST_CASE("an aggregate is its byte length, then its fields in declaration order, without padding", "[codec]") {
  CHECK(encode(packed_fields{1, 0x0203, true}) == bytes_of({0x04, 0x01, 0x03, 0x02, 0x01}));
  check_round_trip(packed_fields{1, 0x0203, true}, packed_fields{});
  // A length of 128 bytes or more takes more than one byte, and the fields move up behind it.
  const std::vector<std::byte> long_one = encode(segment{{}, {}, std::string(200, 'x')});
  CHECK(long_one.size() > 200);
  check_round_trip(segment{{}, {}, std::string(200, 'x')}, segment{});
}

TEST_CASE("a struct may gain fields at its end: an older reader skips them, a newer one defaults them",
          "[codec][evolution]") {
  struct older {
    std::uint16_t a = 0;
    std::string b;
  };
  struct newer {
    std::uint16_t a = 0;
    std::string b;
    std::vector<std::uint8_t> c{7};
    std::int32_t d = -5;
  };
  const byte_vector from_newer = encode(newer{1, "hi", {1, 2}, 3});
  older read_old;
  REQUIRE(decode(from_newer, read_old));  // c and d skipped
  CHECK(read_old.a == 1);
  CHECK(read_old.b == "hi");

  const byte_vector from_older = encode(older{4, "yo"});
  newer read_new;
  REQUIRE(decode(from_older, read_new));  // c and d left at their defaults
  CHECK(read_new.a == 4);
  CHECK(read_new.b == "yo");
  CHECK(read_new.c == std::vector<std::uint8_t>{7});
  CHECK(read_new.d == -5);

  // In a vector, each element has its own length: all are read, none runs into the next.
  const byte_vector many = encode(std::vector<newer>{{1, "a", {}, 0}, {2, "b", {9, 9, 9}, 1}});
  std::vector<older> read_many;
  REQUIRE(decode(many, read_many));
  REQUIRE(read_many.size() == 2);
  CHECK(read_many[1].a == 2);
  CHECK(read_many[1].b == "b");

  // A field cut in the middle is not a missing field: it is refused.
  byte_vector cut = encode(older{4, "yo"});
  cut[0] = std::byte{4};  // the length now ends inside b's bytes
  cut.pop_back();
  CHECK(decode_error<newer>(cut) == "element count exceeds the remaining bytes at byte 3");
}

TEST_CASE("aggregates nested several levels deep round trip", "[codec]") {
  const drawing original = sample_drawing();
  const drawing decoded = round_trip(original, drawing{});
  CHECK(decoded == original);
  CHECK(decoded.shapes.at(0).segments.at(0).label == "south wall");
  CHECK(decoded.layers.at(70000) == std::vector<std::string>{"x"});
  // Decoding again into the same object gives the same value: nothing is appended to what was there.
  CHECK(round_trip(original, decoded) == original);
}

TEST_CASE("an empty aggregate encodes to its length alone, and a struct holding one to that and its other fields",
          "[codec]") {
  CHECK(encode(nothing{}) == bytes_of({0x00}));
  nothing value;
  CHECK(decode(bytes_of({0x00}), value));
  CHECK(decode_error<nothing>(byte_vector{}) == "truncated varint at byte 0");
  CHECK(decode_error<nothing>(bytes_of({0x00, 0x00})) == "trailing bytes after the value at byte 1");

  CHECK(encode(holds_nothing{{}, 9}) == bytes_of({0x02, 0x00, 0x09}));
  check_round_trip(holds_nothing{{}, 9}, holds_nothing{});
}

}  // namespace codec_test
