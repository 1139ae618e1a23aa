// The JSON Schemas a server publishes (codec/json_schema.hpp, docs/protocol.md 10) against what
// the JSON codec really writes: values of every kind, encoded by geerpc::json, each validated
// against its type's schema by a small validator here (the keywords the schemas use, and a
// failure for any other, so that a new keyword cannot pass unchecked); and geerpc.Describe over
// the JSON codec, whose document is services.json's.
#include <array>
#include <bitset>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <geerpc/json.hpp>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#if __has_include(<nlohmann/json.hpp>)
#include <nlohmann/json.hpp>
#define GEERPC_SCHEMA_TEST_HAS_NLOHMANN 1
#endif

#include "catch.hpp"
#include "support.hpp"

namespace json_schema_test {

struct money {
  std::int64_t cents = 0;
};

}  // namespace json_schema_test

template <>
struct geerpc::codec::serializer<json_schema_test::money> {
  using wire_type = std::tuple<std::string, std::int64_t>;
  static wire_type to_wire(const json_schema_test::money& m) { return {"EUR", m.cents}; }
  static json_schema_test::money from_wire(wire_type&& w) { return {std::get<1>(w)}; }
};

namespace json_schema_test {

using namespace std::chrono_literals;

#ifdef GEERPC_SCHEMA_TEST_HAS_NLOHMANN
namespace {

using json = nlohmann::json;

enum class colour : std::int16_t { red = -1, green = 7 };

struct Point {
  int x;
  int y;
};

struct Rich {
  std::vector<Point> points;
  std::map<std::string, std::optional<double>> scores;
  std::variant<std::int8_t, std::string> tag;
  std::vector<std::byte> blob;
  std::chrono::system_clock::time_point at;
  std::map<int, bool> by_number;
  std::map<std::pair<int, int>, std::string> by_pair;
  std::set<std::uint16_t> unique;
  std::bitset<5> bits;
  std::array<std::uint8_t, 2> pair_of_bytes;
  std::tuple<int, std::string> tuple;
  std::uint64_t big;
  std::int64_t small;
  std::optional<int> nothing;
  std::unique_ptr<std::string> boxed;
  colour hue;
  std::chrono::milliseconds wait;
  money price;
  float ratio;
  bool yes;
};

// Compares two integers held by nlohmann's numbers exactly (an int64 and a uint64 alike).
int compare_integers(const json& a, const json& b) {
  const bool a_negative = a.is_number_integer() && !a.is_number_unsigned() && a.get<std::int64_t>() < 0;
  const bool b_negative = b.is_number_integer() && !b.is_number_unsigned() && b.get<std::int64_t>() < 0;
  if (a_negative != b_negative) return a_negative ? -1 : 1;
  if (a_negative) {
    const auto x = a.get<std::int64_t>(), y = b.get<std::int64_t>();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  const auto x = a.get<std::uint64_t>(), y = b.get<std::uint64_t>();
  return x < y ? -1 : x > y ? 1 : 0;
}

bool has_type(const json& value, const std::string& type) {
  if (type == "null") return value.is_null();
  if (type == "boolean") return value.is_boolean();
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "string") return value.is_string();
  if (type == "array") return value.is_array();
  if (type == "object") return value.is_object();
  return false;
}

// Why `value` does not satisfy `schema` ("" if it does); `at` is where in the value.
std::string why_not(const json& schema, const json& value, const std::string& at);

std::string array_why_not(const json& schema, const json& value, const std::string& at) {
  std::size_t prefix = 0;
  if (schema.contains("prefixItems")) {
    prefix = schema["prefixItems"].size();
    for (std::size_t i = 0; i < prefix && i < value.size(); ++i)
      if (auto why = why_not(schema["prefixItems"][i], value[i], at + "/" + std::to_string(i)); !why.empty())
        return why;
  }
  if (schema.contains("items")) {
    const json& items = schema["items"];
    if (items.is_boolean() && !items.get<bool>() && value.size() > prefix) return at + ": more items than allowed";
    if (items.is_object())
      for (std::size_t i = prefix; i < value.size(); ++i)
        if (auto why = why_not(items, value[i], at + "/" + std::to_string(i)); !why.empty()) return why;
  }
  if (schema.contains("minItems") && value.size() < schema["minItems"].get<std::size_t>())
    return at + ": too few items";
  if (schema.contains("maxItems") && value.size() > schema["maxItems"].get<std::size_t>())
    return at + ": too many items";
  if (schema.value("uniqueItems", false))
    for (std::size_t i = 0; i < value.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (value[i] == value[j]) return at + ": repeated item";
  return {};
}

std::string object_why_not(const json& schema, const json& value, const std::string& at) {
  for (const auto& [key, member] : value.items()) {
    if (schema.contains("propertyNames") &&
        !std::regex_search(key, std::regex(schema["propertyNames"]["pattern"].get<std::string>())))
      return at + ": key " + key + " does not match propertyNames";
    if (schema.contains("properties") && schema["properties"].contains(key)) {
      if (auto why = why_not(schema["properties"][key], member, at + "/" + key); !why.empty()) return why;
    } else if (schema.contains("additionalProperties")) {
      if (auto why = why_not(schema["additionalProperties"], member, at + "/" + key); !why.empty()) return why;
    }
  }
  return {};
}

std::string why_not(const json& schema, const json& value, const std::string& at) {
  static const std::set<std::string> known{
      "type",          "minimum",   "maximum",         "items",      "prefixItems",
      "minItems",      "maxItems",  "uniqueItems",     "properties", "additionalProperties",
      "propertyNames", "anyOf",     "oneOf",           "const",      "pattern",
      "minLength",     "maxLength", "contentEncoding", "format"};
  for (const auto& [keyword, _] : schema.items())
    if (known.count(keyword) == 0) return at + ": the validator does not know " + keyword;
  if (schema.contains("type") && !has_type(value, schema["type"].get<std::string>()))
    return at + ": " + value.dump() + " is not " + schema["type"].dump();
  if (schema.contains("const") && value != schema["const"]) return at + ": not the const";
  if (schema.contains("minimum") && compare_integers(value, schema["minimum"]) < 0) return at + ": below minimum";
  if (schema.contains("maximum") && compare_integers(value, schema["maximum"]) > 0) return at + ": above maximum";
  if (value.is_string()) {
    const auto text = value.get<std::string>();
    if (schema.contains("pattern") && !std::regex_search(text, std::regex(schema["pattern"].get<std::string>())))
      return at + ": does not match the pattern";
    if (schema.contains("minLength") && text.size() < schema["minLength"].get<std::size_t>()) return at + ": too short";
    if (schema.contains("maxLength") && text.size() > schema["maxLength"].get<std::size_t>()) return at + ": too long";
    if (schema.contains("contentEncoding") &&
        !std::regex_match(text, std::regex("([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")))
      return at + ": not base64";
    if (schema.value("format", "") == "date-time" &&
        !std::regex_match(text, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d))")))
      return at + ": not an RFC 3339 date-time";
  }
  if (value.is_array())
    if (auto why = array_why_not(schema, value, at); !why.empty()) return why;
  if (value.is_object())
    if (auto why = object_why_not(schema, value, at); !why.empty()) return why;
  if (schema.contains("anyOf")) {
    bool any = false;
    for (const json& option : schema["anyOf"]) any = any || why_not(option, value, at).empty();
    if (!any) return at + ": matches none of anyOf";
  }
  if (schema.contains("oneOf")) {
    int matched = 0;
    for (const json& option : schema["oneOf"]) matched += why_not(option, value, at).empty() ? 1 : 0;
    if (matched != 1) return at + ": matches " + std::to_string(matched) + " of oneOf";
  }
  return {};
}

template <class T>
std::string validate(const T& value) {
  std::vector<std::byte> text;
  geerpc::json::encode(value, text);
  std::string schema;
  geerpc::codec::append_json_schema<T>(schema);
  return why_not(
      json::parse(schema),
      json::parse(reinterpret_cast<const char*>(text.data()), reinterpret_cast<const char*>(text.data()) + text.size()),
      "");
}

Rich rich() {
  Rich r;
  r.points = {{1, -2}, {3, 4}};
  r.scores = {{"a", 1.5}, {"b", std::nullopt}};
  r.tag = std::string("label");
  r.blob = {std::byte{0}, std::byte{0xff}, std::byte{7}, std::byte{8}};
  r.at = std::chrono::system_clock::time_point(1'796'342'687'120ms);
  r.by_number = {{-3, true}, {0, false}, {12, true}};
  r.by_pair = {{{1, 2}, "x"}};
  r.unique = {1, 2, 65535};
  r.bits = std::bitset<5>("10110");
  r.pair_of_bytes = {0, 255};
  r.tuple = {7, "seven"};
  r.big = std::numeric_limits<std::uint64_t>::max();
  r.small = std::numeric_limits<std::int64_t>::min();
  r.boxed = std::make_unique<std::string>("boxed");
  r.hue = colour::red;
  r.wait = 250ms;
  r.price = {1999};
  r.ratio = 0.25f;
  r.yes = true;
  return r;
}

}  // namespace

TEST_CASE("json schema: what geerpc::json writes for every kind satisfies the type's schema", "[json]") {
  CHECK(validate(rich()) == "");
  Rich other = rich();
  other.tag = std::int8_t{-128};
  other.nothing = 5;
  other.boxed.reset();
  other.scores.clear();
  CHECK(validate(other) == "");
  CHECK(validate(std::vector<Rich>(2)) == "");
  CHECK(validate(std::make_tuple(Point{1, 2}, std::string("x"), std::optional<std::optional<int>>{})) == "");
}

TEST_CASE("json schema: the validator refuses what the schema does not allow", "[json]") {
  const auto check = [](const std::string& schema, const std::string& value) {
    return why_not(json::parse(schema), json::parse(value), "");
  };
  std::string int8;
  geerpc::codec::append_json_schema<std::int8_t>(int8);
  CHECK(check(int8, "128") != "");
  CHECK(check(int8, "\"1\"") != "");
  std::string u64;
  geerpc::codec::append_json_schema<std::uint64_t>(u64);
  CHECK(check(u64, "18446744073709551615") == "");
  CHECK(check(u64, "-1") != "");
  std::string pair;
  geerpc::codec::append_json_schema<std::pair<int, std::string>>(pair);
  CHECK(check(pair, R"([1,"a"])") == "");
  CHECK(check(pair, R"([1])") != "");
  CHECK(check(pair, R"([1,"a",2])") != "");
  std::string variant;
  geerpc::codec::append_json_schema<std::variant<int, std::string>>(variant);
  CHECK(check(variant, R"([1,"a"])") == "");
  CHECK(check(variant, R"([0,"a"])") != "");
  std::string point;
  geerpc::codec::append_json_schema<Point>(point);
  CHECK(check(point, R"({"x":1})") == "");  // no field is required
  CHECK(check(point, R"({"x":"1"})") != "");
  CHECK(check(R"({"type":"string","frob":1})", R"("a")") != "");  // an unknown keyword
}

TEMPLATE_TEST_CASE("json schema: geerpc.Describe over the JSON codec is services.json's document", "[json]",
                   GEERPC_TRANSPORTS) {
  test::arith_server<TestType, geerpc::codecs<geerpc::binary_codec, geerpc::json_codec>> s;
  auto client = geerpc::dial<TestType, geerpc::json_codec>(s.address, {.timeouts = {.connect = 2s}});
  const std::string document = client.template call<std::string>("geerpc.Describe");
  CHECK(document == test::http_get(s.address, "/debug/geerpc/services.json"));
  const json parsed = json::parse(document);
  REQUIRE(parsed["methods"].is_array());
  bool found = false;
  for (const json& method : parsed["methods"]) {
    if (method["name"] != "Arith.Sum") continue;
    found = true;
    // The params array of a real JSON call's body satisfies it; one with a string does not.
    CHECK(why_not(method["params"], json::parse(R"([{"num1":1,"num2":2}])"), "") == "");
    CHECK(why_not(method["params"], json::parse(R"([{"num1":"1","num2":2}])"), "") != "");
    CHECK(why_not(method["result"], json::parse("3"), "") == "");
  }
  CHECK(found);
}
#endif

}  // namespace json_schema_test
