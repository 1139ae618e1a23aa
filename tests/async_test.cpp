// The threaded transport's extras: asynchronous calls, and requests on one connection running
// side by side.
#include <vector>

#include "catch.hpp"
#include "support.hpp"

using namespace std::chrono_literals;
using test::Args;
using test::ArithApi;

TEST_CASE("async calls complete independently and yield their own results", "[async]") {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial(s.address);
  std::vector<geerpc::call_future<int>> futures;
  for (int i = 0; i < 100; ++i) futures.push_back(client.async_call<int>("Arith.Sum", Args{i, i}));
  for (int i = 0; i < 100; ++i) CHECK(futures[static_cast<std::size_t>(i)].get() == 2 * i);

  auto typed = client.async_call<ArithApi::fn<"Sum">>({2, 3});
  CHECK(typed.get() == 5);
  CHECK_FALSE(typed.valid());
}

TEST_CASE("a slow request does not hold up a fast one on the same connection", "[async][concurrency]") {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial(s.address);
  auto slow = client.async_call<int>("Arith.Late", Args{5, 0});
  REQUIRE(s.arith.started.wait_for_at_least(1));
  CHECK(client.call<int>(geerpc::with_timeout(2s), "Arith.Sum", Args{1, 2}) == 3);
  CHECK(s.arith.finished.value() == 0);  // the slow one was still running when the fast one came back
  CHECK_FALSE(slow.ready());
  s.arith.release.set();
  CHECK(slow.get() == 5000);
}

TEST_CASE("waiting on a future can time out without affecting the call", "[async]") {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial(s.address);
  auto slow = client.async_call<int>("Arith.Late", Args{2, 0});
  CHECK_FALSE(slow.wait_for(20ms));
  s.arith.release.set();
  CHECK(slow.wait_for(10s));
  CHECK(slow.ready());
  CHECK(slow.get() == 2000);
}

TEST_CASE("an async call's deadline and stop_token behave like a sync call's", "[async][timeout]") {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial(s.address);

  auto timed = client.async_call<int>(geerpc::with_timeout(100ms), "Arith.WaitForStop", Args{1, 2});
  auto outcome = timed.try_get();
  CHECK(outcome.code() == geerpc::errc::deadline_exceeded);

  std::stop_source source;
  auto stoppable = client.async_call<int>(geerpc::with_stop_token(source.get_token()), "Arith.WaitForStop", Args{});
  REQUIRE(s.arith.started.wait_for_at_least(2));
  source.request_stop();
  CHECK(stoppable.try_get().code() == geerpc::errc::canceled);
  CHECK(s.arith.stops_seen.wait_for_at_least(2));  // the cancel frame reached the handler
}

TEST_CASE("cancel() and dropping a pending future both cancel the call on the server", "[async][cancel]") {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial(s.address);

  auto canceled = client.async_call<int>("Arith.WaitForStop", Args{});
  REQUIRE(s.arith.started.wait_for_at_least(1));
  canceled.cancel();
  CHECK(canceled.try_get().code() == geerpc::errc::canceled);
  CHECK(s.arith.stops_seen.wait_for_at_least(1));

  {
    auto dropped = client.async_call<int>("Arith.WaitForStop", Args{});
    REQUIRE(s.arith.started.wait_for_at_least(2));
  }
  CHECK(s.arith.stops_seen.wait_for_at_least(2));
  CHECK(client.call<int>("Arith.Sum", Args{1, 2}) == 3);
}

TEST_CASE("async calls pending when the client closes fail with connection_closed", "[async][shutdown]") {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial(s.address);
  auto pending = client.async_call<int>("Arith.WaitForStop", Args{});
  REQUIRE(s.arith.started.wait_for_at_least(1));
  client.close();
  CHECK(pending.try_get().code() == geerpc::errc::connection_closed);
  CHECK(client.async_call<int>("Arith.Sum", Args{1, 2}).try_get().code() == geerpc::errc::connection_closed);

  geerpc::client never_connected;
  CHECK(never_connected.async_call<int>("Arith.Sum", Args{}).try_get().code() == geerpc::errc::connection_closed);
  CHECK(never_connected.try_call<int>("Arith.Sum", Args{}).code() == geerpc::errc::connection_closed);
}

TEST_CASE("a future outliving its client still completes", "[async][shutdown]") {
  test::arith_server<geerpc::threaded> s;
  geerpc::call_future<int> survivor;
  {
    auto client = geerpc::dial(s.address);
    survivor = client.async_call<int>("Arith.Sum", Args{20, 22});
    survivor.wait();
  }
  CHECK(survivor.get() == 42);
}
