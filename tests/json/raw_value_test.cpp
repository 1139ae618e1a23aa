// json::raw_value and json::raw_arguments (json/raw_value.hpp): JSON text written as it is after a
// check, read back as the exact text of the value; a dynamic call through them reaches a typed
// method (no fingerprint travels) and fails before sending anything when its text is not JSON.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <geerpc/json.hpp>

#include "catch.hpp"
#include "support.hpp"

namespace json_raw_value_test {

using namespace std::chrono_literals;
using geerpc::json::raw_arguments;
using geerpc::json::raw_value;

namespace {

using both_codecs = geerpc::codecs<geerpc::binary_codec, geerpc::json_codec>;

std::string encoded(const raw_value& value) {
  std::vector<std::byte> out;
  geerpc::json::encode(value, out);
  return {reinterpret_cast<const char*>(out.data()), out.size()};
}

std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

// A handler of raw values: what a gateway or a test double serves.
struct Dynamic {
  std::size_t length(const raw_arguments& list) { return list.text.size(); }  // an array's text, as it came
  raw_value echo(const raw_value& value) { return value; }
};
using DynamicApi =
    geerpc::service<"Dynamic", geerpc::method<"Length", &Dynamic::length>, geerpc::method<"Echo", &Dynamic::echo>>;

struct holder {
  int id = 0;
  raw_value extra;
  std::string name;
};

}  // namespace

TEST_CASE("raw_value: encoded verbatim, as its text holds it", "[json][raw_value]") {
  CHECK(encoded({"3"}) == "3");
  CHECK(encoded({R"({"b": [1, 2.50, "x\"y"], "a": null})"}) == R"({"b": [1, 2.50, "x\"y"], "a": null})");
  CHECK(encoded({" true "}) == "true");  // the value, not the whitespace around it
  std::vector<std::byte> out;
  geerpc::json::encode(holder{7, {"[1, {}]"}, "n"}, out);
  CHECK(std::string(reinterpret_cast<const char*>(out.data()), out.size()) == R"({"id":7,"extra":[1, {}],"name":"n"})");
}

TEST_CASE("raw_value: text that is not exactly one JSON value is refused with encode_error", "[json][raw_value]") {
  for (const char* bad : {"", "1 2", "{", "[1,]", "'x'", "{\"a\":1,\"a\":2}", "nul", "1e999"}) {
    INFO(bad);
    std::vector<std::byte> out{std::byte{'#'}};
    CHECK_THROWS_AS(geerpc::json::encode(raw_value{bad}, out), geerpc::json::encode_error);
    CHECK(out.size() == 1);  // left as it was
    CHECK_FALSE(geerpc::json::check_value_text(bad));
  }
  CHECK(geerpc::json::check_value_text(R"(["ok"])"));
}

TEST_CASE("raw_value: decoded as the exact text of the value, whatever its kind", "[json][raw_value]") {
  for (const std::string_view text : {"3", "-0.50e+2", "true", "false", "null", R"("a \"q\" \\ \u00e9")", "[]",
                                      R"([1, [2, {"k": "v}"}], "]"])", R"({ "a" : { "b" : [ ] } })"}) {
    INFO(text);
    raw_value value{"old"};
    REQUIRE(geerpc::json::decode(bytes_of(text), value));
    CHECK(value.text == text);
  }
  raw_value spaced;
  REQUIRE(geerpc::json::decode(bytes_of(" \n[1, 2]\t "), spaced));
  CHECK(spaced.text == "[1, 2]");
  holder h;
  REQUIRE(geerpc::json::decode(bytes_of(R"({"extra": {"x": "}"}, "id": 4, "name": "n"})"), h));
  CHECK(h.extra.text == R"({"x": "}"})");
  CHECK(h.id == 4);
  CHECK(h.name == "n");
  CHECK_FALSE(geerpc::json::decode(bytes_of("[1,"), spaced));
}

TEST_CASE("raw_arguments: only an array, written as it is", "[json][raw_value]") {
  std::vector<std::byte> out;
  geerpc::json_codec::encode_arguments(out, raw_arguments{R"([{"num1":1}, 2])"});
  CHECK(std::string(reinterpret_cast<const char*>(out.data()), out.size()) == R"([{"num1":1}, 2])");
  out.clear();
  CHECK_THROWS_AS(geerpc::json_codec::encode_arguments(out, raw_arguments{"{}"}), geerpc::json::encode_error);
  CHECK_THROWS_AS(geerpc::json_codec::encode_arguments(out, raw_arguments{"[1"}), geerpc::json::encode_error);
  CHECK(out.empty());
}

TEST_CASE("raw_value: a JSON client calls typed methods with no fingerprint and reads their results as text",
          "[json][raw_value]") {
  // The client's type fingerprint of such a call is none: the JSON codec has no fingerprints.
  STATIC_REQUIRE(geerpc::detail::fingerprint_of<geerpc::json_codec, std::tuple<raw_arguments>, raw_value>() == 0);
  test::arith_server<geerpc::threaded, both_codecs> s;
  auto client = geerpc::dial<geerpc::threaded, geerpc::json_codec>(s.address, {.timeouts = {.connect = 2s}});
  const auto ctx = geerpc::with_timeout(5s);
  CHECK(client.call<raw_value>(ctx, "Arith.Sum", raw_arguments{R"([{"num1":1,"num2":2}])"}).text == "3");
  CHECK(client.call<raw_value>(ctx, "Arith.Echo", raw_arguments{R"(["caf\u00e9"])"}).text == "\"caf\xc3\xa9\"");
  CHECK(client.call<raw_value>(ctx, "Arith.Nothing", raw_arguments{"[{}]"}).text.empty());  // void: no value
  // One raw_value stands for one argument among typed ones.
  CHECK(client.call<int>(ctx, "Arith.Sum", raw_value{R"({"num1":5,"num2":6})"}) == 11);
  // A value of the wrong shape is the server's to refuse, as for any JSON call.
  CHECK(client.try_call<raw_value>(ctx, "Arith.Sum", raw_arguments{R"(["x"])"}).code() == geerpc::errc::bad_request);
}

TEST_CASE("raw_value: invalid text fails the call with invalid_argument, sending nothing", "[json][raw_value]") {
  test::Arith arith;
  geerpc::basic_server<geerpc::threaded, both_codecs> server;
  server.add<test::ArithApi>(arith);
  std::atomic<int> reached{0};
  server.use({.before = [&](const geerpc::call_context&) -> std::optional<geerpc::error> {
    ++reached;
    return std::nullopt;
  }});
  const std::string address = server.listen("127.0.0.1:0");
  auto client = geerpc::dial<geerpc::threaded, geerpc::json_codec>(address, {.timeouts = {.connect = 2s}});
  const auto ctx = geerpc::with_timeout(5s);
  const auto bad = client.try_call<raw_value>(ctx, "Arith.Sum", raw_arguments{"[{\"num1\":1"});
  CHECK(bad.code() == geerpc::errc::invalid_argument);
  CHECK_THAT(bad.message(), Catch::Contains("cannot encode the arguments: not one JSON value"));
  CHECK(client.try_call<raw_value>(ctx, "Arith.Sum", raw_arguments{"{}"}).code() == geerpc::errc::invalid_argument);
  // The connection is fine, and the server saw only this call.
  CHECK(client.call<raw_value>(ctx, "Arith.Sum", raw_arguments{R"([{"num1":2,"num2":2}])"}).text == "4");
  CHECK(reached == 1);
}

TEST_CASE("raw_value: a handler takes and returns JSON text, and is described as taking any value",
          "[json][raw_value]") {
  Dynamic dynamic;
  geerpc::basic_server<geerpc::threaded, both_codecs> server;
  server.add<DynamicApi>(dynamic);
  const std::string address = server.listen("127.0.0.1:0");
  auto client = geerpc::dial<geerpc::threaded, geerpc::json_codec>(address, {.timeouts = {.connect = 2s}});
  const auto ctx = geerpc::with_timeout(5s);
  CHECK(client.call<raw_value>(ctx, "Dynamic.Echo", raw_arguments{R"([ {"a": [1, 2]} ])"}).text == R"({"a": [1, 2]})");
  CHECK(client.call<std::vector<int>>(ctx, "Dynamic.Echo", raw_value{"[1,2,3]"}) == std::vector<int>{1, 2, 3});
  CHECK(client.call<std::size_t>(ctx, "Dynamic.Length", raw_arguments{"[[7, 8]]"}) == 6);
  CHECK(client.try_call<std::size_t>(ctx, "Dynamic.Length", raw_arguments{"[{}]"}).code() == geerpc::errc::bad_request);
  const auto& echo = geerpc::codec::call_json_schema<std::tuple<raw_value>, raw_value>();
  CHECK(echo.params == R"({"type":"array","prefixItems":[{}],"minItems":1,"items":false})");
  CHECK(echo.result == "{}");
  CHECK(geerpc::codec::call_json_schema<std::tuple<raw_arguments>, raw_value>().params ==
        R"({"type":"array","prefixItems":[{"type":"array"}],"minItems":1,"items":false})");
}

}  // namespace json_raw_value_test
