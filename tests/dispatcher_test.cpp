// The server's name table: every "Service.Method" registered is found, whatever the order of
// registration, and a name that is not there gets GeeRPC's reason (no such service, no such method,
// no dot), also for names that are prefixes of registered ones.
#include <geerpc/codec/binary.hpp>
#include <geerpc/server/dispatcher.hpp>
#include <string>

#include "catch.hpp"

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
  CHECK(message == "rpc server: can't find method Z");
  CHECK_FALSE(found("Abc.XY"));
  CHECK(code == geerpc::errc::unknown_method);
  CHECK_FALSE(found("A.X"));  // a prefix of registered services is not one
  CHECK(code == geerpc::errc::unknown_service);
  CHECK(message == "rpc server: can't find service A");
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
