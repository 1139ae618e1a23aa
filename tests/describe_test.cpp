// A server described to other programs: each type's JSON Schema as the JSON codec writes it
// (codec/json_schema.hpp), GET /debug/geerpc/services.json and the built-in geerpc.Describe, both
// served only to the peers the debug page's policy admits; and the service name they take, which
// a user's service may not.
#include <atomic>
#include <bitset>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "catch.hpp"
#include "strict_json.hpp"
#include "support.hpp"

namespace describe_test {

using namespace std::chrono_literals;
using geerpc::debug_page_policy;

struct opaque {  // a class whose serializer writes its own bytes
  std::uint32_t bits = 0;
};
struct money {  // a class whose serializer converts it to a wire_type
  std::int64_t cents = 0;
};

}  // namespace describe_test

template <>
struct geerpc::codec::serializer<describe_test::opaque> {
  static constexpr std::size_t min_encoded_size = 4;
  static void encode(geerpc::codec::writer& out, const describe_test::opaque& o) { out.fixed(o.bits); }
  static bool decode(geerpc::codec::reader& in, describe_test::opaque& o) { return in.fixed(o.bits); }
};
template <>
struct geerpc::codec::serializer<describe_test::money> {
  using wire_type = std::pair<std::string, std::int64_t>;
  static wire_type to_wire(const describe_test::money& m) { return {"EUR", m.cents}; }
  static describe_test::money from_wire(wire_type&& w) { return {w.second}; }
};

namespace describe_test {
namespace {

enum class level : std::uint16_t { low, high };
enum class flag : bool { off, on };

struct Point {
  int x;
  int y;
};

struct Empty {};

struct Rich {
  std::vector<Point> points;
  std::map<std::string, std::optional<double>> scores;
  std::variant<std::int8_t, std::string> tag;
  std::vector<std::byte> blob;
  std::chrono::system_clock::time_point at;
};

template <class T>
std::string schema_of() {
  std::string out;
  geerpc::codec::append_json_schema<T>(out);
  return out;
}

constexpr const char* int32_schema = R"({"type":"integer","minimum":-2147483648,"maximum":2147483647})";

}  // namespace

TEST_CASE("json schema: scalars, strings and bytes as the JSON codec writes them", "[describe]") {
  CHECK(schema_of<bool>() == R"({"type":"boolean"})");
  CHECK(schema_of<std::int8_t>() == R"({"type":"integer","minimum":-128,"maximum":127})");
  CHECK(schema_of<int>() == int32_schema);
  CHECK(schema_of<std::int64_t>() ==
        R"({"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807})");
  CHECK(schema_of<std::uint64_t>() == R"({"type":"integer","minimum":0,"maximum":18446744073709551615})");
  CHECK(schema_of<float>() == R"({"type":"number"})");
  CHECK(schema_of<double>() == R"({"type":"number"})");
  CHECK(schema_of<level>() == R"({"type":"integer","minimum":0,"maximum":65535})");
  CHECK(schema_of<flag>() == R"({"type":"boolean"})");
  CHECK(schema_of<std::byte>() == R"({"type":"integer","minimum":0,"maximum":255})");
  CHECK(schema_of<std::string>() == R"({"type":"string"})");
  CHECK(schema_of<std::string_view>() == R"({"type":"string"})");
  const std::string base64 = R"({"type":"string","contentEncoding":"base64"})";
  CHECK(schema_of<std::vector<std::byte>>() == base64);
  CHECK(schema_of<std::vector<std::uint8_t>>() == base64);
  CHECK(schema_of<std::span<const std::byte>>() == base64);
  CHECK(schema_of<opaque>() == base64);
  // Not bytes to the JSON codec: a deque of them and a std::array are arrays of integers.
  CHECK(schema_of<std::deque<std::byte>>() ==
        R"({"type":"array","items":{"type":"integer","minimum":0,"maximum":255}})");
  CHECK(schema_of<std::vector<std::int8_t>>() ==
        R"({"type":"array","items":{"type":"integer","minimum":-128,"maximum":127}})");
}

TEST_CASE("json schema: containers, optionals, variants, time and custom types", "[describe]") {
  const std::string i32 = int32_schema;
  CHECK(schema_of<std::vector<int>>() == R"({"type":"array","items":)" + i32 + "}");
  CHECK(schema_of<std::span<const int>>() == R"({"type":"array","items":)" + i32 + "}");
  CHECK(schema_of<std::array<int, 3>>() == R"({"type":"array","items":)" + i32 + R"(,"minItems":3,"maxItems":3})");
  CHECK(schema_of<std::set<int>>() == R"({"type":"array","items":)" + i32 + R"(,"uniqueItems":true})");
  CHECK(schema_of<std::multiset<int>>() == R"({"type":"array","items":)" + i32 + "}");
  CHECK(schema_of<std::optional<int>>() == R"({"anyOf":[{"type":"null"},)" + i32 + "]}");
  CHECK(schema_of<std::unique_ptr<std::string>>() == R"({"anyOf":[{"type":"null"},{"type":"string"}]})");
  CHECK(schema_of<std::map<std::string, bool>>() == R"({"type":"object","additionalProperties":{"type":"boolean"}})");
  CHECK(
      schema_of<std::map<int, bool>>() ==
      R"({"type":"object","propertyNames":{"pattern":"^(0|-?[1-9][0-9]*)$"},"additionalProperties":{"type":"boolean"}})");
  CHECK(
      schema_of<std::map<level, bool>>() ==
      R"({"type":"object","propertyNames":{"pattern":"^(0|[1-9][0-9]*)$"},"additionalProperties":{"type":"boolean"}})");
  CHECK(schema_of<std::map<double, bool>>() ==
        R"({"type":"array","items":{"type":"array","prefixItems":[{"type":"number"},{"type":"boolean"}],)"
        R"("minItems":2,"items":false}})");
  CHECK(schema_of<std::tuple<>>() == R"({"type":"array","items":false})");
  CHECK(schema_of<std::pair<int, std::string>>() ==
        R"({"type":"array","prefixItems":[)" + i32 + R"(,{"type":"string"}],"minItems":2,"items":false})");
  CHECK(schema_of<std::chrono::milliseconds>() ==
        R"({"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807})");
  CHECK(schema_of<std::chrono::duration<double>>() == R"({"type":"number"})");
  CHECK(schema_of<std::chrono::system_clock::time_point>() == R"({"type":"string","format":"date-time"})");
  CHECK(schema_of<std::variant<int, std::string>>() ==
        R"({"oneOf":[{"type":"array","prefixItems":[{"const":0},)" + i32 +
            R"(],"minItems":2,"items":false},{"type":"array","prefixItems":[{"const":1},{"type":"string"}],)"
            R"("minItems":2,"items":false}]})");
  CHECK(schema_of<std::bitset<4>>() == R"({"type":"string","pattern":"^[01]*$","minLength":4,"maxLength":4})");
  CHECK(schema_of<money>() == schema_of<std::pair<std::string, std::int64_t>>());
}

TEST_CASE("json schema: a struct is an object of its fields by name, none required", "[describe]") {
  const std::string i32 = int32_schema;
  const std::string point = R"({"type":"object","properties":{"x":)" + i32 + R"(,"y":)" + i32 + "}}";
  CHECK(schema_of<Point>() == point);
  CHECK(schema_of<Empty>() == R"({"type":"object","properties":{}})");
  CHECK(schema_of<Rich>() ==
        R"({"type":"object","properties":{"points":{"type":"array","items":)" + point +
            R"(},"scores":{"type":"object","additionalProperties":{"anyOf":[{"type":"null"},{"type":"number"}]}},)"
            R"("tag":{"oneOf":[{"type":"array","prefixItems":[{"const":0},{"type":"integer","minimum":-128,)"
            R"("maximum":127}],"minItems":2,"items":false},{"type":"array","prefixItems":[{"const":1},)"
            R"({"type":"string"}],"minItems":2,"items":false}]},)"
            R"("blob":{"type":"string","contentEncoding":"base64"},"at":{"type":"string","format":"date-time"}}})");
  CHECK(test::strict_json::check(schema_of<Rich>()).empty());

  // A call: its arguments as the params array, its result; nothing for a void one.
  const auto& sum = geerpc::codec::call_json_schema<std::tuple<Point, int>, double>();
  CHECK(sum.params == R"({"type":"array","prefixItems":[)" + point + "," + i32 + R"(],"minItems":2,"items":false})");
  CHECK(sum.result == R"({"type":"number"})");
  CHECK(geerpc::codec::call_json_schema<std::tuple<>, void>().result.empty());
  CHECK(&geerpc::codec::call_json_schema<std::tuple<>, void>() ==
        &geerpc::codec::call_json_schema<std::tuple<>, void>());
}

namespace {

const std::string args_schema =
    std::string(R"({"type":"object","properties":{"num1":)") + int32_schema + R"(,"num2":)" + int32_schema + "}}";

}  // namespace

TEMPLATE_TEST_CASE("services.json lists every method with its schemas, sorted, as strict JSON", "[describe]",
                   GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s(test::with_debug_page({}));
  const std::string response = test::http_exchange(s.address, "GET /debug/geerpc/services.json HTTP/1.0\r\n\r\n");
  REQUIRE(response.starts_with("HTTP/1.0 200 OK\r\n"));
  CHECK(response.find("\r\nContent-Type: application/json\r\n") != std::string::npos);
  const std::string body = response.substr(response.find("\r\n\r\n") + 4);
  INFO(body);
  CHECK(test::strict_json::check(body).empty());
  CHECK(body.starts_with(R"({"schema_dialect":"https://json-schema.org/draft/2020-12/schema","methods":[)"
                         R"({"name":"Arith.Echo","params":{"type":"array","prefixItems":[{"type":"string"}],)"
                         R"("minItems":1,"items":false},"result":{"type":"string"}},)"));
  CHECK(body.find(R"({"name":"Arith.Sum","params":{"type":"array","prefixItems":[)" + args_schema +
                  R"(],"minItems":1,"items":false},"result":)" + int32_schema + "}") != std::string::npos);
  CHECK(body.find(R"("name":"Arith.Nothing","params":{"type":"array","prefixItems":[)" + args_schema +
                  R"(],"minItems":1,"items":false},"result":null})") != std::string::npos);
  // Its own method is listed too: whoever reads the list may call it.
  CHECK(body.ends_with(R"({"name":"geerpc.Describe","params":{"type":"array","items":false},)"
                       R"("result":{"type":"string"}}]})"
                       "\n"));
  // By name, in byte order.
  std::vector<std::string> names;
  for (std::size_t at = body.find(R"("name":")"); at != std::string::npos; at = body.find(R"("name":")", at + 1))
    names.push_back(body.substr(at + 8, body.find('"', at + 8) - at - 8));
  CHECK(names == std::vector<std::string>{"Arith.Echo", "Arith.Fail", "Arith.Late", "Arith.Nothing", "Arith.Sum",
                                          "Arith.ThrowInt", "Arith.WaitForStop", "geerpc.Describe"});
  // The debug page links it.
  CHECK(test::http_get(s.address, "/debug/geerpc").find("<a href=\"/debug/geerpc/services.json\">") !=
        std::string::npos);
}

TEMPLATE_TEST_CASE("services.json: a peer the policy refuses gets the 404 of a path that does not exist", "[describe]",
                   GEERPC_TRANSPORTS) {
  for (const auto& policy :
       {debug_page_policy::off(), debug_page_policy::allow_if([](const geerpc::debug_peer&) { return false; })}) {
    test::arith_server<TestType> s(test::with_debug_page(policy));
    const std::string refused = test::http_exchange(s.address, "GET /debug/geerpc/services.json HTTP/1.0\r\n\r\n");
    std::string missing = test::http_exchange(s.address, "GET /debug/geerpc/services.jso~ HTTP/1.0\r\n\r\n");
    missing.replace(missing.find("services.jso~"), 13, "services.json");
    CHECK(refused.starts_with("HTTP/1.0 404 Not Found\r\n"));
    CHECK(refused == missing);
  }
}

TEMPLATE_TEST_CASE("geerpc.Describe answers an admitted caller with services.json's document", "[describe]",
                   GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s(test::with_debug_page({}));
  auto client = geerpc::dial<TestType>(s.address);
  const std::string document = client.template call<std::string>("geerpc.Describe");
  CHECK(document == test::http_get(s.address, "/debug/geerpc/services.json"));
  // Its service holds nothing else, and says nothing of it.
  auto other = client.template try_call<std::string>("geerpc.Nope");
  CHECK(other.code() == geerpc::errc::unknown_service);
  CHECK(other.message() == "rpc server: can't find service geerpc");
}

TEMPLATE_TEST_CASE("geerpc.Describe does not exist for a peer the policy refuses", "[describe]", GEERPC_TRANSPORTS) {
  std::atomic<int> asked{0};
  for (const auto& policy : {debug_page_policy::off(), debug_page_policy::allow_if([&](const geerpc::debug_peer&) {
                               asked.fetch_add(1);
                               return false;
                             })}) {
    test::arith_server<TestType> s(test::with_debug_page(policy));
    auto client = geerpc::dial<TestType>(s.address);
    auto refused = client.template try_call<std::string>("geerpc.Describe");
    auto absent = client.template try_call<std::string>("geerpc.Nope");
    CHECK(refused.code() == geerpc::errc::unknown_service);
    CHECK(refused.message() == "rpc server: can't find service geerpc");
    CHECK(refused.message() == absent.message());
    // A near miss is not steered towards it either.
    auto near = client.template try_call<std::string>("geerpc.Describ");
    CHECK(near.message() == "rpc server: can't find service geerpc");
    auto other = client.template try_call<int>("Arith.Describe", test::Args{1, 2});
    CHECK(other.message().find("geerpc") == std::string::npos);
    CHECK(client.template call<int>("Arith.Sum", test::Args{1, 2}) == 3);
  }
  CHECK(asked.load() == 1);  // asked for the built-in name only, not for the other calls
}

namespace {
struct Mine {
  int describe() { return 1; }
};
}  // namespace

TEST_CASE("a user's service may not be named geerpc", "[describe]") {
  using MineApi = geerpc::service<"geerpc", geerpc::method<"Describe", &Mine::describe>>;
  Mine mine;
  geerpc::server server;
  try {
    server.add<MineApi>(mine);
    FAIL("expected rpc_error");
  } catch (const geerpc::rpc_error& e) {
    CHECK(e.code() == geerpc::errc::invalid_argument);
    CHECK(std::string(e.what()) ==
          "rpc: the service name \"geerpc\" is reserved for the server's own methods (geerpc.Describe)");
  }
}

}  // namespace describe_test
