// Call schemas (codec/schema.hpp) and their comparison (codec/schema_compare.hpp): the text of
// each kind of type, the fingerprint as the hash of that text less its field names, which schemas
// agree (a struct gaining or losing trailing fields) and how a disagreement reads, and hostile
// texts refused with their reason and byte, none crashing.
#include <array>
#include <bitset>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <geerpc/codec/binary.hpp>
#include <geerpc/codec/schema.hpp>
#include <geerpc/codec/schema_compare.hpp>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <variant>
#include <vector>

#include "catch.hpp"

namespace schema_test {

struct point {
  int x;
  int y;
};
struct item {
  std::string name;
  double price;
};
struct order {
  std::uint64_t id;
  std::vector<item> items;
  std::optional<std::string> note;
};
enum class colour : std::uint8_t { red };
enum class toggle : bool { off };

// An address kept behind a constructor, written as its 4 bytes by a serializer of its own.
class ip4 {
 public:
  ip4() = default;
  std::uint32_t bits = 0;
};
// An amount of money, sent as its wire type.
class money {
 public:
  money() = default;  // declared: not an aggregate, so the serializer is what the codec has of it
  std::string currency;
  std::int64_t cents = 0;
};

}  // namespace schema_test

template <>
struct geerpc::codec::serializer<schema_test::ip4> {
  static constexpr std::size_t min_encoded_size = 4;
  static void encode(writer& out, const schema_test::ip4& a) { out.fixed(a.bits); }
  static bool decode(reader& in, schema_test::ip4& a) { return in.fixed(a.bits); }
};
template <>
struct geerpc::codec::serializer<schema_test::money> {
  using wire_type = std::tuple<std::string, std::int64_t>;
  static wire_type to_wire(const schema_test::money& m) { return {m.currency, m.cents}; }
  static schema_test::money from_wire(wire_type&& w) {
    schema_test::money m;
    m.currency = std::get<0>(w);
    m.cents = std::get<1>(w);
    return m;
  }
};

namespace schema_test {

using geerpc::codec::call_schema;
using geerpc::codec::compare_call_schemas;
using geerpc::codec::fingerprint;

template <class T>
std::string schema_of() {
  std::string out;
  geerpc::codec::append_schema<T>(out);
  return out;
}

TEST_CASE("a schema writes each kind of type as the grammar says", "[schema]") {
  CHECK(call_schema<std::tuple<int, int>, int>() == "(i4;,i4;)>i4;");
  CHECK(call_schema<std::tuple<>, void>() == "()>x");
  CHECK(call_schema<std::tuple<std::string, std::vector<double>>, bool>() == "(s,v[d])>b");
  CHECK(call_schema<std::tuple<std::uint64_t, float>, std::optional<std::string>>() == "(u8;,f)>o[s]");
  CHECK(call_schema<std::tuple<std::map<std::string, std::int16_t>>, std::array<char, 3>>() == "(m[s][i2;])>a3;[i1;]");
  CHECK(call_schema<std::tuple<std::set<int>>, std::variant<int, std::string>>() == "(S[i4;])>V2;[i4;][s]");
  CHECK(call_schema<std::tuple<std::chrono::milliseconds>, std::chrono::system_clock::time_point>() ==
        "(Di8;1;1000;)>Pi8;1;1000000000;");
  CHECK(call_schema<std::tuple<std::bitset<9>, colour, toggle>, void>() == "(B9;,u1;,b)>x");
  // Alike on the wire, alike here.
  CHECK(schema_of<std::deque<int>>() == "v[i4;]");
  CHECK(schema_of<std::list<int>>() == "v[i4;]");
  CHECK(schema_of<std::span<const int>>() == "v[i4;]");
  CHECK(schema_of<std::string_view>() == "s");
  CHECK(schema_of<std::unique_ptr<int>>() == "o[i4;]");
  CHECK(schema_of<std::unordered_map<int, bool>>() == "m[i4;][b]");
  CHECK(schema_of<std::pair<int, std::string>>() == "(i4;,s)");
  CHECK(schema_of<std::tuple<>>() == "()");
}

TEST_CASE("a schema names a struct's fields, nested structs included", "[schema]") {
  CHECK(schema_of<point>() == "{x:i4;,y:i4;}");
  CHECK(call_schema<std::tuple<order>, point>() == "({id:u8;,items:v[{name:s,price:d}],note:o[s]})>{x:i4;,y:i4;}");
  CHECK(schema_of<std::tuple<point, std::vector<point>>>() == "({x:i4;,y:i4;},v[{x:i4;,y:i4;}])");
}

TEST_CASE("a schema shows a class with a serializer as its wire type, or as opaque", "[schema]") {
  CHECK(schema_of<ip4>() == "c4;");
  CHECK(schema_of<money>() == "(s,i8;)");
  CHECK(call_schema<std::tuple<std::vector<ip4>>, money>() == "(v[c4;])>(s,i8;)");
}

// FNV-1a, 32 bits, written out plainly from its definition.
std::uint32_t fnv1a(std::string_view text) {
  std::uint32_t h = 2166136261u;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return h;
}

// The schema less every field name and its ':' (a name is the identifier before a ':').
std::string without_names(std::string schema) {
  for (std::size_t colon = schema.find(':'); colon != std::string::npos; colon = schema.find(':', colon)) {
    std::size_t start = colon;
    while (start > 0 && schema[start - 1] != '{' && schema[start - 1] != ',') --start;
    schema.erase(start, colon + 1 - start);
    colon = start;
  }
  return schema;
}

template <class Arguments, class Result>
void check_fingerprint_hashes_schema() {
  const std::string& schema = call_schema<Arguments, Result>();
  INFO(schema);
  const std::uint32_t hash = fnv1a(without_names(schema));
  CHECK(fingerprint<Arguments, Result>() == (hash == 0 ? 1 : hash));
}

TEST_CASE("the fingerprint is FNV-1a of the schema less its field names", "[schema][fingerprint]") {
  CHECK(without_names("({id:u8;,items:v[{name:s,price:d}]})>{x:b}") == "({u8;,v[{s,d}]})>{b}");
  check_fingerprint_hashes_schema<std::tuple<int, int>, int>();
  check_fingerprint_hashes_schema<std::tuple<>, void>();
  check_fingerprint_hashes_schema<std::tuple<point>, int>();
  check_fingerprint_hashes_schema<std::tuple<order>, point>();
  check_fingerprint_hashes_schema<std::tuple<std::vector<order>, std::map<std::string, item>>, void>();
  check_fingerprint_hashes_schema<std::tuple<std::tuple<point, std::pair<int, item>>>, std::tuple<>>();
  check_fingerprint_hashes_schema<std::tuple<std::optional<point>>, std::variant<item, point, std::string>>();
  check_fingerprint_hashes_schema<std::tuple<std::chrono::seconds>, std::chrono::system_clock::time_point>();
  check_fingerprint_hashes_schema<std::tuple<std::bitset<70>, colour, toggle>, std::array<point, 2>>();
  check_fingerprint_hashes_schema<std::tuple<ip4, money>, std::vector<ip4>>();
  check_fingerprint_hashes_schema<std::tuple<std::set<std::string>, std::unique_ptr<order>>, bool>();
  check_fingerprint_hashes_schema<std::tuple<std::string_view, std::span<const item>>, std::string>();
}

// Two versions of a service's types, as two peers built at different times hold them.
namespace v1 {
struct put {
  std::string key;
  std::vector<std::uint8_t> value;
};
struct line {
  std::string sku;
  int quantity;
};
struct cart {
  std::string owner;
  std::vector<line> lines;
};
}  // namespace v1
namespace v2 {
struct put {
  std::string key;
  std::vector<std::uint8_t> value;
  std::optional<std::chrono::milliseconds> ttl;
};
struct renamed_put {
  std::string name;
  std::vector<std::uint8_t> bytes;
};
struct text_put {
  std::string key;
  std::string value;
};
struct line {
  std::string sku;
  int quantity;
  double discount;
};
struct cart {
  std::string owner;
  std::vector<line> lines;
};
}  // namespace v2

template <class MyArguments, class MyResult, class TheirArguments, class TheirResult>
geerpc::codec::schema_verdict compare() {
  return compare_call_schemas(call_schema<MyArguments, MyResult>(), call_schema<TheirArguments, TheirResult>());
}

TEST_CASE("schemas agree when a struct gained or lost trailing fields, or a field was renamed", "[schema]") {
  const auto same = compare<std::tuple<v1::put>, bool, std::tuple<v1::put>, bool>();
  CHECK(same.compatible);
  CHECK(same.why.empty());
  CHECK(compare<std::tuple<v1::put>, bool, std::tuple<v2::put>, bool>().compatible);
  CHECK(compare<std::tuple<v2::put>, bool, std::tuple<v1::put>, bool>().compatible);
  CHECK(compare<std::tuple<int>, v1::put, std::tuple<int>, v2::put>().compatible);
  CHECK(compare<std::tuple<v1::put>, void, std::tuple<v2::renamed_put>, void>().compatible);
  // A struct inside a vector inside a struct gains a field.
  CHECK(compare<std::tuple<v1::cart>, void, std::tuple<v2::cart>, void>().compatible);
  CHECK(compare<std::tuple<v2::cart>, void, std::tuple<v1::cart>, void>().compatible);
  CHECK(compare_call_schemas("({a:{b:i4;}})>x", "({a:{b:i4;,c:s},d:v[b]})>x").compatible);
  CHECK(compare_call_schemas("({})>x", "({a:i4;})>x").compatible);
}

TEST_CASE("schemas disagree on a changed, reordered or removed field, and say where and what", "[schema]") {
  CHECK(compare<std::tuple<v1::put>, bool, std::tuple<v2::text_put>, bool>().why ==
        "argument 1, field value: bytes here, string on the peer");
  CHECK(compare_call_schemas("()>{items:v[{name:s,price:i4;}]}", "()>{items:v[{name:s,price:d}]}").why ==
        "the result, field items[].price: int32 here, double on the peer");
  // Two fields of different types swapped: the first that differs is named.
  CHECK(compare_call_schemas("({a:i4;,b:s})>x", "({b:s,a:i4;})>x").why ==
        "argument 1, field a: int32 here, string on the peer");
  // A middle field removed: the fields after it move up, by position.
  CHECK(compare_call_schemas("(b,{a:i4;,b:s,c:d})>x", "(b,{a:i4;,c:d})>x").why ==
        "argument 2, field b: string here, double on the peer");
  // Nested: a container whose element differs is named with its whole type.
  CHECK(compare_call_schemas("({tags:v[i4;]})>x", "({tags:v[s]})>x").why ==
        "argument 1, field tags: list<int32> here, list<string> on the peer");
  CHECK(compare_call_schemas("({m:m[s][v[{q:o[i2;]}]]})>x", "({m:m[s][v[{q:o[u2;]}]]})>x").why ==
        "argument 1, field m[][].q: optional<int16> here, optional<uint16> on the peer");
  CHECK(compare_call_schemas("(v[{a:b}])>x", "(v[{a:f}])>x").why ==
        "argument 1, field [].a: bool here, float on the peer");
}

TEST_CASE("schemas disagree on counts (tuples, variants, arguments) and on a result against none", "[schema]") {
  CHECK(compare<std::tuple<std::tuple<int, int>>, void, std::tuple<std::tuple<int, int, int>>, void>().why ==
        "argument 1: tuple<int32, int32> here, tuple<int32, int32, int32> on the peer");
  CHECK(compare<std::tuple<int, int>, void, std::tuple<int, int, int>, void>().why ==
        "2 arguments here, 3 on the peer");
  CHECK(compare<std::tuple<int>, void, std::tuple<>, void>().why == "1 argument here, 0 on the peer");
  CHECK(compare<std::tuple<>, void, std::tuple<>, int>().why == "the result: void here, int32 on the peer");
  CHECK(compare<std::tuple<>, std::string, std::tuple<>, void>().why == "the result: string here, void on the peer");
  CHECK(compare_call_schemas("(V2;[i4;][s])>x", "(V3;[i4;][s][b])>x").why ==
        "argument 1: variant<int32, string> here, variant<int32, string, bool> on the peer");
  CHECK(compare_call_schemas("((i4;,s))>x", "((i4;,d))>x").why ==
        "argument 1, element #2: string here, double on the peer");
  // A struct and a tuple of the same members do not travel alike.
  CHECK(compare<std::tuple<point>, void, std::tuple<std::tuple<int, int>>, void>().why ==
        "argument 1: struct{x, y} here, tuple<int32, int32> on the peer");
}

TEST_CASE("a disagreement names each kind of type readably, and briefly", "[schema]") {
  const auto why = [](std::string_view mine, std::string_view theirs) {
    return compare_call_schemas("(" + std::string(mine) + ")>x", "(" + std::string(theirs) + ")>x").why;
  };
  CHECK(why("a3;[i1;]", "a4;[i1;]") == "argument 1: array<int8, 3> here, array<int8, 4> on the peer");
  CHECK(why("m[s][u8;]", "S[s]") == "argument 1: map<string, uint64> here, set<string> on the peer");
  CHECK(why("Di8;1;1000;", "Di8;1;1;") == "argument 1: duration<int64, 1/1000> here, duration<int64, 1/1> on the peer");
  CHECK(why("Pi8;1;1000000000;", "Pu4;1;1000000000;") ==
        "argument 1: time_point<int64, 1/1000000000> here, time_point<uint32, 1/1000000000> on the peer");
  CHECK(why("B9;", "c4;") == "argument 1: bitset<9> here, custom(4 bytes min) on the peer");
  CHECK(why("v[u1;]", "v[i1;]") == "argument 1: bytes here, list<int8> on the peer");
  CHECK(why("{a:b,b:b,c:b,d:b,e:b,f:b,g:b}", "s") ==
        "argument 1: struct{a, b, c, d, e, f, ...} here, string on the peer");
  CHECK(why("{}", "()") == "argument 1: struct{} here, tuple<> on the peer");

  // Long names and deep paths are cut short: the whole message stays near 300 bytes.
  const std::string long_name(255, 'n');
  std::string deep = "b", deeper = "d";
  for (int i = 0; i < 20; ++i) {
    deep = "{" + long_name + ":v[" + deep + "]," + long_name.substr(1) + "x:s}";
    deeper = "{" + long_name + ":v[" + deeper + "]," + long_name.substr(1) + "x:s}";
  }
  const std::string message = why(deep, deeper);
  INFO(message);
  CHECK(message.size() <= 300);
  CHECK(message.find("...") != std::string::npos);
  CHECK(message.ends_with(": list<bool> here, list<double> on the peer"));
  const std::string wide = why("{" + long_name + ":b," + long_name.substr(1) + "2:b}", "s");
  CHECK(wide == "argument 1: struct{" + long_name.substr(0, 80 - 10) + "... here, string on the peer");
}

std::string malformed(std::string_view theirs) {
  const auto verdict = compare_call_schemas("()>x", theirs);
  CHECK_FALSE(verdict.compatible);
  return verdict.why;
}

bool is_printable(std::string_view text) {
  for (char c : text)
    if (c < 0x20 || c > 0x7e) return false;
  return true;
}

TEST_CASE("a schema cut short at any byte is refused there", "[schema][hostile]") {
  const std::string& valid = call_schema<std::tuple<order, std::map<std::string, item>>, std::variant<point, bool>>();
  REQUIRE(compare_call_schemas(valid, valid).compatible);
  for (std::size_t n = 0; n < valid.size(); ++n) {
    INFO(valid.substr(0, n));
    CHECK(compare_call_schemas(valid, valid.substr(0, n)).why ==
          "the peer's schema is malformed: the schema ends too early at byte " + std::to_string(n));
    CHECK(compare_call_schemas(valid.substr(0, n), valid).why.starts_with("the schema here is malformed: "));
  }
  CHECK(malformed("()>x)") == "the peer's schema is malformed: bytes after the end of the schema at byte 4");
}

TEST_CASE("a schema too long or nested too deep is refused without descending", "[schema][hostile]") {
  CHECK(malformed(std::string(100000, '[')) ==
        "the peer's schema is malformed: schema longer than 65536 bytes at byte 65536");
  CHECK(malformed(std::string(1000000, '{')) ==
        "the peer's schema is malformed: schema longer than 65536 bytes at byte 65536");
  CHECK(malformed(std::string(60000, '(')) == "the peer's schema is malformed: nesting deeper than 64 at byte 64");
  CHECK(malformed(std::string(60000, 'v')) ==
        "the peer's schema is malformed: expected '(', the arguments' tuple at byte 0");
  CHECK(malformed("(vv") == "the peer's schema is malformed: expected '[' at byte 2");
  std::string in_brackets = "(";
  for (int i = 0; i < 30000; ++i) in_brackets += "v[";
  CHECK(malformed(in_brackets) == "the peer's schema is malformed: nesting deeper than 64 at byte 127");
  // 64 levels are allowed: the arguments' tuple, 62 vectors, a bool.
  const auto nested = [](int vectors) {
    std::string text = "(";
    for (int i = 0; i < vectors; ++i) text += "v[";
    text += "b";
    for (int i = 0; i < vectors; ++i) text += "]";
    return text + ")>x";
  };
  CHECK(compare_call_schemas(nested(62), nested(62)).compatible);
  CHECK(malformed(nested(63)) == "the peer's schema is malformed: nesting deeper than 64 at byte 127");
}

TEST_CASE("a schema's numbers are bounded and written one way", "[schema][hostile]") {
  CHECK(compare_call_schemas("(a4294967296;[b])>x", "(a4294967296;[b])>x").compatible);
  CHECK(malformed("(a4294967297;[b])>x") == "the peer's schema is malformed: number above 2^32 at byte 2");
  CHECK(malformed("(i99999999999999999999999999999;)>x") ==
        "the peer's schema is malformed: number above 2^32 at byte 2");
  CHECK(malformed("(i04;)>x") == "the peer's schema is malformed: number with a leading zero at byte 2");
  CHECK(malformed("(i;)>x") == "the peer's schema is malformed: expected a number at byte 2");
  CHECK(malformed("(i4)>x") == "the peer's schema is malformed: expected ';' after a number at byte 3");
  CHECK(compare_call_schemas("(a0;[b])>x", "(a0;[b])>x").compatible);
  // A period is a ratio of intmax_t: picoseconds fit, past 2^63 - 1 does not.
  CHECK(compare_call_schemas("(Di8;1;1000000000000;)>x", "(Di8;1;1000000000000;)>x").compatible);
  CHECK(malformed("(Di8;1;9223372036854775808;)>x") ==
        "the peer's schema is malformed: period above 2^63 - 1 at byte 7");
  CHECK(malformed("(Ds1;1;)>x") ==
        "the peer's schema is malformed: expected a number type (b, i, u, f or d) at byte 2");
}

TEST_CASE("a schema's field names are identifiers of at most 255 bytes", "[schema][hostile]") {
  const std::string longest(255, 'a');
  CHECK(compare_call_schemas("({" + longest + ":b})>x", "({" + longest + ":b})>x").compatible);
  CHECK(malformed("({" + longest + "a:b})>x") ==
        "the peer's schema is malformed: field name longer than 255 bytes at byte 2");
  CHECK(malformed("({1a:b})>x") == "the peer's schema is malformed: expected a field name (an identifier) at byte 2");
  CHECK(malformed("({:b})>x") == "the peer's schema is malformed: expected a field name (an identifier) at byte 2");
  CHECK(malformed("({a-b:b})>x") == "the peer's schema is malformed: expected ':' after a field name at byte 3");
  CHECK(malformed("({\xc3\xa9:b})>x") ==
        "the peer's schema is malformed: expected a field name (an identifier) at byte 2");
  CHECK(malformed("({i4;})>x") == "the peer's schema is malformed: expected ':' after a field name at byte 4");
  CHECK(malformed("({a:b,})>x") == "the peer's schema is malformed: expected a field name (an identifier) at byte 6");
  CHECK(malformed("({a:b;})>x") == "the peer's schema is malformed: expected ',' or '}' at byte 5");
}

TEST_CASE("a variant has as many alternatives as its count", "[schema][hostile]") {
  CHECK(malformed("(V2;[i4;])>x") ==
        "the peer's schema is malformed: variant with fewer alternatives than its count at byte 9");
  CHECK(malformed("(V1;[i4;][s])>x") ==
        "the peer's schema is malformed: variant with more alternatives than its count at byte 9");
  CHECK(malformed("(V4294967296;[b])>x") ==
        "the peer's schema is malformed: variant with fewer alternatives than its count at byte 16");
  CHECK(malformed("(q)>x") == "the peer's schema is malformed: unknown type at byte 1");
  CHECK(malformed("(b b)>x") == "the peer's schema is malformed: expected ',' or ')' at byte 2");
}

TEST_CASE("random and mutated schemas are refused or compared, never crash, and explain in printable text",
          "[schema][hostile]") {
  const std::string& valid = call_schema<std::tuple<order, std::map<std::string, item>>, std::variant<point, bool>>();
  const std::string alphabet = "biufdsvaomSBVcDPx()[]{},:;>0123456789_az";
  std::mt19937 random(20261205);
  int refused = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    switch (round % 3) {
      case 0:  // any bytes
        text.resize(random() % 64);
        for (char& c : text) c = static_cast<char>(random() % 256);
        break;
      case 1:  // the grammar's bytes
        text.resize(random() % 64);
        for (char& c : text) c = alphabet[random() % alphabet.size()];
        break;
      default:  // a valid schema with a few bytes changed
        text = valid;
        for (int k = 0; k < 1 + round % 4; ++k) text[random() % text.size()] = static_cast<char>(random() % 256);
    }
    const auto verdict = compare_call_schemas(valid, text);
    INFO(text);
    CHECK(verdict.compatible == verdict.why.empty());
    CHECK(verdict.why.size() <= 300);
    CHECK(is_printable(verdict.why));
    refused += verdict.compatible ? 0 : 1;
  }
  CHECK(refused > 15000);  // a changed byte of a name is a rename, which agrees
}

TEST_CASE("a struct in a map's key or a set's element must keep its fields exactly", "[schema]") {
  // A reader that cut a key's trailing fields off could find two keys equal that were not.
  const auto key_verdict = compare_call_schemas("(m[{a:i4;,b:i4;}][s])>x", "(m[{a:i4;}][s])>x");
  CHECK_FALSE(key_verdict.compatible);
  CHECK(key_verdict.why == "argument 1: map<struct{a, b}, string> here, map<struct{a}, string> on the peer");
  CHECK_FALSE(compare_call_schemas("(S[{a:i4;}])>x", "(S[{a:i4;,b:s}])>x").compatible);
  CHECK_FALSE(compare_call_schemas("(m[({a:i4;},s)][s])>x", "(m[({a:i4;,b:b},s)][s])>x").compatible);
  // A map's value, a vector's element: they may evolve.
  CHECK(compare_call_schemas("(m[s][{a:i4;,b:i4;}])>x", "(m[s][{a:i4;}])>x").compatible);
  CHECK(compare_call_schemas("(v[{a:i4;}])>x", "(v[{a:i4;,b:s}])>x").compatible);
}

TEST_CASE("a verdict names the two sides as it is asked to", "[schema]") {
  const auto verdict = compare_call_schemas("({a:i4;})>x", "({a:s})>x", {"on the server", "from the client"});
  CHECK(verdict.why == "argument 1, field a: int32 on the server, string from the client");
  CHECK(compare_call_schemas("(b)>x", "(b,b)>x", {"on the server", "from the client"}).why ==
        "1 argument on the server, 2 from the client");
}

TEST_CASE("a schema's fingerprint is the walk's, computed from its text alone", "[schema][fingerprint]") {
  using geerpc::codec::schema_fingerprint;
  CHECK(schema_fingerprint(call_schema<std::tuple<v2::cart>, v2::put>()) ==
        fingerprint<std::tuple<v2::cart>, v2::put>());
  CHECK(schema_fingerprint("({num1:i4;,num2:i4;})>i4;") == 0x64c7a676u);
  CHECK(schema_fingerprint("({x:i4;})>x") == schema_fingerprint("({renamed:i4;})>x"));
  CHECK(schema_fingerprint("({x:i4;})>x") != schema_fingerprint("({x:i8;})>x"));
  CHECK(schema_fingerprint("") == 2166136261u);  // nothing to hash: the basis, never 0
}

}  // namespace schema_test
