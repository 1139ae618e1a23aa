// Calls through the JSON codec: a server that speaks it beside the binary codec serves both kinds
// of client on one port, on every transport; what JSON cannot carry fails the call with a clear
// error on the side that tried to send it; a server of the binary codec alone names what it speaks.
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <geerpc/json.hpp>

#include "catch.hpp"
#include "support.hpp"

namespace json_calls_test {

using namespace std::chrono_literals;
using test::Args;

namespace {

using both_codecs = geerpc::codecs<geerpc::binary_codec, geerpc::json_codec>;

struct Order {
  std::string item;
  std::vector<int> sizes;
  std::optional<double> discount;
  std::map<std::string, std::string> notes;
};

struct Shop {
  Order echo_order(const Order& order) { return order; }
  double ratio(double a, double b) { return a / b; }
  int count(const std::vector<Order>& orders, const std::string& item) {
    int n = 0;
    for (const Order& o : orders) n += o.item == item;
    return n;
  }
  void nothing() {}
};
using ShopApi =
    geerpc::service<"Shop", geerpc::method<"EchoOrder", &Shop::echo_order>, geerpc::method<"Ratio", &Shop::ratio>,
                    geerpc::method<"Count", &Shop::count>, geerpc::method<"Nothing", &Shop::nothing>>;

template <class Transport>
struct shop_server {
  Shop shop;
  geerpc::basic_server<Transport, both_codecs> server;
  std::string address;
  shop_server() {
    server.template add<ShopApi>(shop);
    address = server.listen("127.0.0.1:0");
  }
};

}  // namespace

TEMPLATE_TEST_CASE("json calls: a server of both codecs serves a JSON client and a binary one on one port", "[json]",
                   GEERPC_TRANSPORTS) {
  test::arith_server<TestType, both_codecs> s;
  auto json = geerpc::dial<TestType, geerpc::json_codec>(s.address, {.timeouts = {.connect = 2s}});
  auto binary = geerpc::dial<TestType>(s.address, {.timeouts = {.connect = 2s}});
  for (int i = 0; i < 50; ++i) {
    CHECK(json.template call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{i, 2}) == i + 2);
    CHECK(binary.template call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{i, 3}) == i + 3);
  }
  const std::string text = "quotes \" and \\ and\nlines, caf\xc3\xa9";
  CHECK(json.template call<std::string>(geerpc::with_timeout(5s), "Arith.Echo", text) == text);
  const auto failed = json.template try_call<int>(geerpc::with_timeout(5s), "Arith.Fail", Args{});
  CHECK(failed.code() == geerpc::errc::remote_error);
  CHECK(failed.message() == "boom: handler failed");
  CHECK(json.template try_call<int>(geerpc::with_timeout(5s), "Arith.Nope", Args{}).code() ==
        geerpc::errc::unknown_method);
  CHECK(json.template try_call<int>(geerpc::with_timeout(50ms), "Arith.WaitForStop", Args{}).code() ==
        geerpc::errc::deadline_exceeded);
  json.template call<void>(geerpc::with_timeout(5s), "Arith.Nothing", Args{1, 1});
}

TEMPLATE_TEST_CASE("json calls: structs, containers, several arguments and none travel as JSON", "[json]",
                   GEERPC_TRANSPORTS) {
  shop_server<TestType> s;
  auto client = geerpc::dial<TestType, geerpc::json_codec>(s.address, {.timeouts = {.connect = 2s}});
  const Order order{"tea", {1, 2, 3}, 0.25, {{"gift", "yes"}, {"note", "\xe2\x80\xa8"}}};
  const Order back = client.template call<Order>(geerpc::with_timeout(5s), "Shop.EchoOrder", order);
  CHECK(back.item == order.item);
  CHECK(back.sizes == order.sizes);
  CHECK(back.discount == order.discount);
  CHECK(back.notes == order.notes);
  CHECK(client.template call<double>(geerpc::with_timeout(5s), "Shop.Ratio", 1.0, 4.0) == 0.25);
  const std::vector<Order> orders{order, Order{"milk", {}, std::nullopt, {}}, order};
  CHECK(client.template call<int>(geerpc::with_timeout(5s), "Shop.Count", orders, std::string("tea")) == 2);
  client.template call<void>(geerpc::with_timeout(5s), "Shop.Nothing");
}

TEMPLATE_TEST_CASE("json calls: what JSON cannot carry fails on the side that would send it", "[json]",
                   GEERPC_TRANSPORTS) {
  shop_server<TestType> s;
  auto client = geerpc::dial<TestType, geerpc::json_codec>(s.address, {.timeouts = {.connect = 2s}});
  // The argument: refused before anything is sent, and the connection serves the next call.
  const auto refused = client.template try_call<double>(geerpc::with_timeout(5s), "Shop.Ratio", NAN, 1.0);
  CHECK(refused.code() == geerpc::errc::invalid_argument);
  CHECK(refused.message() == "rpc client: cannot encode the arguments: JSON cannot carry NaN");
  // The result (1 / 0 is infinity): the server answers remote_error with the reason.
  const auto infinite = client.template try_call<double>(geerpc::with_timeout(5s), "Shop.Ratio", 1.0, 0.0);
  CHECK(infinite.code() == geerpc::errc::remote_error);
  CHECK(infinite.message() == "rpc server: the reply did not encode: JSON cannot carry infinity");
  CHECK(client.template call<double>(geerpc::with_timeout(5s), "Shop.Ratio", 3.0, 4.0) == 0.75);
}

TEMPLATE_TEST_CASE("json calls: a bad body is a bad request naming the field, and the connection goes on", "[json]",
                   GEERPC_TRANSPORTS) {
  shop_server<TestType> s;
  auto client = geerpc::dial<TestType, geerpc::json_codec>(s.address, {.timeouts = {.connect = 2s}});
  struct WrongOrder {
    int item;  // a string on the server
  };
  const auto bad = client.template try_call<Order>(geerpc::with_timeout(5s), "Shop.EchoOrder", WrongOrder{7});
  CHECK(bad.code() == geerpc::errc::bad_request);
  CHECK_THAT(bad.message(), Catch::Matchers::StartsWith("rpc server: bad request body: "));
  CHECK_THAT(bad.message(), Catch::Matchers::Contains("\"item\""));
  CHECK(client.template call<double>(geerpc::with_timeout(5s), "Shop.Ratio", 1.0, 2.0) == 0.5);
}

// A foreign JSON client that sets the fingerprint flag anyway (with a value no codec computes).
struct json_with_fingerprint : geerpc::json_codec {
  template <class Arguments, class Result>
  static constexpr std::uint32_t fingerprint = 0x5eedf00d;
};

struct binary_with_fingerprint : geerpc::binary_codec {
  template <class Arguments, class Result>
  static constexpr std::uint32_t fingerprint = 0x5eedf00d;
};

TEST_CASE("json calls: a fingerprint on a JSON call is ignored, as JSON matches fields by name", "[json]") {
  test::arith_server<geerpc::threaded, both_codecs> s;
  auto json = geerpc::dial<geerpc::threaded, json_with_fingerprint>(s.address, {.timeouts = {.connect = 2s}});
  CHECK(json.call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{2, 3}) == 5);
  // The same fingerprint on a binary connection is judged, and refused.
  auto binary = geerpc::dial<geerpc::threaded, binary_with_fingerprint>(s.address, {.timeouts = {.connect = 2s}});
  CHECK(binary.try_call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{2, 3}).code() == geerpc::errc::type_mismatch);
}

TEST_CASE("json calls: a server of the binary codec alone refuses a JSON client and names its codecs", "[json]") {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::try_dial<geerpc::threaded, geerpc::json_codec>(s.address, {.timeouts = {.connect = 2s}});
  REQUIRE_FALSE(client.has_value());
  CHECK(client.code() == geerpc::errc::handshake_rejected);
  CHECK(client.message() ==
        "rpc client: handshake rejected: rpc server: unsupported codec 2: this server speaks binary (1)");
}

}  // namespace json_calls_test
