// Inherited context and coroutines (issue 30, point 1): a coroutine a handler starts resumes, after
// a co_await, on whichever thread completed its call, where nothing is inherited. A call it makes
// with context::from(ctx), made while the handler ran, carries the handler's deadline less the
// reserve, its cancellation and its metadata; one made without it carries none of them, even when
// the coroutine resumes on a handler's thread.
#include <atomic>
#include <chrono>
#include <coroutine>
#include <exception>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>

#include "catch.hpp"
#include "detached_coroutine.hpp"
#include "inherit_support.hpp"
#include "support.hpp"

namespace inherit_coroutine_test {

using namespace std::chrono_literals;
using namespace test::inherit;
using test::inherit::clock;  // not the C library's

namespace {

using test::detached_coroutine;

// What a coroutine saw once it resumed, and the call it left running.
struct resumed {
  std::atomic<std::thread::id> on{};
  std::atomic<bool> inherited{false};  // detail::current_call was set where it resumed
  std::atomic<int> probe_code{-1};     // its Hop.Probe call: 0 or the error's code
  std::optional<test::future<int, geerpc::threaded>> relay;
  test::event finished;
};

// Awaits a held call on `gate`, then calls the next hop with `passed` (context::from of the handler
// that started it): a Probe, answered at once, and a Relay, left running until its stop fires.
// Parameters are copied into the frame: the handler that started it may return first.
detached_coroutine forward_after_resume(geerpc::client& gate, geerpc::client& next, geerpc::context passed,
                                        resumed& out) {
  (void)co_await gate.async_call<int>("Arith.Late", test::Args{1, 0}).as_result();
  out.on = std::this_thread::get_id();
  out.inherited = geerpc::detail::current_call.call != nullptr;
  auto r = next.try_call<int>(passed, "Hop.Probe");
  out.probe_code = r ? 0 : r.code().value();
  out.relay.emplace(next.async_call<int>(passed, "Hop.Relay", 0));
  out.finished.set();
}

// The front server: Start captures context::from(ctx) into a coroutine, then waits for its stop.
struct Front {
  std::optional<geerpc::client> gate, next;
  resumed out;
  std::atomic<std::thread::id> handler_thread{};
  std::atomic<clock::rep> own_deadline{0}, passed_on{0};  // ticks since the epoch; 0: none
  // Set once the coroutine is suspended on the gate, and Start goes on.
  test::event suspended;
  int start(int, const geerpc::call_context& ctx) {
    handler_thread = std::this_thread::get_id();
    const geerpc::context passed = geerpc::context::from(ctx);
    if (ctx.handler_deadline()) own_deadline = ctx.handler_deadline()->time_since_epoch().count();
    if (passed.deadline()) passed_on = passed.deadline()->time_since_epoch().count();
    forward_after_resume(*gate, *next, passed, out);
    suspended.set();
    return wait_for(ctx.stop_token()) ? 1 : 0;
  }
};
using FrontApi = geerpc::service<"Front", geerpc::method<"Start", &Front::start>>;

clock::time_point at(const std::atomic<clock::rep>& ticks) { return clock::time_point(clock::duration(ticks.load())); }

}  // namespace

TEST_CASE("a coroutine resumed on another thread passes context::from's deadline, stop and metadata on",
          "[inherit][coroutine]") {
  test::arith_server<geerpc::threaded> gate;
  hop_server<geerpc::threaded> c;
  Front front;
  front.gate.emplace(geerpc::dial(gate.address));
  front.next.emplace(geerpc::dial(c.address));
  geerpc::server b(test::with_test_io_threads({}));
  b.add<FrontApi>(front);
  auto client = geerpc::dial(b.listen("127.0.0.1:0"));
  std::stop_source cancel;
  const auto caller =
      geerpc::with_timeout(10s).with_metadata("traceparent", "00-abc-def-01").with_stop_token(cancel.get_token());
  auto call = client.async_call<int>(caller, "Front.Start", 0);
  // Released once the coroutine is suspended: released sooner, its call could be complete before
  // it awaits, and it would go on on the handler's thread.
  REQUIRE(front.suspended.wait());
  gate.arith.release.set();
  REQUIRE(front.out.finished.wait());
  CHECK(front.out.on.load() != front.handler_thread.load());
  CHECK_FALSE(front.out.inherited);
  CHECK(front.out.probe_code == 0);
  // The next hop's deadline is the one Start passed on, less its reserve than Start's own, re-measured
  // when the next hop read it (so later by the time it took to arrive).
  const sighting seen = c.handlers.last();
  CHECK(seen.traceparent == "00-abc-def-01");
  REQUIRE(front.passed_on.load() != 0);
  CHECK(at(front.passed_on) < at(front.own_deadline));
  REQUIRE(seen.handler_deadline);
  CHECK(*seen.handler_deadline >= at(front.passed_on) - 1ms);
  CHECK(*seen.handler_deadline < at(front.passed_on) + 1s);
  // Start's stop fires with its caller's cancel, and cancels the Relay the coroutine left running.
  REQUIRE(c.handlers.started.wait_for_at_least(1));
  cancel.request_stop();
  CHECK(call.try_get().code() == geerpc::errc::canceled);
  REQUIRE(c.handlers.ended.wait_for_at_least(1));
  CHECK(c.handlers.stopped.value() == 1);
  REQUIRE(front.out.relay);
  CHECK(front.out.relay->try_get().code() == geerpc::errc::canceled);
}

namespace {

// The far server: Until answers once the test's coroutine ran, so that the front handler, waiting
// for its reply as the client's lone synchronous caller, is the thread that reads the replies.
struct Gate {
  test::counter until_started, coroutine_ran;
  int now() { return 1; }
  int until() {
    until_started.add();
    return coroutine_ran.wait_for_at_least(until_started.value()) ? 2 : -2;
  }
};
using GateApi = geerpc::service<"Gate", geerpc::method<"Now", &Gate::now>, geerpc::method<"Until", &Gate::until>>;

struct Waiter {
  std::optional<geerpc::client> gate;
  std::atomic<std::thread::id> handler_thread{};
  int run(int, const geerpc::call_context&) {
    handler_thread = std::this_thread::get_id();
    // Detached: a call with a stop token to watch never reads its own reply.
    auto r = gate->try_call<int>(geerpc::detached(), "Gate.Until");
    return r ? *r : -3;
  }
};
using WaiterApi = geerpc::service<"Waiter", geerpc::method<"Run", &Waiter::run>>;

// Awaits Gate.Now, then calls the next hop with no context: wherever it resumed, nothing inherited.
detached_coroutine probe_after_resume(geerpc::client& gate, geerpc::client& next, Gate& counts, resumed& out) {
  (void)co_await gate.async_call<int>("Gate.Now").as_result();
  out.on = std::this_thread::get_id();
  out.inherited = geerpc::detail::current_call.call != nullptr;
  auto r = next.try_call<int>("Hop.Probe");
  out.probe_code = r ? 0 : r.code().value();
  counts.coroutine_ran.add();
}

}  // namespace

TEST_CASE("a coroutine resumed on a handler's thread, calling without context::from, inherits nothing",
          "[inherit][coroutine]") {
  Gate gate;
  geerpc::server far(test::with_test_io_threads({}));
  far.add<GateApi>(gate);
  hop_server<geerpc::threaded> c;
  Waiter waiter;
  waiter.gate.emplace(geerpc::dial(far.listen("127.0.0.1:0")));
  auto next = geerpc::dial(c.address);
  geerpc::server near(test::with_test_io_threads({}));
  near.add<WaiterApi>(waiter);
  auto client = geerpc::dial(near.listen("127.0.0.1:0"));
  const auto caller = geerpc::with_timeout(10s).with_metadata("traceparent", "00-abc-def-01");
  // The client's tuning decides whether the handler's call reads the replies: rounds until the
  // coroutine resumed on the handler's thread, the case that makes the check worth anything.
  int on_handler_thread = 0;
  for (int round = 1; round <= 20 && on_handler_thread == 0; ++round) {
    auto run = client.async_call<int>(caller, "Waiter.Run", 0);
    REQUIRE(gate.until_started.wait_for_at_least(round));
    resumed out;
    probe_after_resume(*waiter.gate, next, gate, out);
    CHECK(run.get() == 2);
    REQUIRE(gate.coroutine_ran.wait_for_at_least(round));
    CHECK_FALSE(out.inherited);
    CHECK(out.probe_code == 0);
    const sighting seen = c.handlers.last();
    CHECK_FALSE(seen.traceparent);
    CHECK((!seen.handler_deadline || *seen.handler_deadline > clock::now() + 1min));
    if (out.on.load() == waiter.handler_thread.load()) ++on_handler_thread;
  }
  CHECK(on_handler_thread == 1);
}

}  // namespace inherit_coroutine_test
