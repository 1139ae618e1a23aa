// The listening socket's life: stop() closes it at once, so a dial to a stopped server is refused
// (not left to its connect timeout) and a new server can take the same address right away.
#include <memory>
#include <string>
#include <thread>

#include "catch.hpp"
#include "support.hpp"

using namespace std::chrono_literals;
using test::Args;

TEMPLATE_TEST_CASE("a dial to a stopped server is refused, not left to time out", "[listen][stop]", geerpc::blocking,
                   geerpc::threaded) {
  test::arith_server<TestType> s;
  REQUIRE(geerpc::dial<TestType>(s.address).template call<int>("Arith.Sum", Args{1, 2}) == 3);
  s.server.stop();
  // The server object lives on: only stop() can have closed its listening socket.
  auto refused = geerpc::try_dial<TestType>(s.address, {.connect_timeout = 500ms});
  REQUIRE_FALSE(refused);
  CHECK(refused.code() == geerpc::errc::connect_failed);
  CHECK_THAT(refused.message(), Catch::Contains("Connection refused"));
}

TEMPLATE_TEST_CASE("a new server listens on the address of one just stopped", "[listen][stop]", geerpc::blocking,
                   geerpc::threaded) {
  test::arith_server<TestType> first;
  first.server.stop();
  test::Arith arith;
  geerpc::basic_server<TestType> second;
  second.template add<test::ArithApi>(arith);
  REQUIRE(second.listen(first.address) == first.address);
  CHECK(geerpc::dial<TestType>(first.address).template call<int>("Arith.Sum", Args{2, 3}) == 5);
}

TEMPLATE_TEST_CASE("while stop() waits for a handler, new dials are refused", "[listen][stop]", geerpc::blocking,
                   geerpc::threaded) {
  test::arith_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  std::jthread caller([&] { (void)client.template try_call<int>("Arith.Late", Args{1, 0}); });
  REQUIRE(s.arith.started.wait_for_at_least(1));
  std::jthread stopper([&] { s.server.stop(); });  // returns only once Late does
  // Until stop() begins, a dial may still succeed, or be accepted and then closed; from then on
  // every one is refused by the kernel.
  const auto refused = [&] {
    auto r = geerpc::try_dial<TestType>(s.address, {.connect_timeout = 100ms});
    return !r && r.code() == geerpc::errc::connect_failed &&
           r.message().find("Connection refused") != std::string::npos;
  };
  CHECK(test::eventually(refused, 5s));
  CHECK(refused());
  s.arith.release.set();
}
