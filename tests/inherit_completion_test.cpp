// Inherited context and the threaded client's completions (issue 30, point 1): the client completes
// an async call on whichever thread reads its reply, a handler's too, where a then() callback must
// not inherit that handler's deadline, stop token and metadata: it belongs to another call. The
// same holds where that thread sees the connection break and fails every pending call at once.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "catch.hpp"
#include "support.hpp"

namespace inherit_completion_test {

using namespace std::chrono_literals;

namespace {

// The far server: Until answers once the test's callback ran, so that the front handler, waiting
// for its reply as the client's lone synchronous caller, is the thread that reads the replies.
struct Gate {
  test::counter until_started, callback_ran;
  int now() { return 1; }
  int until() {
    until_started.add();
    return callback_ran.wait_for_at_least(until_started.value()) ? 2 : -2;
  }
};
using GateApi = geerpc::service<"Gate", geerpc::method<"Now", &Gate::now>, geerpc::method<"Until", &Gate::until>>;

struct Front {
  std::optional<geerpc::client> next;
  std::atomic<std::thread::id> handler_thread{};
  int run(int, const geerpc::call_context&) {
    handler_thread = std::this_thread::get_id();
    // Detached: a call with a stop token to watch never reads its own reply.
    auto r = next->try_call<int>(geerpc::detached(), "Gate.Until");
    return r ? *r : -3;
  }
};
using FrontApi = geerpc::service<"Front", geerpc::method<"Run", &Front::run>>;

}  // namespace

TEST_CASE("a then() callback run on a handler's thread inherits nothing from that handler", "[inherit]") {
  Gate gate;
  geerpc::server far(test::with_test_io_threads({}));
  far.add<GateApi>(gate);
  const std::string far_address = far.listen("127.0.0.1:0");
  Front front;
  front.next.emplace(geerpc::dial(far_address));
  geerpc::server near(test::with_test_io_threads({}));
  near.add<FrontApi>(front);
  auto client = geerpc::dial(near.listen("127.0.0.1:0"));
  // The client's tuning decides whether the handler's call reads its own reply: rounds until the
  // callback ran on the handler's thread, the case that makes the check worth anything.
  int on_handler_thread = 0;
  for (int round = 1; round <= 20 && on_handler_thread == 0; ++round) {
    auto run = client.async_call<int>(geerpc::with_timeout(10s), "Front.Run", 0);
    // Once the handler waits for Until, an async call made here on its client is read there.
    REQUIRE(gate.until_started.wait_for_at_least(round));
    std::atomic<bool> inherited{false}, same_thread{false};
    front.next->async_call<int>("Gate.Now").then([&](geerpc::result<int>) {
      inherited = geerpc::detail::current_call.call != nullptr;
      same_thread = std::this_thread::get_id() == front.handler_thread.load();
      gate.callback_ran.add();
    });
    CHECK(run.get() == 2);
    REQUIRE(gate.callback_ran.wait_for_at_least(round));
    CHECK_FALSE(inherited);
    if (same_thread) ++on_handler_thread;
  }
  CHECK(on_handler_thread == 1);
}

namespace {

// The far server of a connection that breaks: Hold answers nothing until its server stops.
struct Holder {
  test::counter held;
  int hold(std::stop_token stop) {
    held.add();
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    (void)cv.wait_for(lock, stop, std::chrono::seconds(10), [] { return false; });
    return 1;
  }
};
using HolderApi = geerpc::service<"Holder", geerpc::method<"Hold", &Holder::hold>>;

struct HoldingFront {
  std::optional<geerpc::client> next;
  std::atomic<std::thread::id> handler_thread{};
  int run(int, const geerpc::call_context&) {
    handler_thread = std::this_thread::get_id();
    auto r = next->try_call<int>(geerpc::detached(), "Holder.Hold");
    return r ? *r : r.code().value();
  }
};
using HoldingFrontApi = geerpc::service<"Front", geerpc::method<"Run", &HoldingFront::run>>;

}  // namespace

TEST_CASE("a then() callback of a call failed by a broken connection on a handler's thread inherits nothing",
          "[inherit]") {
  HoldingFront front;
  geerpc::server near(test::with_test_io_threads({}));
  near.add<HoldingFrontApi>(front);
  auto client = geerpc::dial(near.listen("127.0.0.1:0"));
  const int closed = static_cast<int>(geerpc::errc::connection_closed);
  // Rounds, each with a far server that stops, until the handler's thread was the one that saw
  // its connection break and failed the pending calls (the client's tuning decides).
  int on_handler_thread = 0;
  for (int round = 1; round <= 20 && on_handler_thread == 0; ++round) {
    Holder holder;
    geerpc::server far(test::with_test_io_threads({}));
    far.add<HolderApi>(holder);
    front.next.emplace(geerpc::dial(far.listen("127.0.0.1:0")));
    auto run = client.async_call<int>(geerpc::with_timeout(10s), "Front.Run", 0);
    REQUIRE(holder.held.wait_for_at_least(1));
    std::atomic<bool> inherited{false}, same_thread{false};
    std::atomic<int> code{0};
    test::event callback_ran;
    front.next->async_call<int>("Holder.Hold").then([&](geerpc::result<int> r) {
      inherited = geerpc::detail::current_call.call != nullptr;
      same_thread = std::this_thread::get_id() == front.handler_thread.load();
      code = r ? 0 : r.code().value();
      callback_ran.set();
    });
    REQUIRE(holder.held.wait_for_at_least(2));
    far.stop();  // closes the connection: both calls fail, neither answered
    CHECK(run.get() == closed);
    REQUIRE(callback_ran.wait());
    CHECK(code == closed);
    CHECK_FALSE(inherited);
    if (same_thread) ++on_handler_thread;
  }
  CHECK(on_handler_thread == 1);
}

}  // namespace inherit_completion_test
