// The server's name table: every "Service.Method" registered is found, whatever the order of
// registration, and a name that is not there gets GeeRPC's reason (no such service, no such method,
// no dot), also for names that are prefixes of registered ones.
#include <geerpc/codec/binary.hpp>
#include <geerpc/server/dispatcher.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "catch.hpp"

namespace dispatcher_test {

namespace {

struct Args {
  int num1;
  int num2;
};

int one(const Args&) { return 1; }
int two(const Args&) { return 2; }
int three(const Args&) { return 3; }

using Zeta = geerpc::service<"Zeta", geerpc::method<"C", &one>, geerpc::method<"A", &two>, geerpc::method<"B", &three>>;
using Ab = geerpc::service<"Ab", geerpc::method<"X", &one>, geerpc::method<"XY", &two>>;
using Abc = geerpc::service<"Abc", geerpc::method<"X", &three>>;
using Alpha = geerpc::service<"Alpha", geerpc::method<"Only", &one>>;

}  // namespace

TEST_CASE("dispatcher finds every registered method and names why others are missing", "[service]") {
  geerpc::detail::dispatcher table;
  CHECK(table.empty());
  // Registered out of order, so that every insertion lands before, between or after others.
  table.add<geerpc::binary_codec, Zeta, void>(nullptr);
  table.add<geerpc::binary_codec, Abc, void>(nullptr);
  table.add<geerpc::binary_codec, Alpha, void>(nullptr);
  table.add<geerpc::binary_codec, Ab, void>(nullptr);
  CHECK_FALSE(table.empty());

  geerpc::errc code{};
  std::string message;
  const auto found = [&](const char* name) { return table.find(name, code, message) != nullptr; };
  for (const char* name : {"Zeta.A", "Zeta.B", "Zeta.C", "Ab.X", "Ab.XY", "Abc.X", "Alpha.Only"}) {
    INFO(name);
    CHECK(found(name));
  }
  const geerpc::detail::handler_entry* a = table.find("Ab.X", code, message);
  const geerpc::detail::handler_entry* b = table.find("Abc.X", code, message);
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(a != b);

  CHECK_FALSE(found("Ab.Z"));
  CHECK(code == geerpc::errc::unknown_method);
  CHECK(message == "rpc server: can't find method Z (Ab has: X, XY)");
  CHECK_FALSE(found("Abc.XY"));
  CHECK(code == geerpc::errc::unknown_method);
  CHECK_FALSE(found("A.X"));  // a prefix of registered services is not one
  CHECK(code == geerpc::errc::unknown_service);
  CHECK(message == "rpc server: can't find service A; did you mean Ab.X?");
  CHECK_FALSE(found("Abcd.X"));
  CHECK(code == geerpc::errc::unknown_service);
  CHECK_FALSE(found("Zz.A"));  // after every name
  CHECK(code == geerpc::errc::unknown_service);
  CHECK_FALSE(found("Ab"));  // a service's own name is not a method
  CHECK(code == geerpc::errc::bad_request);
  CHECK(message == "rpc server: service/method request ill-formed: Ab");

  CHECK_THROWS_AS((table.add<geerpc::binary_codec, Abc, void>(nullptr)), geerpc::rpc_error);
  CHECK(found("Abc.X"));  // a refused registration leaves the table as it was
}

TEST_CASE("an unknown name's error suggests the closest registered one and lists the service's methods", "[service]") {
  geerpc::detail::dispatcher table;
  table.add<geerpc::binary_codec, Zeta, void>(nullptr);
  table.add<geerpc::binary_codec, Alpha, void>(nullptr);
  geerpc::errc code{};
  std::string message;

  CHECK(table.find("Zeta.a", code, message) == nullptr);  // case alone differs
  CHECK(code == geerpc::errc::unknown_method);
  CHECK(message == "rpc server: can't find method a; did you mean Zeta.A? (Zeta has: A, B, C)");
  CHECK(table.find("Alpha.Ony", code, message) == nullptr);  // a letter missing
  CHECK(message == "rpc server: can't find method Ony; did you mean Alpha.Only? (Alpha has: Only)");
  CHECK(table.find("Alpha.Delete", code, message) == nullptr);  // nothing close: no guess
  CHECK(message == "rpc server: can't find method Delete (Alpha has: Only)");

  CHECK(table.find("Alpah.Only", code, message) == nullptr);
  CHECK(code == geerpc::errc::unknown_service);
  CHECK(message == "rpc server: can't find service Alpah; did you mean Alpha.Only?");
  CHECK(table.find("Beta.Only", code, message) == nullptr);
  CHECK(message == "rpc server: can't find service Beta");
}

TEST_CASE("an unknown name's error is printable and bounded, whatever bytes the peer sent", "[service]") {
  geerpc::detail::dispatcher table;
  table.add<geerpc::binary_codec, Alpha, void>(nullptr);
  geerpc::errc code{};
  std::string message;
  const auto printable = [](const std::string& text) {
    for (const char c : text)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) return false;
    return true;
  };

  const std::string hostile = std::string("Alpha.\x1b[2J\n\xff", 12) + std::string(100000, 'A');
  CHECK(table.find(hostile, code, message) == nullptr);
  CHECK(code == geerpc::errc::unknown_method);
  CHECK(printable(message));
  CHECK(message.rfind("rpc server: can't find method \\x1b[2J\\x0a\\xff", 0) == 0);
  CHECK(message.size() < 400);

  CHECK(table.find(std::string(100000, '\0') + ".X", code, message) == nullptr);
  CHECK(code == geerpc::errc::unknown_service);
  CHECK(printable(message));
  CHECK(message.size() < 400);

  CHECK(table.find(std::string(100000, '\x7f'), code, message) == nullptr);
  CHECK(code == geerpc::errc::bad_request);
  CHECK(printable(message));
  CHECK(message.size() < 400);
}

TEST_CASE("a long list of methods is cut, with a count of the rest", "[service]") {
  std::vector<std::string> names;
  for (int i = 0; i < 100; ++i) names.push_back("Method" + std::to_string(100 + i));
  const std::vector<std::string_view> methods(names.begin(), names.end());
  const std::string message = geerpc::detail::unknown_method_message("Big", "Nope", methods);
  CHECK(message.rfind("rpc server: can't find method Nope (Big has: Method100, Method101, ", 0) == 0);
  CHECK(message.size() < 300);
  CHECK(message.find(" more)") != std::string::npos);
  CHECK(message.find("Method199") == std::string::npos);
}

}  // namespace dispatcher_test
