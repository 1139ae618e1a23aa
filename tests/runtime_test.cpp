// The runtime (runtime.hpp): what it owns, that two are independent, that a user's one replaces
// the default one, and that a manual clock decides when deadlines fire.
#include <poll.h>

#include <atomic>
#include <memory>
#include <thread>

#include "catch.hpp"
#include "support.hpp"

namespace runtime_test {

using namespace std::chrono_literals;
using geerpc::runtime;
using geerpc::detail::deadline_scheduler;

namespace {

// A timer that notes when it fired.
struct flag_timer {
  deadline_scheduler::timer timer;
  test::event fired;
  static void fire(void* context) { static_cast<flag_timer*>(context)->fired.set(); }
};

}  // namespace

TEST_CASE("two runtimes are independent: each its own scheduler thread", "[runtime][scheduler][resources]") {
  const int before = test::baseline_thread_count();
  {
    auto first = std::make_shared<runtime>();
    auto second = std::make_shared<runtime>();
    CHECK(test::thread_count() == before);  // a runtime's thread starts with its first user of deadlines
    CHECK(&first->scheduler() != &second->scheduler());
    CHECK(test::thread_count() == before + 2);
    // One scheduler kept busy in a callback does not hold up the other's deadlines.
    test::hold_scheduler busy(first->scheduler());
    REQUIRE(busy.held());
    flag_timer t;
    second->scheduler().schedule(t.timer, second->now(), &flag_timer::fire, &t);
    CHECK(t.fired.wait());
    second->scheduler().cancel(t.timer);
  }
  CHECK(test::thread_count() == before);
}

TEST_CASE("the default runtime is one, made on first use and gone when nobody holds it", "[runtime][resources]") {
  REQUIRE_FALSE(runtime::default_runtime_alive());  // no test leaves a client or server behind
  const int before = test::baseline_thread_count();
  const std::size_t made = runtime::default_runtimes_made();
  {
    auto first = runtime::default_runtime();
    auto second = runtime::default_runtime();
    CHECK(first == second);
    first->scheduler();
    CHECK(runtime::default_runtimes_made() == made + 1);
    CHECK(test::thread_count() == before + 1);
  }
  CHECK_FALSE(runtime::default_runtime_alive());
  CHECK(test::thread_count() == before);
}

TEST_CASE("a runtime's CPU budget is read once, or given", "[runtime][tuning]") {
  CHECK(runtime({.cpus = 3}).cpus() == 3);
  CHECK(runtime().cpus() == geerpc::detail::cpu_budget(geerpc::detail::affinity_cpus(), "/"));
}

TEST_CASE("a blocking client starts no scheduler thread on its runtime, and lets go of it", "[runtime][rpc]") {
  test::arith_server<geerpc::blocking> s;  // its own deadlines: the default runtime's thread
  auto rt = std::make_shared<runtime>();
  {
    auto client = geerpc::dial<geerpc::blocking>(s.address, {.runtime = rt});
    CHECK(client.call<int>(geerpc::with_timeout(5s), "Arith.Sum", test::Args{1, 2}) == 3);
  }
  CHECK_FALSE(rt->scheduler_started());
  CHECK(rt.use_count() == 1);
}

TEMPLATE_TEST_CASE("a server and a client on a user's runtime work, and no default runtime is made", "[runtime][rpc]",
                   GEERPC_ASYNC_TRANSPORTS) {
  REQUIRE_FALSE(runtime::default_runtime_alive());
  const std::size_t made = runtime::default_runtimes_made();
  auto rt = std::make_shared<runtime>();
  const std::weak_ptr<runtime> watch = rt;
  {
    test::arith_server<TestType> s({.runtime = rt});
    auto client = geerpc::dial<TestType>(s.address, {.runtime = rt});
    rt.reset();  // shared ownership: the server and the client keep it alive
    CHECK_FALSE(watch.expired());
    CHECK(client.template call<int>(geerpc::with_timeout(5s), "Arith.Sum", test::Args{1, 2}) == 3);
    // A deadline on it fires too: a handler that waits for its stop_token is stopped by the
    // caller's deadline, on the server's runtime, and the call fails by the client's.
    const auto late = client.template try_call<int>(geerpc::with_timeout(20ms), "Arith.WaitForStop", test::Args{1, 2});
    CHECK(late.code() == geerpc::errc::deadline_exceeded);
  }
  CHECK(watch.expired());  // let go with the last of them
  CHECK(runtime::default_runtimes_made() == made);
  CHECK_FALSE(runtime::default_runtime_alive());
}

TEST_CASE("a manual clock: a timer fires when the clock passes its deadline, not before", "[runtime][scheduler]") {
  runtime rt({.manual_clock = true});
  REQUIRE(rt.has_manual_clock());
  const auto start = rt.now();
  flag_timer t;
  rt.scheduler().schedule(t.timer, start + 1s, &flag_timer::fire, &t);
  rt.advance(999ms);  // returns once the scheduler has looked at its heap at the new time
  CHECK(rt.now() == start + 999ms);
  CHECK_FALSE(t.fired.is_set());
  CHECK(rt.scheduler().pending() == 1);
  rt.advance(1ms);  // returns once every deadline passed has fired
  CHECK(t.fired.is_set());
  CHECK(rt.scheduler().pending() == 0);
}

TEMPLATE_TEST_CASE("a manual clock: a call's deadline fires when the clock is moved past it, not before",
                   "[runtime][timeout]", test::plain_threaded) {
  auto rt = std::make_shared<runtime>(geerpc::runtime_options{.manual_clock = true});
  test::arith_server<TestType> s({.runtime = rt});
  auto client = geerpc::dial<TestType>(s.address, {.runtime = rt});
  auto f = client.template async_call<int>(geerpc::with_deadline(rt->now() + 1s), "Arith.Late", test::Args{1, 2});
  REQUIRE(s.arith.started.wait_for_at_least(1));  // the handler runs and waits to be released
  rt->advance(900ms);
  CHECK_FALSE(f.ready());
  rt->advance(200ms);  // past the deadline: its callback has run when advance() returns
  CHECK(f.ready());
  CHECK(f.try_get().code() == geerpc::errc::deadline_exceeded);
  s.arith.release.set();
}

TEMPLATE_TEST_CASE("a manual clock: a server's handshake timeout fires when the clock is moved past it, not before",
                   "[runtime][timeout]", test::plain_threaded, geerpc::blocking) {
  auto rt = std::make_shared<runtime>(geerpc::runtime_options{.manual_clock = true});
  geerpc::server_options opts;
  opts.timeouts.handshake = 1s;
  opts.runtime = rt;
  test::arith_server<TestType> s(opts);
  test::raw_peer peer(s.address);  // connects and says nothing
  // Its timer is armed by the server's thread once it has the connection: a state, polled.
  REQUIRE(test::eventually([&] { return rt->scheduler().pending() == 1; }));
  rt->advance(900ms);
  pollfd readable{peer.fd(), POLLIN, 0};  // an early close would have left an end of file to read
  CHECK(::poll(&readable, 1, 0) == 0);    // the timer has been looked at, and has not fired
  rt->advance(200ms);
  CHECK(peer.closed_by_peer());
}

}  // namespace runtime_test
