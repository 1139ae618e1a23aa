// Handlers of any arity: none, one, several, each optionally followed by a std::stop_token; called
// by name and through typed stubs, synchronously and asynchronously, over every transport.
#include <atomic>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace arity_test {

using namespace std::chrono_literals;

namespace {

struct Math {
  std::atomic<int> pings{0};  // async calls run their handlers at once
  int ping() { return ++pings; }
  int add(int a, int b) const { return a + b; }
  std::string join(const std::vector<std::string>& words, const std::string& separator) const {
    std::string out;
    for (const auto& word : words) out += (out.empty() ? "" : separator) + word;
    return out;
  }
  double scale(double value, const test::Args& factor, std::int64_t extra) const {
    return value * factor.num1 / factor.num2 + static_cast<double>(extra);
  }
  void touch() { ++pings; }
  int wait(int a, int b, std::stop_token stop) const { return stop.stop_requested() ? -1 : a * b; }
};

std::string triple(char c, int times, bool upper) {
  return std::string(static_cast<std::size_t>(times), upper ? static_cast<char>(c - 32) : c);
}

using MathApi = geerpc::service<"Math",                                                                        //
                                geerpc::method<"Ping", &Math::ping>,                                           //
                                geerpc::method<"Add", &Math::add>,                                             //
                                geerpc::method<"Join", &Math::join>,                                           //
                                geerpc::method<"Scale", &Math::scale>, geerpc::method<"Touch", &Math::touch>,  //
                                geerpc::method<"Wait", &Math::wait>>;

using FreeApi = geerpc::service<"Free",                             //
                                geerpc::method<"Triple", &triple>,  //
                                geerpc::method<"Mul", [](int a, int b) { return a * b; }>,
                                geerpc::method<"Seven", [] { return 7; }>>;

// What the stubs carry.
static_assert(MathApi::fn<"Ping">::arity == 0);
static_assert(std::is_same_v<MathApi::fn<"Ping">::argument_types, std::tuple<>>);
static_assert(MathApi::fn<"Add">::arity == 2);
static_assert(std::is_same_v<MathApi::fn<"Add">::argument_types, std::tuple<int, int>>);
static_assert(std::is_same_v<MathApi::fn<"Join">::argument_types, std::tuple<std::vector<std::string>, std::string>>);
static_assert(MathApi::fn<"Wait">::arity == 2);  // the stop_token is the server's, not an argument
static_assert(std::is_same_v<FreeApi::fn<"Triple">::result_type, std::string>);
static_assert(std::is_void_v<MathApi::fn<"Touch">::result_type>);

}  // namespace

TEMPLATE_TEST_CASE("handlers of any arity are called by name and through typed stubs", "[arity]", GEERPC_TRANSPORTS) {
  Math math;
  geerpc::basic_server<TestType> server;
  server.template add<MathApi>(math);
  server.template add<FreeApi>();
  auto client = geerpc::dial<TestType>(server.listen("127.0.0.1:0"));

  SECTION("no arguments") {
    CHECK(client.template call<int>("Math.Ping") == 1);
    CHECK(client.template call<MathApi::fn<"Ping">>() == 2);
    CHECK(client.template call<int>(geerpc::with_timeout(1s), "Math.Ping") == 3);
    CHECK(client.template call<MathApi::fn<"Ping">>(geerpc::with_timeout(1s)) == 4);
    CHECK(client.template call<FreeApi::fn<"Seven">>() == 7);
    client.template call<MathApi::fn<"Touch">>();
    client.template call<void>("Math.Touch");
    CHECK(client.template call<int>("Math.Ping") == 7);
  }
  SECTION("several arguments, by name") {
    CHECK(client.template call<int>("Math.Add", 1, 2) == 3);
    CHECK(client.template call<int>(geerpc::with_timeout(1s), "Math.Add", 40, 2) == 42);
    CHECK(client.template call<std::string>("Math.Join", std::vector<std::string>{"a", "b", "c"}, "-") == "a-b-c");
    CHECK(client.template call<std::string>("Free.Triple", 'x', 3, true) == "XXX");
    CHECK(client.template try_call<int>("Free.Mul", 6, 7).value() == 42);
  }
  SECTION("several arguments, through typed stubs that convert to the declared types") {
    CHECK(client.template call<MathApi::fn<"Add">>(1, 2) == 3);
    CHECK(client.template call<MathApi::fn<"Add">>(geerpc::with_timeout(1s), 2, 3) == 5);
    CHECK(client.template call<MathApi::fn<"Join">>(std::vector<std::string>{"x", "y"}, "+") == "x+y");
    short narrow = 2;
    CHECK(client.template call<MathApi::fn<"Scale">>(3, test::Args{4, narrow}, 1) == 7.0);
    CHECK(client.template try_call<FreeApi::fn<"Mul">>(5, 5).value() == 25);
    CHECK(client.template call<MathApi::fn<"Wait">>(6, 7) == 42);
  }
  SECTION("one argument is not two: a struct or tuple of the same fields is refused by a two-argument method") {
    // A struct carries its length (docs/protocol.md 5.1), so it no longer encodes as the arguments.
    CHECK(client.template try_call<int>("Math.Add", test::Args{20, 22}).code() == geerpc::errc::type_mismatch);
    CHECK(client.template try_call<int>("Math.Add", std::tuple<int, int>{1, 1}).code() == geerpc::errc::type_mismatch);
    CHECK(client.template call<int>("Math.Add", 1, 1) == 2);
  }
  SECTION("the wrong number of arguments by name is a type mismatch, and the connection goes on") {
    auto too_few = client.template try_call<int>("Math.Add", 1);
    REQUIRE_FALSE(too_few.has_value());
    CHECK(too_few.error().code == geerpc::errc::type_mismatch);
    auto too_many = client.template try_call<int>("Math.Ping", 1);
    REQUIRE_FALSE(too_many.has_value());
    CHECK(too_many.error().code == geerpc::errc::type_mismatch);
    CHECK(client.template call<int>("Math.Add", 2, 2) == 4);
  }
}

TEMPLATE_TEST_CASE("without fingerprints, the wrong number of arguments is a bad request", "[arity]",
                   GEERPC_TRANSPORTS) {
  Math math;
  geerpc::basic_server<TestType> server;
  server.template add<MathApi>(math);
  auto client = geerpc::dial<TestType, test::unchecked_codec>(server.listen("127.0.0.1:0"));
  auto too_few = client.template try_call<int>("Math.Add", 1);
  REQUIRE_FALSE(too_few.has_value());
  CHECK(too_few.error().code == geerpc::errc::bad_request);
  CHECK(client.template call<int>("Math.Add", 2, 2) == 4);
}

TEMPLATE_TEST_CASE("asynchronous calls take any number of arguments", "[arity][async]", GEERPC_ASYNC_TRANSPORTS) {
  Math math;
  geerpc::basic_server<TestType> server;
  server.template add<MathApi>(math);
  auto client = geerpc::dial<TestType>(server.listen("127.0.0.1:0"));

  auto ping = client.template async_call<int>("Math.Ping");
  auto add = client.template async_call<MathApi::fn<"Add">>(3, 4);
  auto add_by_name = client.template async_call<int>(geerpc::with_timeout(1s), "Math.Add", 5, 6);
  auto stub_ping = client.template async_call<MathApi::fn<"Ping">>(geerpc::with_timeout(1s));
  CHECK(add.get() == 7);
  CHECK(add_by_name.get() == 11);
  const int first = ping.get();
  const int second = stub_ping.get();
  CHECK(first + second == 3);  // 1 and 2, in whichever order the handlers ran
}

}  // namespace arity_test
