// The parts of a server's shared context, each alone: the request counters' limits, the drain gate
// woken by the last request and by its deadline, the connection registry's wait for the last one.
#include <chrono>
#include <cstddef>
#include <span>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "geerpc/server/context.hpp"
#include "support.hpp"

namespace server_context_test {

using geerpc::detail::connection_registry;
using geerpc::detail::drain_gate;
using geerpc::detail::listed_connection;
using geerpc::detail::request_counters;
using namespace std::chrono_literals;

TEST_CASE("room_for lets anything into an empty queue and nothing past the limit beside others", "[context][limits]") {
  CHECK(request_counters::room_for(0, 1000, 10));  // alone, a request larger than the limit still goes
  CHECK(request_counters::room_for(4, 6, 10));     // exactly to the limit
  CHECK_FALSE(request_counters::room_for(4, 7, 10));
  CHECK_FALSE(request_counters::room_for(11, 0, 10));  // already past it (one large request alone)
  CHECK_FALSE(request_counters::room_for(1, static_cast<std::size_t>(-1), 10));  // no overflow
}

TEST_CASE("try_queue_bytes counts what fits and refuses the rest, and release_bytes gives it back",
          "[context][limits]") {
  request_counters counters;
  REQUIRE(counters.try_queue_bytes(30, 10));  // the first goes whatever its size
  CHECK(counters.queued_bytes() == 30);
  CHECK_FALSE(counters.try_queue_bytes(1, 10));
  CHECK(counters.queued_bytes() == 30);  // a refusal counts nothing
  counters.release_bytes(30);
  REQUIRE(counters.try_queue_bytes(6, 10));
  REQUIRE(counters.try_queue_bytes(4, 10));
  CHECK_FALSE(counters.try_queue_bytes(1, 10));
  CHECK(counters.queued_bytes() == 10);
}

TEST_CASE("try_acquire_inflight admits up to its limit, then again once one is released", "[context][limits]") {
  request_counters counters;
  for (int i = 0; i < 3; ++i) REQUIRE(counters.try_acquire_inflight(3));
  CHECK_FALSE(counters.try_acquire_inflight(3));
  CHECK(counters.inflight() == 3);
  counters.release_inflight();
  CHECK(counters.try_acquire_inflight(3));
  CHECK_FALSE(counters.try_acquire_inflight(3));
  CHECK_FALSE(request_counters{}.try_acquire_inflight(0));
}

TEST_CASE("wait_drained is woken by the last request finishing, not by its poll", "[context][shutdown]") {
  drain_gate gate(24h);  // no poll within the test: only the finishing request's notify wakes it
  request_counters counters;
  REQUIRE(counters.try_acquire_inflight(1));
  gate.begin();
  test::event looked;  // set by the waiter's first look, made under the gate's lock
  bool drained = false;
  std::jthread waiter([&] {
    drained = gate.wait_drained(std::chrono::steady_clock::now() + 60s, [&] {
      looked.set();
      return counters.inflight() == 0;
    });
  });
  REQUIRE(looked.wait());
  // finish() takes the gate's lock, which the waiter gives up only inside its wait: the notify
  // cannot come before it waits.
  gate.finish([&] { counters.release_inflight(); });
  const auto asked = std::chrono::steady_clock::now();
  waiter.join();
  CHECK(drained);
  CHECK(std::chrono::steady_clock::now() - asked < 30s);  // not the deadline's return
}

TEST_CASE("wait_drained gives up at its deadline while a request is in flight", "[context][shutdown]") {
  drain_gate gate(24h);
  request_counters counters;
  REQUIRE(counters.try_acquire_inflight(1));
  gate.begin();
  const auto deadline = std::chrono::steady_clock::now() + 20ms;
  CHECK_FALSE(gate.wait_drained(deadline, [&] { return counters.inflight() == 0; }));
  CHECK(std::chrono::steady_clock::now() >= deadline);
  CHECK(gate.wait_drained(deadline, [] { return true; }));  // idle: true even past its deadline
}

TEST_CASE("a finish while not draining counts out without the gate's lock", "[context][shutdown]") {
  drain_gate gate;
  int counted = 0;
  gate.finish([&] { ++counted; });
  CHECK(counted == 1);
  CHECK_FALSE(gate.draining());
  gate.begin();
  CHECK(gate.draining());
  gate.end();
  CHECK_FALSE(gate.draining());
}

namespace {
struct fake_connection final : listed_connection {
  geerpc::detail::connection_view describe() const override { return {}; }
  void visit_requests(request_visitor, void*) const override {}
};

std::vector<const listed_connection*> listed(const connection_registry& registry) {
  std::vector<const listed_connection*> out;
  registry.visit([&](std::span<const listed_connection* const> all) { out.assign(all.begin(), all.end()); });
  return out;
}
}  // namespace

TEST_CASE("the registry lists connections until they leave, and wait_empty returns after the last",
          "[context][lifecycle]") {
  connection_registry registry;
  fake_connection a, b, c;
  registry.add(a);
  registry.add(b);
  registry.add(c);
  registry.remove(a);  // the last takes its place
  CHECK(listed(registry) == std::vector<const listed_connection*>{&c, &b});
  registry.remove(b);
  CHECK(listed(registry) == std::vector<const listed_connection*>{&c});
  test::event gone;
  std::jthread waiter([&] {
    registry.wait_empty();
    gone.set();
  });
  registry.remove(c);
  CHECK(gone.wait());
  CHECK(registry.size() == 0);
  registry.wait_empty();  // already empty: returns at once
}

}  // namespace server_context_test
