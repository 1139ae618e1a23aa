// The type fingerprint (docs/protocol.md, 4.1): the structure of a call's types as the binary
// codec encodes them, hashed at compile time. Pinned here against the documented token text (the
// call's schema less its field names), so that a client in another language can compute it.
#include <array>
#include <bitset>
#include <chrono>
#include <cstdint>
#include <deque>
#include <geerpc/codec/binary.hpp>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <variant>
#include <vector>

#include "catch.hpp"

namespace fingerprint_test {

namespace {

using geerpc::codec::fingerprint;

// FNV-1a, 32 bits, written out plainly from its definition.
std::uint32_t fnv1a(std::string_view text) {
  std::uint32_t h = 2166136261u;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return h;
}

struct pair_of_ints {
  int a;
  int b;
};
struct nested {
  pair_of_ints p;
  std::string s;
};
struct pair_renamed {
  int first;
  int second;
};
enum class colour : std::uint8_t { red };
enum class toggle : bool { off };

}  // namespace

TEST_CASE("fingerprints are FNV-1a of the documented token text", "[fingerprint]") {
  CHECK(fingerprint<std::tuple<int, int>, int>() == fnv1a("(i4;,i4;)>i4;"));
  CHECK(fingerprint<std::tuple<>, void>() == fnv1a("()>x"));
  CHECK(fingerprint<std::tuple<std::string, std::vector<double>>, bool>() == fnv1a("(s,v[d])>b"));
  CHECK(fingerprint<std::tuple<std::uint64_t, float>, std::optional<std::string>>() == fnv1a("(u8;,f)>o[s]"));
  CHECK(fingerprint<std::tuple<std::map<std::string, std::int16_t>>, std::array<char, 3>>() ==
        fnv1a("(m[s][i2;])>a3;[i1;]"));
  CHECK(fingerprint<std::tuple<std::set<int>>, std::variant<int, std::string>>() == fnv1a("(S[i4;])>V2;[i4;][s]"));
  CHECK(fingerprint<std::tuple<std::chrono::milliseconds>, std::chrono::system_clock::time_point>() ==
        fnv1a("(Di8;1;1000;)>Pi8;1;1000000000;"));
  CHECK(fingerprint<std::tuple<std::bitset<9>, colour, toggle>, void>() == fnv1a("(B9;,u1;,b)>x"));
  CHECK(fingerprint<std::tuple<nested, std::pair<int, bool>>, pair_of_ints>() ==
        fnv1a("({{i4;,i4;},s},(i4;,b))>{i4;,i4;}"));
  // The worked examples of docs/protocol.md 4.1, by value.
  CHECK(fingerprint<std::tuple<int, int>, int>() == 0x01ed3a24u);
  CHECK(fingerprint<std::tuple<pair_of_ints>, int>() == 0x64c7a676u);
  CHECK(fingerprint<std::tuple<>, void>() == 0x0bbe273cu);
  CHECK(fingerprint<std::tuple<std::string>, std::optional<std::string>>() == 0x1fa82895u);
}

TEST_CASE("fingerprints see structure, not names", "[fingerprint]") {
  // Two structs whose fields are named differently; a pair and a tuple.
  STATIC_REQUIRE(fingerprint<std::tuple<pair_of_ints>, int>() == fingerprint<std::tuple<pair_renamed>, int>());
  STATIC_REQUIRE(fingerprint<std::tuple<std::pair<int, bool>>, void>() ==
                 fingerprint<std::tuple<std::tuple<int, bool>>, void>());
  // A vector, a deque, a list; a view and what it views; a unique_ptr and an optional.
  STATIC_REQUIRE(fingerprint<std::tuple<std::vector<int>>, void>() == fingerprint<std::tuple<std::deque<int>>, void>());
  STATIC_REQUIRE(fingerprint<std::tuple<std::list<int>>, void>() ==
                 fingerprint<std::tuple<std::span<const int>>, void>());
  STATIC_REQUIRE(fingerprint<std::tuple<std::string_view>, void>() == fingerprint<std::tuple<std::string>, void>());
  STATIC_REQUIRE(fingerprint<std::tuple<std::unique_ptr<int>>, void>() ==
                 fingerprint<std::tuple<std::optional<int>>, void>());
  STATIC_REQUIRE(fingerprint<std::tuple<std::set<int>>, void>() ==
                 fingerprint<std::tuple<std::unordered_set<int>>, void>());
}

TEST_CASE("fingerprints tell apart what decodes differently or means something else", "[fingerprint]") {
  STATIC_REQUIRE(fingerprint<std::tuple<int>, int>() != fingerprint<std::tuple<unsigned>, int>());
  STATIC_REQUIRE(fingerprint<std::tuple<int>, int>() != fingerprint<std::tuple<int>, std::string>());
  STATIC_REQUIRE(fingerprint<std::tuple<int>, int>() != fingerprint<std::tuple<int, int>, int>());
  STATIC_REQUIRE(fingerprint<std::tuple<std::chrono::seconds>, void>() !=
                 fingerprint<std::tuple<std::chrono::milliseconds>, void>());
  STATIC_REQUIRE(fingerprint<std::tuple<std::vector<pair_of_ints>>, void>() !=
                 fingerprint<std::tuple<std::vector<int>, int>, void>());
  STATIC_REQUIRE(fingerprint<std::tuple<std::array<int, 2>>, void>() != fingerprint<std::tuple<int, int>, void>());
  // A struct travels behind its length (docs/protocol.md, 5.1), a tuple does not: a struct is
  // neither a tuple of its fields nor its fields as arguments, and one tuple argument is not its
  // elements as arguments.
  STATIC_REQUIRE(fingerprint<std::tuple<pair_of_ints>, void>() !=
                 fingerprint<std::tuple<std::tuple<int, int>>, void>());
  STATIC_REQUIRE(fingerprint<std::tuple<pair_of_ints>, void>() != fingerprint<std::tuple<int, int>, void>());
  STATIC_REQUIRE(fingerprint<std::tuple<nested>, void>() != fingerprint<std::tuple<pair_of_ints, std::string>, void>());
  STATIC_REQUIRE(fingerprint<std::tuple<std::tuple<int, int>>, void>() != fingerprint<std::tuple<int, int>, void>());
  STATIC_REQUIRE(fingerprint<std::tuple<int>, void>() != fingerprint<std::tuple<int>, int>());
  STATIC_REQUIRE(fingerprint<std::tuple<>, void>() != 0);
}

}  // namespace fingerprint_test
