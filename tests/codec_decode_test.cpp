// The binary codec's compile-time facts (which types it takes, their smallest encodings), and
// decoding hostile input: every malformed or truncated encoding fails cleanly, with a reason and
// an offset, without crashing or allocating memory the input did not pay for.
#include "codec_fixtures.hpp"

namespace codec_decode_test {

using namespace codec_fixtures;

// ============================================================================ compile-time facts

TEST_CASE("min_encoded_size is the size of the smallest encoding", "[codec]") {
  STATIC_REQUIRE(min_encoded_size<bool>() == 1);
  STATIC_REQUIRE(min_encoded_size<std::int8_t>() == 1);
  STATIC_REQUIRE(min_encoded_size<std::uint16_t>() == 2);
  STATIC_REQUIRE(min_encoded_size<float>() == 4);
  STATIC_REQUIRE(min_encoded_size<double>() == 8);
  STATIC_REQUIRE(min_encoded_size<std::string>() == 1);
  STATIC_REQUIRE(min_encoded_size<std::vector<std::uint64_t>>() == 1);
  STATIC_REQUIRE(min_encoded_size<std::optional<std::uint64_t>>() == 1);
  STATIC_REQUIRE(min_encoded_size<std::map<std::string, std::string>>() == 1);
  STATIC_REQUIRE(min_encoded_size<std::array<std::uint32_t, 5>>() == 20);
  STATIC_REQUIRE(min_encoded_size<std::array<std::string, 3>>() == 3);
  STATIC_REQUIRE(min_encoded_size<std::pair<std::uint8_t, double>>() == 9);
  STATIC_REQUIRE(min_encoded_size<std::tuple<>>() == 0);
  STATIC_REQUIRE(min_encoded_size<std::tuple<bool, std::string, std::int16_t>>() == 4);
  // A struct is at least its length byte: a writer built with fewer fields may send none of them.
  STATIC_REQUIRE(min_encoded_size<nothing>() == 1);
  STATIC_REQUIRE(min_encoded_size<point>() == 1);
  STATIC_REQUIRE(min_encoded_size<packed_fields>() == 1);
  STATIC_REQUIRE(min_encoded_size<segment>() == 1);

  // A default-constructed value (empty strings, containers and optionals) is the smallest encoding;
  // a struct's smallest is its length with no fields, which only a writer with fewer fields sends.
  const auto check_default = [](auto value) {
    using T = decltype(value);
    CHECK(encode(value).size() == min_encoded_size<T>());
  };
  CHECK(encode(point{}).size() == 9);  // its length, then two 4-byte fields
  point none;
  CHECK(decode(bytes_of({0x00}), none));
  check_default(std::array<std::string, 3>{});
  check_default(std::tuple<bool, std::string, std::int16_t>{});
  check_default(std::optional<std::array<std::uint64_t, 4>>{});
}

namespace {
struct with_c_array {
  int id;
  char code[4];
};
}  // namespace

TEST_CASE("the serializable concept accepts exactly the supported types", "[codec]") {
  STATIC_REQUIRE(geerpc::serializable<bool>);
  STATIC_REQUIRE(geerpc::serializable<char8_t>);
  STATIC_REQUIRE(geerpc::serializable<double>);
  STATIC_REQUIRE(geerpc::serializable<plain_color>);
  STATIC_REQUIRE(geerpc::serializable<std::byte>);
  STATIC_REQUIRE(geerpc::serializable<std::string>);
  STATIC_REQUIRE(geerpc::serializable<std::vector<bool>>);
  STATIC_REQUIRE(geerpc::serializable<std::array<point, 4>>);
  STATIC_REQUIRE(geerpc::serializable<std::optional<std::string>>);
  STATIC_REQUIRE(geerpc::serializable<std::map<std::string, std::vector<point>>>);
  STATIC_REQUIRE(geerpc::serializable<std::unordered_map<int, std::optional<double>>>);
  STATIC_REQUIRE(geerpc::serializable<std::pair<int, std::string>>);
  STATIC_REQUIRE(geerpc::serializable<std::tuple<>>);
  STATIC_REQUIRE(geerpc::serializable<nothing>);
  STATIC_REQUIRE(geerpc::serializable<holds_nothing>);
  STATIC_REQUIRE(geerpc::serializable<drawing>);
  STATIC_REQUIRE(geerpc::serializable<std::vector<std::uint64_t, counting_allocator<std::uint64_t>>>);

  STATIC_REQUIRE_FALSE(geerpc::serializable<unfixed_color>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<derived_part>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<std::vector<derived_part>>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<int*>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<const char*>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<std::nullptr_t>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<int&>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<const int>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<long double>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<int[3]>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<int_or_float>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<with_pointer>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<with_reference>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<with_const_member>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<with_volatile_member>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<with_long_double>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<with_union>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<with_virtual>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<with_constructor>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<with_private_field>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<with_function_pointer>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<deep_culprit>);
  // Encoded (a view as what it views), never decoded: a handler's parameter, a call's argument.
  STATIC_REQUIRE(geerpc::serializable<std::string_view>);
  STATIC_REQUIRE(geerpc::serializable<std::set<int>>);
  STATIC_REQUIRE(geerpc::serializable<std::list<int>>);
#if defined(__cpp_aggregate_paren_init)
  // Seen before Boost.PFR would fail on it, for a message naming std::array.
  STATIC_REQUIRE_FALSE(geerpc::serializable<with_c_array>);
  STATIC_REQUIRE(std::is_same_v<first_unsupported<std::vector<with_c_array>>::type, with_c_array>);
#endif
  STATIC_REQUIRE_FALSE(geerpc::serializable<std::vector<int*>>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<std::optional<long double>>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<std::map<int, float*>>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<std::tuple<int, void*>>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<std::tuple<int&>>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<std::pair<const int, int>>);
  // Zero-byte elements would let a peer claim any count for free.
  STATIC_REQUIRE_FALSE(geerpc::serializable<std::vector<std::tuple<>>>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<std::array<std::tuple<>, 2>>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<std::vector<std::array<int, 0>>>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<std::map<std::tuple<>, int>>);
  STATIC_REQUIRE_FALSE(geerpc::serializable<std::unordered_map<int, std::tuple<>>>);
  // An empty struct is its length byte: a count of them is bounded like any other.
  STATIC_REQUIRE(geerpc::serializable<std::vector<nothing>>);

  STATIC_REQUIRE(geerpc::serializable<drawing> == is_serializable_v<drawing>);
  STATIC_REQUIRE(geerpc::serializable<with_pointer> == is_serializable_v<with_pointer>);
}

TEST_CASE("first_unsupported names the innermost culprit, for the compile error", "[codec]") {
  STATIC_REQUIRE(std::is_void_v<first_unsupported<drawing>::type>);
  // A raw pointer member is named with its struct and position (from 1), for a message of its own.
  STATIC_REQUIRE(
      std::is_same_v<first_unsupported<with_pointer>::type, geerpc::codec::member_of<with_pointer, 1, int*>>);
  STATIC_REQUIRE(
      std::is_same_v<first_unsupported<deep_culprit>::type, geerpc::codec::member_of<with_pointer, 1, int*>>);
  // A reference member keeps its struct from being reflected at all; the compile error finds it.
  STATIC_REQUIRE(std::is_same_v<first_unsupported<with_reference>::type, with_reference>);
  STATIC_REQUIRE(std::is_same_v<geerpc::codec::reference_member_of<with_reference>::type,
                                geerpc::codec::member_of<with_reference, 1, int&>>);
  STATIC_REQUIRE(
      std::is_same_v<first_unsupported<std::map<std::string, std::optional<long double>>>::type, long double>);
  STATIC_REQUIRE(std::is_same_v<first_unsupported<std::pair<int, with_union>>::type, int_or_float>);
  STATIC_REQUIRE(std::is_same_v<first_unsupported<std::vector<std::tuple<>>>::type, std::vector<std::tuple<>>>);
  // An empty struct has its length byte (docs/protocol.md 5.1), so a count of them is bounded.
  STATIC_REQUIRE(std::is_void_v<first_unsupported<std::vector<nothing>>::type>);
  STATIC_REQUIRE(std::is_same_v<first_unsupported<with_constructor>::type, with_constructor>);
}

// ============================================================================ decoding hostile input

TEST_CASE("decode_status is ok, or a reason with the byte offset where it was noticed", "[codec]") {
  STATIC_REQUIRE(std::is_constructible_v<bool, decode_status>);
  STATIC_REQUIRE_FALSE(std::is_convertible_v<decode_status, bool>);

  std::uint32_t value = 0;
  const decode_status ok = decode(bytes_of({1, 0, 0, 0}), value);
  CHECK(ok);
  CHECK(ok.error == nullptr);
  CHECK(ok.message() == "ok");

  const decode_status bad = decode(bytes_of({1, 0, 0}), value);
  CHECK_FALSE(bad);
  REQUIRE(bad.error != nullptr);
  CHECK(std::string_view(bad.error) == "truncated input");
  CHECK(bad.offset == 0);
  CHECK(bad.message() == "truncated input at byte 0");

  CHECK(decode_error<two_words>(bytes_of({6, 1, 0, 0, 0, 2, 0})) == "truncated input at byte 5");
  CHECK(decode_error<two_words>(bytes_of({8, 1, 0, 0, 0, 2, 0})) ==
        "element count exceeds the remaining bytes at byte 0");  // its length is past the input
  CHECK(decode_error<std::string>(bytes_of({0x03, 'a'})) == "element count exceeds the remaining bytes at byte 0");
  CHECK(decode_error<std::string>(bytes_of({0x80})) == "truncated varint at byte 0");
  CHECK(decode_error<std::uint8_t>(bytes_of({0x01, 0x02})) == "trailing bytes after the value at byte 1");
}

TEST_CASE("every strict prefix of a valid encoding fails to decode", "[codec]") {
  const auto check_prefixes = [](const auto& original) {
    using T = std::remove_cvref_t<decltype(original)>;
    const byte_vector encoded = encode(original);
    REQUIRE_FALSE(encoded.empty());
    std::size_t accepted = 0;
    for (std::size_t size = 0; size < encoded.size(); ++size) {
      T value{};
      const decode_status status = decode(std::span<const std::byte>(encoded).first(size), value);
      if (status || status.offset > size || status.message().find(" at byte ") == std::string::npos) ++accepted;
    }
    CHECK(accepted == 0);
    T value{};
    CHECK(decode(encoded, value));  // the whole encoding does decode
  };
  check_prefixes(sample_drawing());
  check_prefixes(std::string(300, 's'));
  check_prefixes(std::vector<std::uint32_t>{1, 2, 3});
  check_prefixes(std::map<std::string, std::optional<point>>{{"a", point{1, 2}}, {"b", std::nullopt}});
  check_prefixes(std::tuple<bool, double, std::array<std::int16_t, 3>>{true, 2.0, {1, 2, 3}});
  check_prefixes(std::vector<bool>{true, false});
  check_prefixes(std::optional<std::uint64_t>{5});
}

TEST_CASE("bytes left after the value are an error, not ignored", "[codec]") {
  const auto check_trailing = [](const auto& original) {
    using T = std::remove_cvref_t<decltype(original)>;
    const byte_vector encoded = encode(original);
    for (int extra : {0x00, 0x01, 0xff}) {
      T value{};
      const decode_status status = decode(concat(encoded, bytes_of({extra})), value);
      CHECK_FALSE(status);
      CHECK(status.message() == "trailing bytes after the value at byte " + std::to_string(encoded.size()));
    }
  };
  check_trailing(sample_drawing());
  check_trailing(std::string("x"));
  check_trailing(std::vector<std::uint16_t>{1});
  check_trailing(std::optional<int>{});
  check_trailing(true);
}

TEST_CASE("a bool byte other than 0 or 1 is refused, wherever the bool is", "[codec]") {
  for (int byte : {2, 0x7f, 0x80, 0xff}) {
    CAPTURE(byte);
    bool plain = false;
    const decode_status status = decode(bytes_of({byte}), plain);
    CHECK_FALSE(status);
    REQUIRE(status.error != nullptr);
    CHECK(std::string_view(status.error) == "bool is neither 0 nor 1");
    CHECK(status.offset <= 1);  // at the bad byte or just past it
  }
  const auto reason_of = [](const byte_vector& in, auto value) {
    const decode_status status = decode(in, value);
    return status ? std::string("decoded") : std::string(status.error);
  };
  CHECK(reason_of(bytes_of({0x03, 0x01, 0x00, 0x02}), std::vector<bool>{}) == "bool is neither 0 nor 1");
  CHECK(reason_of(bytes_of({0x04, 0x01, 0x00, 0x00, 0x02}), packed_fields{}) == "bool is neither 0 nor 1");
  CHECK(reason_of(bytes_of({0x00, 0x02}), std::array<bool, 2>{}) == "bool is neither 0 nor 1");
  CHECK(reason_of(bytes_of({0x01, 0x02}), std::optional<bool>{}) == "bool is neither 0 nor 1");
  CHECK(reason_of(bytes_of({0x04, 0x01, 0x00, 0x00, 0x01}), packed_fields{}) == "decoded");  // the control
}

TEST_CASE("an optional tag other than 0 or 1 is refused", "[codec]") {
  for (int tag : {2, 0x80, 0xff}) {
    CAPTURE(tag);
    std::optional<std::uint8_t> value;
    const decode_status status = decode(bytes_of({tag, 0x05}), value);
    CHECK_FALSE(status);
    REQUIRE(status.error != nullptr);
    CHECK(std::string_view(status.error) == "optional tag is neither 0 nor 1");
    CHECK_FALSE(value.has_value());
  }
}

TEST_CASE("a count larger than the remaining bytes could hold fails before allocating", "[codec]") {
  // 2^40 elements claimed by 10 bytes of input: the 6-byte varint, then 4 bytes.
  const byte_vector huge = bytes_of({0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x00, 0x00, 0x00, 0x00});

  SECTION("vector of fixed-size scalars") {
    std::vector<std::uint64_t> plain;
    const decode_status status = decode(huge, plain);
    CHECK(status.message() == "element count exceeds the remaining bytes at byte 0");

    allocation_log::reset();
    std::vector<std::uint64_t, counting_allocator<std::uint64_t>> counted;
    CHECK_FALSE(decode(huge, counted));
    CHECK(allocation_log::allocations == 0);
  }
  SECTION("vector of strings, string, vector<bool> and maps") {
    allocation_log::reset();
    std::vector<std::string, counting_allocator<std::string>> strings;
    CHECK_FALSE(decode(huge, strings));
    std::basic_string<char, std::char_traits<char>, counting_allocator<char>> text;
    CHECK_FALSE(decode(huge, text));
    std::vector<bool, counting_allocator<bool>> flags;
    CHECK_FALSE(decode(huge, flags));
    std::map<std::uint8_t, std::uint8_t, std::less<>, counting_allocator<std::pair<const std::uint8_t, std::uint8_t>>>
        ordered;
    CHECK_FALSE(decode(huge, ordered));
    std::unordered_map<std::uint8_t, std::uint8_t, std::hash<std::uint8_t>, std::equal_to<>,
                       counting_allocator<std::pair<const std::uint8_t, std::uint8_t>>>
        hashed;
    CHECK_FALSE(decode(huge, hashed));
    CHECK(allocation_log::allocations == 0);
  }
  SECTION("the control: an honest count does allocate, so the counter works") {
    allocation_log::reset();
    std::vector<std::uint64_t, counting_allocator<std::uint64_t>> counted;
    REQUIRE(decode(encode(std::vector<std::uint64_t>{1, 2, 3}), counted));
    CHECK(counted == std::vector<std::uint64_t, counting_allocator<std::uint64_t>>{1, 2, 3});
    CHECK(allocation_log::allocations >= 1);
  }
  SECTION("the count is judged by each element's smallest encoding") {
    // Two uint16 take 4 bytes: a count of 2 fits in 4 bytes, a count of 3 does not.
    std::vector<std::uint16_t> value;
    CHECK(decode(bytes_of({0x02, 1, 0, 2, 0}), value));
    CHECK(decode_error<std::vector<std::uint16_t>>(bytes_of({0x03, 1, 0, 2, 0})) ==
          "element count exceeds the remaining bytes at byte 0");
    // A map entry of uint32 -> uint32 takes at least 8 bytes.
    CHECK(decode_error<std::map<std::uint32_t, std::uint32_t>>(bytes_of({0x02, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0})) ==
          "element count exceeds the remaining bytes at byte 0");
  }
}

TEST_CASE("overlong and overflowing varints are refused", "[codec][varint]") {
  // Ten 0x80 bytes and a terminator: an eleventh byte would be needed, more than 64 bits.
  byte_vector eleven(10, std::byte{0x80});
  eleven.push_back(std::byte{0x00});
  CHECK(decode_error<std::string>(eleven).rfind("varint ", 0) == 0);

  // The tenth byte carries bit 63 only: anything above 1 overflows.
  byte_vector tenth_two(9, std::byte{0xff});
  tenth_two.push_back(std::byte{0x02});
  CHECK(decode_error<std::string>(tenth_two) == "varint overflows 64 bits at byte 0");

  // 2^64 - 1 is a valid varint, but no input holds that many elements.
  byte_vector maximum(9, std::byte{0xff});
  maximum.push_back(std::byte{0x01});
  CHECK(decode_error<std::vector<std::uint8_t>>(maximum) == "element count exceeds the remaining bytes at byte 0");

  // A varint cut short by the end of the input.
  CHECK(decode_error<std::string>(byte_vector(9, std::byte{0xff})) == "truncated varint at byte 0");

  geerpc::codec::reader r(eleven);
  std::uint64_t value = 0;
  CHECK_FALSE(r.varint(value));
  CHECK_FALSE(r.ok());
}

TEST_CASE("a map with a duplicate key is refused", "[codec]") {
  CHECK(decode_error<std::map<std::uint8_t, std::uint8_t>>(bytes_of({0x02, 0x05, 0x01, 0x05, 0x02})) ==
        "duplicate map key at byte 3");
  CHECK(decode_error<std::unordered_map<std::uint8_t, std::uint8_t>>(bytes_of({0x02, 0x05, 0x01, 0x05, 0x02})) ==
        "duplicate map key at byte 3");
  CHECK(decode_error<std::map<std::string, bool>>(bytes_of({0x03, 0x01, 'k', 0x00, 0x00, 0x01, 0x01, 'k', 0x01})) ==
        "duplicate map key at byte 6");
  // The control: distinct keys decode, in any order.
  std::map<std::uint8_t, std::uint8_t> value;
  CHECK(decode(bytes_of({0x02, 0x06, 0x01, 0x05, 0x02}), value));
  CHECK(value == std::map<std::uint8_t, std::uint8_t>{{5, 2}, {6, 1}});
}

TEST_CASE("20,000 random mutations of a nested encoding each decode or fail cleanly", "[codec][fuzz]") {
  const byte_vector original = encode(sample_drawing());
  splitmix64 random(0x6765657270637631ull);
  std::size_t decoded = 0;
  std::size_t refused = 0;
  std::size_t anomalies = 0;
  std::string first_anomaly;

  for (int round = 0; round < 20000; ++round) {
    byte_vector input = original;
    switch (random.below(5)) {
      case 0:  // overwrite a few bytes with anything
        for (std::size_t n = 1 + random.below(3); n > 0; --n)
          input[random.below(input.size())] = static_cast<std::byte>(random.next());
        break;
      case 1: {  // plant a value that stresses varints and tags
        constexpr std::array<int, 6> nasty{0x00, 0x01, 0x02, 0x7f, 0x80, 0xff};
        input[random.below(input.size())] = static_cast<std::byte>(nasty[random.below(nasty.size())]);
        break;
      }
      case 2:  // cut
        input.resize(random.below(input.size()));
        break;
      case 3:  // insert a byte
        input.insert(input.begin() + static_cast<std::ptrdiff_t>(random.below(input.size() + 1)),
                     static_cast<std::byte>(random.next()));
        break;
      default:  // delete a byte
        input.erase(input.begin() + static_cast<std::ptrdiff_t>(random.below(input.size())));
        break;
    }

    drawing value;
    const decode_status status = decode(input, value);
    std::string problem;
    if (status) {
      ++decoded;
      // Whatever was accepted must be a value the codec can write and read back.
      drawing again;
      if (status.offset != 0)
        problem = "success with an offset";
      else if (!decode(encode(value), again))
        problem = "an accepted value does not round trip";
    } else {
      ++refused;
      if (status.offset > input.size())
        problem = "offset past the end: " + status.message();
      else if (status.message().find(" at byte ") == std::string::npos)
        problem = "no offset: " + status.message();
    }
    if (!problem.empty() && anomalies++ == 0) first_anomaly = "round " + std::to_string(round) + ": " + problem;
  }
  INFO(first_anomaly);
  CHECK(anomalies == 0);
  // Both outcomes occur, so the mutations reach deep into the value rather than all failing at once.
  CHECK(decoded > 100);
  CHECK(refused > 10000);
}

namespace {
struct flat_reply {
  std::int32_t id;
  std::string name;
  std::optional<std::array<std::uint16_t, 4>> tags;
  std::vector<double> samples;
};
struct deep_reply {
  std::int32_t id;
  std::vector<std::string> names;
};
}  // namespace

// A client decodes a reply on the thread that receives every caller's replies only when decoding
// costs about a copy of its bytes; anything that works per element is copied out and decoded by
// its caller (client.hpp). Getting this wrong either way still decodes correctly, so it is pinned
// here: a map or a list of strings must never hold up the receiving thread.
TEST_CASE("cheap_to_decode: numbers, strings, block-copied vectors and aggregates of them, nothing per element",
          "[codec]") {
  STATIC_REQUIRE(binary_codec::cheap_to_decode<std::int32_t>);
  STATIC_REQUIRE(binary_codec::cheap_to_decode<bool>);
  STATIC_REQUIRE(binary_codec::cheap_to_decode<std::string>);
  STATIC_REQUIRE(binary_codec::cheap_to_decode<std::vector<std::uint8_t>>);
  STATIC_REQUIRE(binary_codec::cheap_to_decode<std::pair<int, std::string>>);
  STATIC_REQUIRE(binary_codec::cheap_to_decode<flat_reply>);
  STATIC_REQUIRE_FALSE(binary_codec::cheap_to_decode<std::vector<bool>>);
  STATIC_REQUIRE_FALSE(binary_codec::cheap_to_decode<std::vector<std::string>>);
  STATIC_REQUIRE_FALSE(binary_codec::cheap_to_decode<std::map<std::string, int>>);
  STATIC_REQUIRE_FALSE(binary_codec::cheap_to_decode<std::optional<std::vector<flat_reply>>>);
  STATIC_REQUIRE_FALSE(binary_codec::cheap_to_decode<deep_reply>);
}

}  // namespace codec_decode_test
