// Starting and stopping: clients closed while in use, servers stopped twice at once or from inside
// a handler, handshake timeouts racing the peer. These are regression tests for races found in
// review; they prove most under ASan and TSan, which CI runs them with.
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace lifecycle_test {

using namespace std::chrono_literals;
using test::Args;

TEMPLATE_TEST_CASE("close() while another thread is in a call fails that call and frees nothing under it",
                   "[lifecycle][shutdown]", GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s;
  for (int round = 0; round < 20; ++round) {
    auto client = geerpc::dial<TestType>(s.address);
    std::atomic<int> closed{0};
    std::jthread caller([&] {
      if (client.template try_call<int>("Arith.WaitForStop", Args{}).code() == geerpc::errc::connection_closed)
        closed.fetch_add(1);
    });
    REQUIRE(s.arith.started.wait_for_at_least(round + 1));
    client.close();
    caller.join();
    CHECK(closed.load() == 1);
    CHECK(client.template try_call<int>("Arith.Sum", Args{}).code() == geerpc::errc::connection_closed);
  }
}

TEMPLATE_TEST_CASE("handshake timeouts racing the transport's own close leave the server serving",
                   "[lifecycle][handshake]", GEERPC_TRANSPORTS) {
  geerpc::server_options opts;
  opts.timeouts.handshake = 1ms;
  test::arith_server<TestType> s(opts);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::unique_ptr<test::raw_peer>> silent;
    for (int i = 0; i < 10; ++i) silent.push_back(std::make_unique<test::raw_peer>(s.address));
    for (auto& peer : silent) CHECK(peer->closed_by_peer());
  }
  // A peer that does say hello in time is served. 1 ms is short, so send the hello straight away.
  test::raw_peer prompt(s.address);
  prompt.send_hello();
  auto reply = prompt.read_hello_reply();
  if (reply) CHECK(reply->accepted);  // on a loaded machine even this one may be too slow for 1 ms
}

TEMPLATE_TEST_CASE("two threads stopping a server at once both return only when it has stopped", "[lifecycle]",
                   GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  std::jthread caller([&] { (void)client.template try_call<int>("Arith.WaitForStop", Args{}); });
  REQUIRE(s.arith.started.wait_for_at_least(1));

  std::atomic<int> finished_when_returned{0};
  {
    std::vector<std::jthread> stoppers;
    for (int i = 0; i < 2; ++i)
      stoppers.emplace_back([&] {
        s.server.stop();
        finished_when_returned.fetch_add(s.arith.finished.value());
      });
  }
  CHECK(finished_when_returned.load() == 2);  // each stop() returned after the handler had returned
}

namespace {
struct Admin {
  geerpc::server* server = nullptr;
  test::event stop_returned;
  int shutdown(const Args&) {
    server->stop();  // starts the stop; it cannot join the thread it runs on
    stop_returned.set();
    return 1;
  }
};
using AdminApi = geerpc::service<"Admin", geerpc::method<"Shutdown", &Admin::shutdown>>;
}  // namespace

TEST_CASE("a handler may stop its own server", "[lifecycle]") {
  Admin admin;
  auto server = std::make_unique<geerpc::server>();
  admin.server = server.get();
  server->add<AdminApi>(admin);
  auto client = geerpc::dial(server->listen("127.0.0.1:0"));
  auto r = client.try_call<int>("Admin.Shutdown", Args{});
  CHECK(admin.stop_returned.wait());
  // The reply may or may not have left before the connection closed; either way the call ended.
  CHECK((r.has_value() || r.code() == geerpc::errc::connection_closed));
  server->stop();  // from outside: joins every thread, including the one that asked
  server.reset();
  CHECK(client.try_call<int>("Admin.Shutdown", Args{}).code() == geerpc::errc::connection_closed);
}

TEST_CASE("a handler may stop its own blocking server", "[lifecycle]") {
  struct BlockingAdmin {
    geerpc::basic_server<geerpc::blocking>* server = nullptr;
    int shutdown(const Args&) {
      server->stop();
      return 1;
    }
  } admin;
  using Api = geerpc::service<"Admin", geerpc::method<"Shutdown", &BlockingAdmin::shutdown>>;
  geerpc::basic_server<geerpc::blocking> server;
  admin.server = &server;
  server.add<Api>(admin);
  auto client = geerpc::dial<geerpc::blocking>(server.listen("127.0.0.1:0"));
  auto r = client.try_call<int>("Admin.Shutdown", Args{});
  CHECK((r.has_value() || r.code() == geerpc::errc::connection_closed));
  server.stop();
}

}  // namespace lifecycle_test
