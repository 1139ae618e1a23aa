// Faults: a server stopped under load, restarted under clients that retry, handlers that misbehave.
#include <atomic>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace fault_test {

using namespace std::chrono_literals;
using test::Args;

TEST_CASE("a server stopped with 1,000 calls in flight ends every call promptly and joins its threads",
          "[fault][shutdown]") {
  const int threads_before = test::baseline_thread_count();
  auto s = std::make_unique<test::arith_server<geerpc::threaded>>();
  std::vector<geerpc::client> clients;
  std::vector<geerpc::call_future<int>> calls;
  for (int c = 0; c < 10; ++c) {
    clients.push_back(geerpc::dial(s->address));
    for (int i = 0; i < 100; ++i) calls.push_back(clients.back().async_call<int>("Arith.WaitForStop", Args{}));
  }
  REQUIRE(s->arith.started.wait_for_at_least(8));  // every handler thread is busy, the rest queue
  REQUIRE(test::eventually([&] { return s->server.inflight() == 1000; }));

  const auto start = std::chrono::steady_clock::now();
  s->server.stop();
  int closed = 0;
  for (auto& call : calls)
    if (call.try_get().code() == geerpc::errc::connection_closed) ++closed;
  CHECK(closed == 1000);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  CHECK(s->server.inflight() == 0);  // queued requests were released, not leaked
  clients.clear();
  s.reset();
  CHECK(test::eventually([&] { return test::thread_count() == threads_before; }));
}

TEMPLATE_TEST_CASE("clients that retry reach a server restarted on the same address", "[fault][restart]",
                   geerpc::blocking, geerpc::threaded) {
  auto first = std::make_unique<test::arith_server<TestType>>();
  const std::string address = first->address;
  auto client = geerpc::dial<TestType>(address);
  REQUIRE(client.template call<int>("Arith.Sum", Args{1, 1}) == 2);

  first.reset();  // the server goes away
  CHECK(client.template try_call<int>("Arith.Sum", Args{1, 1}).code() == geerpc::errc::connection_closed);

  test::Arith arith;
  geerpc::basic_server<TestType> second;
  second.template add<test::ArithApi>(arith);
  REQUIRE(second.listen(address) == address);

  // A retrying client: dial again until it works (bounded).
  std::optional<int> answer;
  for (int attempt = 0; attempt < 50 && !answer; ++attempt) {
    auto fresh = geerpc::try_dial<TestType>(address, {.timeouts = {.connect = 1s}});
    if (!fresh) continue;
    if (auto r = fresh->template try_call<int>(geerpc::with_timeout(1s), "Arith.Sum", Args{2, 3})) answer = *r;
  }
  CHECK(answer == 5);
}

TEMPLATE_TEST_CASE("a handler that ignores its stop_token holds its thread, and only until it returns",
                   "[fault][timeout][resources]", geerpc::blocking, geerpc::threaded) {
  test::arith_server<TestType> s;
  auto stubborn = geerpc::dial<TestType>(s.address, {.timeouts = {.handle = 50ms}});
  auto other = geerpc::dial<TestType>(s.address);
  REQUIRE(other.template call<int>("Arith.Sum", Args{0, 0}) == 0);
  const int baseline = test::thread_count();

  // Late never looks at a stop_token: the server answers at the timeout and keeps only its thread.
  auto r = stubborn.template try_call<int>("Arith.Late", Args{9, 0});
  CHECK(r.code() == geerpc::errc::handle_timeout);
  CHECK(s.server.inflight() == 1);  // its slot, until it returns
  CHECK(other.template call<int>("Arith.Sum", Args{1, 2}) == 3);
  CHECK(test::thread_count() == baseline);

  s.arith.release.set();
  REQUIRE(s.arith.finished.wait_for_at_least(1));
  REQUIRE(test::eventually([&] { return s.server.inflight() == 0; }));
  // Its late 9000 was dropped: the next answers on that connection are the right ones.
  for (int i = 0; i < 5; ++i) CHECK(stubborn.template call<int>("Arith.Sum", Args{i, i}) == 2 * i);
  CHECK(test::thread_count() == baseline);
}

TEMPLATE_TEST_CASE("handlers throwing anything fail only their own calls", "[fault]", geerpc::blocking,
                   geerpc::threaded) {
  test::arith_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  for (int i = 0; i < 50; ++i) {
    CHECK(client.template try_call<int>("Arith.Fail", Args{}).code() == geerpc::errc::remote_error);
    CHECK(client.template try_call<int>("Arith.ThrowInt", Args{}).code() == geerpc::errc::remote_error);
    CHECK(client.template call<int>("Arith.Sum", Args{i, 1}) == i + 1);
  }
}

TEST_CASE("a client destroyed with calls in flight fails them, and the server lets their handlers go",
          "[fault][shutdown]") {
  test::arith_server<geerpc::threaded> s;
  std::vector<geerpc::call_future<int>> pending;
  {
    auto client = geerpc::dial(s.address);
    for (int i = 0; i < 20; ++i) pending.push_back(client.async_call<int>("Arith.WaitForStop", Args{i, 0}));
    REQUIRE(s.arith.started.wait_for_at_least(8));
  }  // the client goes while its calls wait
  for (auto& call : pending) CHECK(call.try_get().code() == geerpc::errc::connection_closed);
  // Its connection closed, so the server stopped the handlers that were running and dropped the rest.
  CHECK(s.arith.stops_seen.wait_for_at_least(8));
  CHECK(test::eventually([&] { return s.server.inflight() == 0 && s.server.connection_count() == 0; }));
  auto other = geerpc::dial(s.address);
  CHECK(other.call<int>("Arith.Sum", Args{1, 2}) == 3);
}

}  // namespace fault_test
