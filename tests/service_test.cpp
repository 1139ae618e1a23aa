// Compile-time registration: member functions, free functions and lambdas; the types a typed stub
// carries; what registration refuses at run time.
#include <type_traits>

#include "catch.hpp"
#include "support.hpp"

namespace service_test {

using namespace std::chrono_literals;
using test::Args;

namespace {

int multiply(const Args& a) { return a.num1 * a.num2; }
std::string shout(std::string text) {  // by value is accepted too
  for (char& c : text) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  return text;
}

struct Calculator {
  int offset = 100;
  int add_offset(const Args& a) const { return a.num1 + offset; }
  int noexcept_sum(const Args& a) noexcept { return a.num1 + a.num2; }
};

using FreeApi = geerpc::service<"Free",                                 //
                                geerpc::method<"Multiply", &multiply>,  //
                                geerpc::method<"Shout", &shout>,        //
                                geerpc::method<"Negate", [](const Args& a) { return -a.num1; }>,
                                geerpc::method<"Stoppable", [](const Args& a, std::stop_token) { return a.num2; }>>;

using MixedApi = geerpc::service<"Calc",                                                //
                                 geerpc::method<"AddOffset", &Calculator::add_offset>,  //
                                 geerpc::method<"Sum", &Calculator::noexcept_sum>,      //
                                 geerpc::method<"Multiply", &multiply>>;

// What the typed stubs carry, checked by the compiler.
static_assert(std::is_same_v<FreeApi::fn<"Shout">::argument_type, std::string>);
static_assert(std::is_same_v<FreeApi::fn<"Shout">::result_type, std::string>);
static_assert(FreeApi::fn<"Negate">::name.view() == "Free.Negate");
static_assert(std::is_same_v<MixedApi::impl_type, Calculator>);
static_assert(std::is_void_v<FreeApi::impl_type>);
static_assert(FreeApi::fn<"Stoppable">::name.view() == "Free.Stoppable");
static_assert(geerpc::is_method_ref_v<MixedApi::fn<"Sum">>);
static_assert(!geerpc::is_method_ref_v<int>);

}  // namespace

TEMPLATE_TEST_CASE("free functions, lambdas and const or noexcept members all serve calls", "[service]",
                   geerpc::blocking, geerpc::threaded) {
  Calculator calculator;
  geerpc::basic_server<TestType> server;
  server.template add<FreeApi>();
  server.template add<MixedApi>(calculator);
  auto client = geerpc::dial<TestType>(server.listen("127.0.0.1:0"));

  CHECK(client.template call<FreeApi::fn<"Multiply">>({6, 7}) == 42);
  CHECK(client.template call<FreeApi::fn<"Shout">>("hello") == "HELLO");
  CHECK(client.template call<FreeApi::fn<"Negate">>({5, 0}) == -5);
  CHECK(client.template call<FreeApi::fn<"Stoppable">>({0, 9}) == 9);
  CHECK(client.template call<MixedApi::fn<"AddOffset">>({1, 0}) == 101);
  CHECK(client.template call<MixedApi::fn<"Sum">>({1, 2}) == 3);
  CHECK(client.template call<MixedApi::fn<"Multiply">>({3, 3}) == 9);
}

TEST_CASE("a service name can be registered once, and only before listen()", "[service]") {
  geerpc::server server;
  server.add<FreeApi>();
  try {
    server.add<FreeApi>();
    FAIL("a second registration of the same service must throw");
  } catch (const geerpc::rpc_error& e) {
    CHECK(e.code() == geerpc::errc::invalid_argument);
    CHECK(std::string(e.what()) == "rpc: service already defined: Free");
  }
  server.listen("127.0.0.1:0");
  Calculator calculator;
  CHECK_THROWS_AS(server.add<MixedApi>(calculator), geerpc::rpc_error);
  CHECK_THROWS_AS(server.listen("127.0.0.1:0"), geerpc::rpc_error);
}

TEST_CASE("a bad listen address is an error, not a crash", "[service]") {
  geerpc::server server;
  CHECK_THROWS_AS(server.listen("not an address"), geerpc::rpc_error);
  geerpc::server other;
  CHECK_THROWS_AS(other.listen("127.0.0.1:99999"), geerpc::rpc_error);
}

TEST_CASE("error codes have a category, messages and an rpc_error that keeps the message", "[errors]") {
  std::error_code code = geerpc::errc::handle_timeout;
  CHECK(code.category() == geerpc::category());
  CHECK(std::string(code.category().name()) == "geerpc");
  CHECK(code.message() == "request handle timeout");
  const geerpc::rpc_error e(code, "rpc server: request handle timeout: expect within 1s");
  CHECK(std::string(e.what()) == "rpc server: request handle timeout: expect within 1s");
  CHECK(e.code() == geerpc::errc::handle_timeout);
  const std::system_error& base = e;  // catchable as the standard type
  CHECK(base.code().value() == static_cast<int>(geerpc::errc::handle_timeout));

  geerpc::result<int> failed = geerpc::error{geerpc::errc::busy, "rpc server: too many requests in flight"};
  CHECK_FALSE(failed);
  CHECK_THROWS_AS(failed.value(), geerpc::rpc_error);
  geerpc::result<int> fine = 7;
  CHECK(fine.code() == std::error_code{});
  CHECK(*fine == 7);
}

}  // namespace service_test
