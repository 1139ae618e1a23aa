// geerpc's jsonrpc@ client against Go's own net/rpc server served with jsonrpc.ServeConn
// (docs/protocol.md 9.6): the hidden case tests/go/jsonrpc_server/run.sh runs, with the server's
// address in GEERPC_GO_JSONRPC_ADDRESS and the transport (blocking or threaded) in
// GEERPC_JSONRPC_TRANSPORT.
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <geerpc/json.hpp>

#include "catch.hpp"
#include "support.hpp"

namespace jsonrpc_go_server_test {

using namespace std::chrono_literals;

namespace {

// Go's Args { A, B int }: Go matches geerpc's field names a and b ignoring case.
struct Pair {
  int a;
  int b;
};

// Go's Quotient { Quo, Rem int }, which comes back as {"Quo":..,"Rem":..}.
struct Quotient {
  int quo;
  int rem;
};

// 100 calls at once: in flight together on the threaded transport, from 4 threads on the blocking
// one (it keeps one call on the wire at a time).
template <class Client>
void hundred_calls(Client& client) {
  constexpr int calls = 100;
  if constexpr (Client::transport_type::supports_async) {
    std::vector<decltype(client.template async_call<int>(geerpc::with_timeout(10s), "Arith.Sum", Pair{}))> futures;
    for (int i = 0; i < calls; ++i)
      futures.push_back(client.template async_call<int>(geerpc::with_timeout(10s), "Arith.Sum", Pair{i, 1000}));
    for (int i = 0; i < calls; ++i) CHECK(futures[static_cast<std::size_t>(i)].try_get().value() == i + 1000);
  } else {
    constexpr int threads = 4;
    std::vector<int> wrong(threads, 0);
    std::vector<std::thread> callers;
    for (int t = 0; t < threads; ++t)
      callers.emplace_back([&, t] {
        for (int i = t; i < calls; i += threads) {
          const auto r = client.template try_call<int>(geerpc::with_timeout(10s), "Arith.Sum", Pair{i, 1000});
          if (!r || *r != i + 1000) ++wrong[static_cast<std::size_t>(t)];
        }
      });
    for (auto& caller : callers) caller.join();
    for (const int w : wrong) CHECK(w == 0);
  }
}

template <class Transport>
void call_go(const std::string& address) {
  auto client = geerpc::dial<Transport, geerpc::json_codec>("jsonrpc@" + address, {.timeouts = {.connect = 5s}});
  CHECK(client.template call<int>(geerpc::with_timeout(5s), "Arith.Sum", Pair{1, 2}) == 3);

  hundred_calls(client);

  const auto divided = client.template call<Quotient>(geerpc::with_timeout(5s), "Arith.Divide", Pair{7, 2});
  CHECK(divided.quo == 3);
  CHECK(divided.rem == 1);

  const auto by_zero = client.template try_call<Quotient>(geerpc::with_timeout(5s), "Arith.Divide", Pair{1, 0});
  CHECK(by_zero.code() == geerpc::errc::remote_error);
  CHECK(by_zero.message() == "divide by zero");

  const auto no_method = client.template try_call<int>(geerpc::with_timeout(5s), "Arith.Nope", Pair{1, 2});
  CHECK(no_method.code() == geerpc::errc::unknown_method);
  CHECK(no_method.message() == "rpc: can't find method Arith.Nope");
  const auto no_service = client.template try_call<int>(geerpc::with_timeout(5s), "Nope.Sum", Pair{1, 2});
  CHECK(no_service.code() == geerpc::errc::unknown_service);
  CHECK(no_service.message() == "rpc: can't find service Nope.Sum");

  // The deadline is the client's own: Go's server never hears of it, and answers Slow once
  // Release is called; that late answer is dropped, and the connection serves on.
  const auto slow = client.template try_call<int>(geerpc::with_timeout(200ms), "Arith.Slow", Pair{5, 0});
  CHECK(slow.code() == geerpc::errc::deadline_exceeded);
  CHECK(client.template call<int>(geerpc::with_timeout(5s), "Arith.Release", Pair{}) == 0);
  CHECK(client.template call<int>(geerpc::with_timeout(5s), "Arith.Sum", Pair{40, 2}) == 42);
  CHECK(client.is_open());
}

}  // namespace

TEST_CASE("jsonrpc client: Go's net/rpc server served with jsonrpc.ServeConn", "[.go_jsonrpc_server]") {
  const char* address = std::getenv("GEERPC_GO_JSONRPC_ADDRESS");
  const char* transport = std::getenv("GEERPC_JSONRPC_TRANSPORT");
  REQUIRE(address != nullptr);
  REQUIRE(transport != nullptr);
  if (std::string(transport) == "blocking")
    call_go<geerpc::blocking>(address);
  else
    call_go<geerpc::threaded>(address);
}

}  // namespace jsonrpc_go_server_test
