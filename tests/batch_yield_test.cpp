// The one-CPU server's yield before it reads (tuning/batch_yield.hpp): it yields only after a round
// that read several requests, and a yield that buys too little for its time shuts the gate for a
// back-off that doubles while yields keep failing and shrinks slowly while they pay.
#include <chrono>
#include <thread>

#include "catch.hpp"
#include "geerpc/tuning/batch_yield.hpp"

using namespace std::chrono_literals;
using geerpc::detail::batch_yield;

namespace {
const batch_yield::clock::time_point t0 = batch_yield::clock::now();

// Fails one yield at `at` (2 ms for a single request) and returns how long the gate stays shut
// (checked up to just past the longest back-off).
batch_yield::clock::duration shut_time(batch_yield& gate, batch_yield::clock::time_point at) {
  gate.judge(2ms, 1, at);
  auto shut = 0us;
  while (!gate.open_at(at + shut) && shut <= batch_yield::max_backoff) shut += 1us;
  return shut;
}
}  // namespace

TEST_CASE("the server yields only after a round that read several requests", "[batch_yield]") {
  batch_yield gate;
  CHECK_FALSE(gate.due());  // nothing read yet
  gate.after_round(1);
  CHECK_FALSE(gate.due());  // one call at a time: nothing to gather
  gate.after_round(2);
  CHECK(gate.due());
  gate.after_round(0);
  CHECK_FALSE(gate.due());

  gate.after_round(2);
  gate.judge(2ms, 1, batch_yield::clock::now());  // a yield that failed just now
  CHECK_FALSE(gate.due());
}

TEST_CASE("the round after a yield judges it by the time the yield took", "[batch_yield]") {
  batch_yield gate;
  gate.after_round(2);
  gate.yield([] { std::this_thread::sleep_for(2ms); });  // as a busy neighbour would take it
  gate.after_round(5);                                   // 2 ms for 5 requests: too long
  CHECK_FALSE(gate.due());

  batch_yield quick;
  quick.after_round(2);
  quick.yield([] {});
  quick.after_round(5);
  CHECK(quick.due());
}

TEST_CASE("a yield that buys requests for its time keeps the gate open", "[batch_yield]") {
  batch_yield gate;
  gate.judge(300us, 31, t0);  // about 10 µs per request: a pipelining client's threads sending
  CHECK(gate.open_at(t0));
  gate.judge(batch_yield::worth * 4, 4, t0);  // exactly worth per request still pays
  CHECK(gate.open_at(t0));
  gate.judge(batch_yield::worth, 0, t0);  // no request at all counts as one
  CHECK(gate.open_at(t0));
}

TEST_CASE("a yield longer than the longest fails however many requests it bought", "[batch_yield]") {
  batch_yield gate;
  gate.judge(batch_yield::longest, 1000, t0);
  CHECK(gate.open_at(t0));
  gate.judge(batch_yield::longest + 1us, 1000, t0);
  CHECK_FALSE(gate.open_at(t0));
}

TEST_CASE("a yield that buys too little shuts the gate, for longer at each failure", "[batch_yield]") {
  batch_yield gate;
  CHECK(shut_time(gate, t0) == batch_yield::min_backoff);
  CHECK(shut_time(gate, t0 + 1s) == 2 * batch_yield::min_backoff);
  CHECK(shut_time(gate, t0 + 2s) == 4 * batch_yield::min_backoff);
  // A yield followed by no request at all is judged as if it bought one.
  gate.judge(batch_yield::worth + 1us, 0, t0 + 3s);
  CHECK_FALSE(gate.open_at(t0 + 3s));
}

TEST_CASE("the back-off stops growing at its maximum", "[batch_yield]") {
  batch_yield gate;
  for (int i = 0; i < 20; ++i) gate.judge(2ms, 1, t0);
  gate.judge(2ms, 1, t0 + 10s);
  CHECK_FALSE(gate.open_at(t0 + 10s + batch_yield::max_backoff - 1us));
  CHECK(gate.open_at(t0 + 10s + batch_yield::max_backoff));
}

TEST_CASE("yields that pay shrink the back-off by an eighth each, not at once", "[batch_yield]") {
  batch_yield gate;
  for (int i = 0; i < 3; ++i) gate.judge(2ms, 1, t0);  // back-off now 8 ms
  gate.judge(10us, 1, t0 + 1s);                        // pays: 7 ms
  CHECK(shut_time(gate, t0 + 2s) == 7ms);
  for (int i = 0; i < 200; ++i) gate.judge(10us, 1, t0 + 3s);  // many that pay: back to the minimum
  CHECK(shut_time(gate, t0 + 4s) == batch_yield::min_backoff);
}
