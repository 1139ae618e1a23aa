// The bounded spin of a waiting caller (tuning/spin.hpp): a lone waiter on several CPUs looks for
// its reply for a moment before it sleeps; a waiter among others, or on one CPU, never spins. And
// a caller that reads the socket while it spins hands every reply to its own call.
#include <atomic>
#include <chrono>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace spin_test {

using namespace std::chrono_literals;
using geerpc::detail::reply_wait;
using test::Args;

namespace {
// What a runtime would give a waiter: its own count of waiting callers, and its CPU budget.
bool several_cpus() { return geerpc::detail::process_cpus() > 1; }
struct lone_runtime {
  std::atomic<int> waiting{0};
  reply_wait waiter() { return reply_wait(waiting, geerpc::detail::spin_budget, several_cpus()); }
};
}  // namespace

TEST_CASE("a lone waiter on several CPUs spins until its event comes", "[spin]") {
  lone_runtime rt;
  const reply_wait waiting = rt.waiter();
  int polls = 0;
  const bool done = waiting.spin_until([&] { return ++polls >= 20; });
  if (several_cpus()) {
    CHECK(polls > 1);
    CHECK(done == (polls == 20));  // a thread descheduled mid-spin may run out of budget first
  } else {                         // one CPU: spinning would only delay the thread it waits for
    CHECK_FALSE(done);
    CHECK(polls == 1);
  }
}

TEST_CASE("a spin that finds nothing ends once its budget is spent", "[spin]") {
  lone_runtime rt;
  const reply_wait waiting = rt.waiter();
  int polls = 0;
  const auto began = std::chrono::steady_clock::now();
  CHECK_FALSE(waiting.spin_until([&] {
    ++polls;
    return false;
  }));
  if (several_cpus()) {
    CHECK(std::chrono::steady_clock::now() - began >= geerpc::detail::spin_budget);
    CHECK(polls > 1);
  } else {
    CHECK(polls == 1);
  }
}

TEST_CASE("a waiter among other waiters sleeps at once", "[spin]") {
  lone_runtime rt;
  const reply_wait first = rt.waiter();
  const reply_wait second = rt.waiter();
  int polls = 0;
  CHECK_FALSE(second.spin_until([&] {
    ++polls;
    return false;
  }));
  CHECK(polls == 1);
}

TEST_CASE("a caller reading replies while it spins hands each to its own call", "[spin][async]") {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial(s.address);
  // Async calls do not count as waiters, so each synchronous call below is a lone waiter and
  // reads the socket while it spins; the held replies come back in the middle of those calls.
  std::vector<geerpc::call_future<int>> held;
  for (int i = 0; i < 20; ++i) held.push_back(client.async_call<int>("Arith.Late", Args{i, 0}));
  REQUIRE(s.arith.started.wait_for_at_least(8));  // the handler pool is busy with them
  s.arith.release.set();
  for (int i = 0; i < 300; ++i) REQUIRE(client.call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{i, 1}) == i + 1);
  for (int i = 0; i < 20; ++i) CHECK(held[static_cast<std::size_t>(i)].get() == i * 1000);
}

}  // namespace spin_test
