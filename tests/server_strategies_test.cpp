// The threaded server's two strategies (tuning/none.hpp): how reads and handlers are scheduled and
// when replies leave (server_schedule: unled runs, reply holds), and how a reactor's pool grows
// (pool_grow). Their heuristics' decisions are driven here by a runtime's manual clock, never by
// this machine's timing; and tuning::none's strategies are shown to run none of them.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

using namespace std::chrono_literals;

namespace server_strategies_test {

std::shared_ptr<geerpc::runtime> manual_runtime() {
  return std::make_shared<geerpc::runtime>(geerpc::runtime_options{.manual_clock = true});
}

// What reply holds send through: counts the times its held replies were sent.
struct fake_connection {
  std::atomic<int> flushes{0};
  void flush_replies() { flushes.fetch_add(1); }
};

// A reactor's growth rule on a manual clock; the look, which the reactor would run under its pool
// lock, runs on the scheduler thread while advance() waits for it.
struct growth_rig {
  static constexpr std::size_t core = 2;  // two threads run handlers and never retire; one leads
  std::shared_ptr<geerpc::runtime> rt = manual_runtime();
  std::optional<geerpc::detail::pool_growth> growth;
  int looks = 0;

  growth_rig() { growth.emplace(core, core + 2, 1ms, &rt->scheduler(), &on_look, this); }
  ~growth_rig() { growth->cancel(); }
  static void on_look(void* self) {
    auto& rig = *static_cast<growth_rig*>(self);
    ++rig.looks;
    rig.growth->look();
  }
  bool may_grow(std::size_t threads) { return growth->may_grow(threads, rt->now()); }
};

// tuning::none's two server strategies.
using none_schedule = geerpc::tuning::none::server_schedule;
using none_grow = geerpc::tuning::none::pool_grow;

}  // namespace server_strategies_test

TEST_CASE("unled runs: a handler found blocked keeps runs led for calm_period of the runtime's clock",
          "[strategies][unled]") {
  auto rt = server_strategies_test::manual_runtime();
  using geerpc::detail::unled_runs;
  int engine_looks = 0;
  unled_runs runs(
      rt->scheduler(), true,
      [](void* looks) {
        ++*static_cast<int*>(looks);
        return false;  // led again: the watchdog stops looking
      },
      &engine_looks);
  CHECK(runs.may_run_unled());
  runs.found_blocked();
  CHECK_FALSE(runs.may_run_unled());
  rt->advance(unled_runs::calm_period - 1us);
  CHECK_FALSE(runs.may_run_unled());
  rt->advance(1us);
  CHECK(runs.may_run_unled());
  // A run left unled: the watchdog looks a period later, by the same clock, and asks the engine.
  std::uint32_t draw = 1;
  runs.unled_run_begins(draw);
  rt->advance(unled_runs::lead_watch_period - 1us);
  CHECK(engine_looks == 0);
  rt->advance(1us);
  CHECK(engine_looks == 1);
  // The watchdog's own look finds nobody led and no run began since: blocked, as of now.
  CHECK(runs.look(true));
  CHECK(runs.look(true));
  CHECK_FALSE(runs.may_run_unled());
  rt->advance(unled_runs::calm_period);
  CHECK(runs.may_run_unled());
}

TEST_CASE(
    "reply holds: the watchdog sends a reply held for max_hold of the runtime's clock: a release sends it at once",
    "[strategies][reply_holds]") {
  auto rt = server_strategies_test::manual_runtime();
  using holds_type = geerpc::detail::basic_reply_holds<server_strategies_test::fake_connection>;
  holds_type holds(2, rt->scheduler());
  auto slow = std::make_shared<server_strategies_test::fake_connection>();
  holds.hold(1, slow);
  CHECK(holds.held(1) == slow.get());
  CHECK(holds.held(0) == nullptr);
  rt->advance(holds_type::max_hold - 1us);
  CHECK(slow->flushes == 0);
  rt->advance(1us);  // the watchdog's first look: held for max_hold
  CHECK(slow->flushes == 1);
  CHECK(holds.held(1) == slow.get());  // still the thread's: it goes on answering that connection
  holds.release(1);
  CHECK(slow->flushes == 2);
  CHECK(holds.held(1) == nullptr);
  // A hold released before max_hold: sent once, by the release; the watchdog finds nothing.
  auto quick = std::make_shared<server_strategies_test::fake_connection>();
  holds.hold(0, quick);
  rt->advance(holds_type::max_hold / 2);
  holds.release(0);
  rt->advance(2 * holds_type::max_hold);
  CHECK(quick->flushes == 1);
}

TEST_CASE("reply holds: never for a caller whose deadline is within hold_margin of the runtime's clock",
          "[strategies][reply_holds]") {
  auto rt = server_strategies_test::manual_runtime();
  using holds_type = geerpc::detail::basic_reply_holds<server_strategies_test::fake_connection>;
  holds_type holds(1, rt->scheduler());
  geerpc::detail::server_request request;
  CHECK(holds.deadline_allows(request));  // no deadline
  request.caller_deadline = rt->now() + holds_type::hold_margin + 1us;
  CHECK(holds.deadline_allows(request));
  rt->advance(1us);
  CHECK_FALSE(holds.deadline_allows(request));
}

TEST_CASE("pool growth: the core at once: above it, a thread per stuck handler, or any while stalled",
          "[strategies][pool]") {
  server_strategies_test::growth_rig rig;
  const std::size_t core = server_strategies_test::growth_rig::core;
  CHECK(rig.may_grow(core));  // under the core size (and its leader): at once
  rig.growth->handler_began(0);
  rig.growth->handler_began(1);
  CHECK_FALSE(rig.may_grow(core + 1));  // both handlers may finish soon: a look is armed instead
  rig.rt->advance(1ms - 1ns);
  CHECK(rig.looks == 0);
  rig.rt->advance(1ns);  // the look: both still run what they ran when it was armed
  CHECK(rig.looks == 1);
  CHECK(rig.may_grow(core + 1));  // stalled: a thread for each waiting request,
  CHECK(rig.may_grow(core + 2));
  CHECK(rig.may_grow(core + 3));  // beyond one per stuck handler
  rig.growth->handler_began(2);
  rig.growth->handler_ended(1);         // a handler finishes: no longer stalled; slot 0 is still stuck
  CHECK(rig.may_grow(core + 1));        // one thread more for the stuck one
  CHECK_FALSE(rig.may_grow(core + 2));  // no more: a look is armed
  rig.rt->advance(1ms);                 // slot 2 ran one request across it: stuck too
  CHECK(rig.looks == 2);
  CHECK(rig.may_grow(core + 2));
  rig.growth->handler_ended(0);
  rig.growth->handler_ended(2);
  // Handlers that keep finishing are never stuck: no growth above the core.
  CHECK_FALSE(rig.may_grow(core + 1));
  rig.growth->handler_began(0);
  rig.growth->handler_ended(0);
  rig.growth->handler_began(0);
  rig.rt->advance(1ms);
  CHECK(rig.looks == 3);
  CHECK_FALSE(rig.may_grow(core + 1));
  rig.growth->handler_ended(0);
}

// tuning::none's server strategies hold nothing to decide with, and their decisions are constants:
// no unled run, no held reply, growth whenever requests wait and every thread is busy.
static_assert(std::is_empty_v<server_strategies_test::none_schedule>, "tuning::none's server_schedule has no state");
static_assert(std::is_empty_v<server_strategies_test::none_schedule::thread_state>);
static_assert(std::is_empty_v<server_strategies_test::none_schedule::run_probe>);
static_assert(std::is_empty_v<server_strategies_test::none_grow>, "tuning::none's pool_grow has no state");
static_assert(!server_strategies_test::none_schedule::may_run_unled(), "under tuning::none every run is led");
static_assert(server_strategies_test::none_schedule::held({}) == nullptr, "under tuning::none no reply is held");
static_assert(server_strategies_test::none_grow::may_grow(1000, {}), "tuning::none's pool grows without a look");
static_assert(!std::is_empty_v<geerpc::tuning::automatic::server_schedule>);
static_assert(!std::is_empty_v<geerpc::tuning::automatic::pool_grow>);

TEST_CASE("tuning::none's pool starts a thread for each waiting request at once: no growth delay, no look",
          "[strategies][pool]") {
  test::arith_server<test::plain_threaded> s({.threads = {.io_threads = 1, .handlers = 1, .growth_delay = 1h}});
  struct release_at_end {  // Late ignores its stop token: a failed REQUIRE must not leave it blocked
    test::event& release;
    ~release_at_end() { release.set(); }
  } guard{s.arith.release};
  auto client = geerpc::dial<test::plain_threaded>(s.address);
  std::vector<test::future<int, test::plain_threaded>> calls;
  for (int i = 0; i < 3; ++i) calls.push_back(client.async_call<int>("Arith.Late", test::Args{i, 0}));
  // Under tuning::automatic the second would wait an hour for the growth look.
  REQUIRE(s.arith.started.wait_for_at_least(3));
  CHECK(s.server.thread_count() == 4);  // three in handlers, one to lead
  s.arith.release.set();
  for (int i = 0; i < 3; ++i) CHECK(calls[static_cast<std::size_t>(i)].get() == i * 1000);
}

TEST_CASE("tuning::automatic's pool grows past its core once its runtime's clock passes the growth delay",
          "[strategies][pool]") {
  auto rt = server_strategies_test::manual_runtime();
  // An hour ahead of steady_clock: a look armed by steady_clock's time would be due at once.
  rt->advance(1h);
  test::arith_server<geerpc::threaded> s(
      {.threads = {.io_threads = 1, .handlers = 1, .growth_delay = 1ms}, .runtime = rt});
  struct release_at_end {
    test::event& release;
    ~release_at_end() { release.set(); }
  } guard{s.arith.release};
  auto client = geerpc::dial(s.address);  // on the default runtime: its deadlines are not this clock's
  std::vector<test::future<int, geerpc::threaded>> calls;
  for (int i = 0; i < 3; ++i) calls.push_back(client.async_call<int>("Arith.Late", test::Args{i, 0}));
  REQUIRE(s.arith.started.wait_for_at_least(1));
  // The pool may not grow before its runtime's clock has moved by the delay.
  CHECK_FALSE(s.arith.started.wait_for_at_least(2, 100ms));
  // The look is armed once the other requests are read, which this thread cannot see: the manual
  // clock is moved by the delay until they run.
  for (int moves = 0; moves < 500 && !s.arith.started.wait_for_at_least(3, 10ms); ++moves) rt->advance(1ms);
  CHECK(s.arith.started.wait_for_at_least(3, 0ms));
  s.arith.release.set();
  for (int i = 0; i < 3; ++i) CHECK(calls[static_cast<std::size_t>(i)].get() == i * 1000);
}
