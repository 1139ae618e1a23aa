// Callbacks and coroutines on the client (issue 16, point 5): call_future::then() hands each call's
// result to a callback as calls complete, and co_await suspends a coroutine of any type until its
// call completes; both keep cancellation through the context's stop_token.
#include <algorithm>
#include <atomic>
#include <coroutine>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "detached_coroutine.hpp"
#include "support.hpp"

namespace callback_test {

using namespace std::chrono_literals;

using test::detached_coroutine;

TEMPLATE_TEST_CASE("then() hands each result to its callback once, as calls complete, not in the order made",
                   "[callback]", GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial<TestType>(s.address);
  std::mutex mutex;
  std::vector<int> order;  // results, in the order their callbacks ran
  test::counter done;
  auto record = [&](geerpc::result<int> r) {
    {
      std::lock_guard lock(mutex);
      order.push_back(r.has_value() ? r.value() : -1);
    }
    done.add();
  };
  client.template async_call<int>("Arith.Late", test::Args{7, 0}).then(record);  // waits for release
  REQUIRE(s.arith.started.wait_for_at_least(1));
  constexpr int fast = 100;
  for (int i = 0; i < fast; ++i) client.template async_call<int>("Arith.Sum", test::Args{i, 1}).then(record);
  REQUIRE(done.wait_for_at_least(fast));
  {
    std::lock_guard lock(mutex);
    CHECK(order.size() == fast);  // the held call's callback has not run
  }
  s.arith.release.set();
  REQUIRE(done.wait_for_at_least(fast + 1));
  std::lock_guard lock(mutex);
  REQUIRE(order.size() == fast + 1);
  CHECK(order.back() == 7000);
  std::vector<int> sums(order.begin(), order.end() - 1);
  std::sort(sums.begin(), sums.end());
  for (int i = 0; i < fast; ++i) CHECK(sums[static_cast<std::size_t>(i)] == i + 1);
}

TEMPLATE_TEST_CASE("then() on a complete call runs its callback before returning", "[callback]",
                   GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial<TestType>(s.address);
  auto ready = client.template async_call<int>("Arith.Sum", test::Args{2, 3});
  ready.wait();
  std::optional<geerpc::result<int>> got;
  std::move(ready).then([&](geerpc::result<int> r) { got.emplace(std::move(r)); });
  REQUIRE(got);
  CHECK(got->value() == 5);
  CHECK_FALSE(ready.valid());  // the call went to the callback

  got.reset();  // refused before it was sent: complete at once
  client.template async_call<int>(geerpc::with_metadata("bad key", "v"), "Arith.Sum", test::Args{1, 1})
      .then([&](geerpc::result<int> r) { got.emplace(std::move(r)); });
  REQUIRE(got);
  CHECK(got->code() == geerpc::errc::invalid_argument);

  got.reset();  // an empty future has no call to wait for
  test::future<int, TestType>{}.then([&](geerpc::result<int> r) { got.emplace(std::move(r)); });
  REQUIRE(got);
  CHECK(got->code() == geerpc::errc::invalid_argument);
}

TEMPLATE_TEST_CASE("a callback may start the next call: a chain of calls, each made by the last one's callback",
                   "[callback]", GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial<TestType>(s.address);
  test::event finished;
  int total = 0;
  std::function<void(geerpc::result<int>)> step = [&](geerpc::result<int> r) {
    total = r.value();
    if (total >= 20) return finished.set();
    client.template async_call<int>("Arith.Sum", test::Args{total, 1}).then(step);
  };
  client.template async_call<int>("Arith.Sum", test::Args{0, 1}).then(step);
  REQUIRE(finished.wait());
  CHECK(total == 20);
}

TEMPLATE_TEST_CASE(
    "a callback's call ends by its deadline, its stop_token or its connection's close, and the server "
    "hears of the stop",
    "[callback]", GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial<TestType>(s.address);
  std::mutex mutex;
  std::vector<std::error_code> codes;
  test::counter done;
  auto record = [&](geerpc::result<int> r) {
    {
      std::lock_guard lock(mutex);
      codes.push_back(r.code());
    }
    done.add();
  };
  client.template async_call<int>(geerpc::with_timeout(50ms), "Arith.WaitForStop", test::Args{1, 1}).then(record);
  REQUIRE(done.wait_for_at_least(1));
  std::stop_source stop;
  client.template async_call<int>(geerpc::with_stop_token(stop.get_token()), "Arith.WaitForStop", test::Args{1, 1})
      .then(record);
  REQUIRE(s.arith.started.wait_for_at_least(2));
  stop.request_stop();
  REQUIRE(done.wait_for_at_least(2));
  REQUIRE(s.arith.stops_seen.wait_for_at_least(2));  // the deadline and the cancel frame reached the handlers
  client.template async_call<int>("Arith.Late", test::Args{1, 1}).then(record);
  REQUIRE(s.arith.started.wait_for_at_least(3));
  client.close();
  REQUIRE(done.wait_for_at_least(3));
  s.arith.release.set();
  std::lock_guard lock(mutex);
  CHECK(codes == std::vector<std::error_code>{geerpc::errc::deadline_exceeded, geerpc::errc::canceled,
                                              geerpc::errc::connection_closed});
}

namespace {

// What the coroutines below saw. Written on whichever thread resumed them; read by the test once
// `finished` is set.
struct awaited {
  test::event finished;
  std::optional<std::thread::id> resumed_on;
  int sum = 0, late = 0, value = 0;
  bool lvalue_emptied = false;
  std::string failure;
  geerpc::result<int> unknown = 0;
  std::error_code code;
};

// Coroutines take what they use as parameters (copied into their frame): a lambda's captures would
// be gone once the lambda's temporary is, while the coroutine is still suspended.
template <class Client>
detached_coroutine several_awaits(Client& client, awaited& out) {
  out.sum = co_await client.template async_call<int>("Arith.Sum", test::Args{1, 2});
  auto f = client.template async_call<int>("Arith.Sum", test::Args{out.sum, 10});
  out.sum = co_await f;  // an lvalue: awaited in place
  out.lvalue_emptied = !f.valid();
  try {
    co_await client.template async_call<int>("Arith.Fail", test::Args{1, 1});
  } catch (const geerpc::rpc_error& e) {
    out.failure = e.what();
  }
  out.unknown = co_await client.template async_call<int>("Arith.Nope", test::Args{}).as_result();
  out.late = co_await client.template async_call<int>("Arith.Late", test::Args{4, 0});
  out.resumed_on = std::this_thread::get_id();
  out.finished.set();
}

template <class Future>
detached_coroutine await_ready_future(Future future, awaited& out) {
  out.value = co_await std::move(future);
  out.resumed_on = std::this_thread::get_id();
  out.finished.set();
}

template <class Client>
detached_coroutine await_cancellable(Client& client, std::stop_token stop, awaited& out) {
  auto r =
      co_await client
          .template async_call<int>(geerpc::with_stop_token(std::move(stop)), "Arith.WaitForStop", test::Args{1, 1})
          .as_result();
  out.code = r.code();
  out.finished.set();
}

}  // namespace

TEMPLATE_TEST_CASE("co_await suspends a coroutine until its call completes, and it resumes where the call completed",
                   "[callback][coroutine]", GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial<TestType>(s.address);
  awaited out;
  several_awaits(client, out);
  REQUIRE(s.arith.started.wait_for_at_least(1));
  CHECK_FALSE(out.finished.is_set());  // suspended on the held call, and this thread is free
  s.arith.release.set();
  REQUIRE(out.finished.wait());
  CHECK(out.sum == 13);
  CHECK(out.lvalue_emptied);
  CHECK(out.failure == "boom: handler failed");
  CHECK(out.unknown.code() == geerpc::errc::unknown_method);
  CHECK(out.late == 4000);
  REQUIRE(out.resumed_on);
  CHECK(*out.resumed_on != std::this_thread::get_id());  // the thread that completed the call resumed it
}

TEMPLATE_TEST_CASE("co_await of a complete call does not suspend", "[callback][coroutine]", GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial<TestType>(s.address);
  auto ready = client.template async_call<int>("Arith.Sum", test::Args{2, 2});
  ready.wait();
  awaited out;
  await_ready_future(std::move(ready), out);
  CHECK(out.finished.is_set());  // it ran to the end inside the call above, on this thread
  REQUIRE(out.resumed_on);
  CHECK(*out.resumed_on == std::this_thread::get_id());
  CHECK(out.value == 4);
}

TEMPLATE_TEST_CASE("a coroutine's call is cancelled through its context's stop_token, which tells the server",
                   "[callback][coroutine]", GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial<TestType>(s.address);
  std::stop_source stop;
  awaited out;
  await_cancellable(client, stop.get_token(), out);
  REQUIRE(s.arith.started.wait_for_at_least(1));
  stop.request_stop();
  REQUIRE(out.finished.wait());
  CHECK(out.code == geerpc::errc::canceled);
  CHECK(s.arith.stops_seen.wait_for_at_least(1));
}

namespace {

// Its frame is destroyed by its owner, not at its end: for destroying one while it is suspended.
struct owned {
  struct promise_type {
    owned get_return_object() noexcept { return {std::coroutine_handle<promise_type>::from_promise(*this)}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }
  };
  std::coroutine_handle<promise_type> handle;
};

template <class Client>
owned await_and_count(Client& client, std::atomic<int>& resumed) {
  (void)co_await client.template async_call<int>("Arith.WaitForStop", test::Args{1, 1}).as_result();
  ++resumed;
}

// Holds several pending calls and awaits the first; when that fails, it ends, and the futures of
// the others go with its frame.
template <class Client>
detached_coroutine hold_several(Client& client, awaited& out) {
  std::vector<test::future<int, typename Client::transport_type>> calls;
  for (int i = 0; i < 8; ++i) calls.push_back(client.template async_call<int>("Arith.Late", test::Args{i, 0}));
  out.unknown = co_await std::move(calls[0]).as_result();
  out.finished.set();
}

}  // namespace

TEMPLATE_TEST_CASE("a coroutine destroyed while suspended on a call cancels it and is not resumed",
                   "[callback][coroutine]", GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial<TestType>(s.address);
  std::atomic<int> resumed{0};
  owned coroutine = await_and_count(client, resumed);
  REQUIRE(s.arith.started.wait_for_at_least(1));
  coroutine.handle.destroy();  // the awaited future goes with the frame: its call is cancelled
  CHECK(s.arith.stops_seen.wait_for_at_least(1));
  CHECK(resumed == 0);
}

TEMPLATE_TEST_CASE("closing a client completes every pending call, even when a completion drops the others",
                   "[callback][coroutine]", GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial<TestType>(s.address);
  awaited out;
  hold_several(client, out);
  REQUIRE(s.arith.started.wait_for_at_least(8));
  client.close();  // the first completion ends the coroutine, whose frame drops seven pending calls
  REQUIRE(out.finished.wait());
  CHECK(out.unknown.code() == geerpc::errc::connection_closed);
  s.arith.release.set();
}

}  // namespace callback_test
