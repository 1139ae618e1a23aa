// The blocking client under the tuning seam (tuning/none.hpp): with tuning::none it runs none of
// its heuristics (no spin before sleeping, the turn in strict arrival order), with
// tuning::automatic it keeps both. Each test waits on events (a handler started, a caller queued
// for its turn), never on this machine's timing.
#include <chrono>
#include <functional>
#include <memory>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace blocking_tuning_test {

using namespace std::chrono_literals;
using test::Args;

using plain_engine = test::plain_blocking::client_engine;
using automatic_engine = geerpc::blocking::client_engine;

// tuning::none's blocking client: no overtaking, no waiter that counts or spins.
static_assert(std::is_same_v<geerpc::blocking, geerpc::basic_blocking<geerpc::tuning::automatic>>,
              "geerpc::blocking is the automatic tuning");
static_assert(geerpc::tuning::none::client_send::overtake_limit == 0ms, "tuning::none: strict arrival order");
static_assert(plain_engine::overtake_limit == 0ms, "basic_blocking<tuning::none> never lets a caller overtake");
static_assert(automatic_engine::overtake_limit == 1ms, "tuning::automatic keeps its 1 ms overtake limit");
static_assert(!geerpc::tuning::none::client_wait::waiter::may_spin(), "tuning::none's blocking caller never spins");
static_assert(std::is_empty_v<geerpc::tuning::none::client_wait>, "tuning::none's waiting holds nothing");
static_assert(std::is_same_v<test::plain_blocking::server_engine, geerpc::blocking::server_engine>,
              "the blocking server has no heuristic: one engine for every tuning");

// A client of `Transport` on its own engine (built by hand, as try_dial does), so that a test sees
// who waits for the turn.
template <class Transport>
struct engine_client {
  std::shared_ptr<typename Transport::client_engine> engine;
  geerpc::basic_client<Transport> client;

  explicit engine_client(const std::string& address, geerpc::options opts = {})
      : engine(std::make_shared<typename Transport::client_engine>(
            geerpc::detail::dial_and_handshake(address, opts, geerpc::binary_codec::id).value(), opts)),
        client(engine) {}
};

// One round: a holder has the turn (its Late call is held by the server), `queued` more callers
// wait for it in order, then the handlers are let go and the holder calls again straight away.
// Returns how many Late handlers had finished when the holder's second call came back: all of them
// (1 + queued) if it went after every waiter, 1 if it went ahead of them.
template <class Transport>
int late_handlers_before_the_holders_next_call(int queued, geerpc::options opts = {},
                                               const std::function<void()>& before_release = {}) {
  test::arith_server<geerpc::threaded> s;
  engine_client<Transport> c(s.address, opts);
  // What each call answered, looked at once every thread is joined (Catch2 checks from one thread).
  int holder_late = 0, holder_sum = 0, finished = -1;
  std::vector<int> waiter_late(static_cast<std::size_t>(queued));
  std::jthread holder([&] {
    holder_late = c.client.template call<int>(geerpc::with_timeout(10s), "Arith.Late", Args{1, 0});
    holder_sum = c.client.template call<int>(geerpc::with_timeout(10s), "Arith.Sum", Args{1, 2});  // right away
    finished = s.arith.finished.value();
  });
  REQUIRE(s.arith.started.wait_for_at_least(1));  // the holder has the turn
  std::vector<std::jthread> waiters;
  for (int i = 0; i < queued; ++i) {
    waiters.emplace_back([&c, &waiter_late, i] {
      waiter_late[static_cast<std::size_t>(i)] =
          c.client.template call<int>(geerpc::with_timeout(10s), "Arith.Late", Args{i + 2, 0});
    });
    // Each queued before the next comes: their order of arrival is known.
    REQUIRE(test::eventually([&] { return c.engine->waiting() == static_cast<std::size_t>(i + 1); }));
  }
  if (before_release) before_release();
  s.arith.release.set();
  holder.join();
  waiters.clear();
  CHECK(holder_late == 1000);
  CHECK(holder_sum == 3);
  for (int i = 0; i < queued; ++i) CHECK(waiter_late[static_cast<std::size_t>(i)] == (i + 2) * 1000);
  return finished;
}

TEST_CASE("tuning::none's blocking client: a caller never goes ahead of callers already waiting for the turn",
          "[blocking][tuning][concurrency]") {
  // The holder comes straight back for the connection while two callers wait: it is the third in
  // line, every round. Their runtime's clock stands still, so an overtake limit, which this
  // tuning must not have, would never be reached, and the holder would usually go first.
  auto frozen = std::make_shared<geerpc::runtime>(geerpc::runtime_options{.manual_clock = true});
  for (int round = 0; round < 30; ++round) {
    INFO("round " << round);
    CHECK(late_handlers_before_the_holders_next_call<test::plain_blocking>(2, {.runtime = frozen}) == 3);
  }
}

TEST_CASE(
    "tuning::automatic's blocking client: a caller that finds the connection free may take it ahead of a waiter "
    "until the runtime's clock says the waiter has waited the overtake limit",
    "[blocking][tuning][concurrency]") {
  // The waiter's wait is measured by its runtime's clock: a manual one, which stands still here,
  // so the waiter is never owed the turn, and the holder may come back first. Whether it does is a
  // race it usually wins (the waiter must wake first); some round shows it.
  auto frozen = std::make_shared<geerpc::runtime>(geerpc::runtime_options{.manual_clock = true});
  bool overtaken = false;
  for (int round = 0; round < 100 && !overtaken; ++round)
    overtaken = late_handlers_before_the_holders_next_call<geerpc::blocking>(1, {.runtime = frozen}) == 1;
  CHECK(overtaken);
  // Once that clock has moved by the limit, the waiter is handed the turn, every round.
  for (int round = 0; round < 10; ++round) {
    INFO("round " << round);
    auto rt = std::make_shared<geerpc::runtime>(geerpc::runtime_options{.manual_clock = true});
    CHECK(late_handlers_before_the_holders_next_call<geerpc::blocking>(
              1, {.runtime = rt}, [&] { rt->advance(automatic_engine::overtake_limit); }) == 2);
  }
}

// A call with a 200 ms deadline, over a client of `Transport` whose spin knob is a day, to a peer
// that plays the server and never answers (a real server answers at the deadline, which would end
// a spin too). Two CPUs to plan for, and this caller the runtime's only one waiting: all a spin
// needs. Returns whether the call ended within 10 s, and how; `while_waiting` runs once the
// request is out.
template <class Transport>
std::pair<bool, std::error_code> call_a_silent_peer(const std::function<void(geerpc::runtime&)>& while_waiting) {
  test::listener listener;
  std::unique_ptr<test::raw_peer> peer;
  std::jthread accepting([&] { peer = test::accept_greeted(listener); });
  auto rt = std::make_shared<geerpc::runtime>(geerpc::runtime_options{.cpus = 2});
  geerpc::options opts;
  opts.runtime = rt;
  opts.timeouts.connect = 5s;
  opts.tuning.spin = std::chrono::hours(24);
  auto client = geerpc::dial<Transport>(listener.address(), opts);
  accepting.join();
  REQUIRE(peer);
  test::event done;
  std::error_code code;
  std::jthread caller([&] {
    code = client.template try_call<int>(geerpc::with_timeout(200ms), "Arith.Sum", Args{1, 2}).code();
    done.set();
  });
  REQUIRE(peer->read_frame());  // the request is out: its caller waits for the reply
  while_waiting(*rt);
  const bool ended = done.wait(10s);  // the bound only catches a caller that spins on
  peer.reset();                       // ends a spin, if one is going: its socket reads the end
  caller.join();
  return {ended, code};
}

TEST_CASE("tuning::none's blocking client never spins: with the spin knob at a day, a call still ends at its deadline",
          "[blocking][tuning][spin]") {
  const auto [ended, code] = call_a_silent_peer<test::plain_blocking>([](geerpc::runtime& rt) {
    CHECK(rt.waiting_callers().load() == 0);  // a caller that may not spin does not count itself
  });
  CHECK(ended);
  CHECK(code == geerpc::errc::deadline_exceeded);
}

TEST_CASE("the blocking client's spin ends at the call's deadline, however long the spin knob",
          "[blocking][tuning][spin]") {
  // tuning::automatic spins, on its own socket: only the deadline ends it when no reply comes.
  const auto [ended, code] = call_a_silent_peer<geerpc::blocking>([](geerpc::runtime&) {});
  CHECK(ended);
  CHECK(code == geerpc::errc::deadline_exceeded);
}

}  // namespace blocking_tuning_test
