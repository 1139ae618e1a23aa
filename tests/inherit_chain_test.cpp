// Inherited deadlines and cancellation across hops (issue 30, point 1): a chain of three servers in
// this process, A -> B -> C, over every transport, where each hop's handler calls the next on its
// own thread: the first caller's deadline, its cancel, a hop's handle timeout and its server's stop
// each end every hop after it.
#include <chrono>
#include <memory>

#include "catch.hpp"
#include "inherit_support.hpp"
#include "support.hpp"

namespace inherit_chain_test {

using namespace std::chrono_literals;
using namespace test::inherit;
using test::inherit::clock;  // not the C library's

TEMPLATE_TEST_CASE("a caller's deadline reaches the third hop, which is told before it, and every hop ends",
                   "[inherit]", GEERPC_TRANSPORTS) {
  chain<TestType> hops;
  auto client = geerpc::dial<TestType>(hops.a.address);
  const auto deadline = clock::now() + 300ms;
  auto r = client.template try_call<int>(geerpc::with_deadline(deadline), "Hop.Relay", 7);
  CHECK(r.code() == geerpc::errc::deadline_exceeded);
  // Every hop's handler sees its stop token fire and returns; none waits for the 5 s bound.
  REQUIRE(hops.all_ended(1));
  CHECK(hops.a.handlers.stopped.value() == 1);
  CHECK(hops.b.handlers.stopped.value() == 1);
  CHECK(hops.c.handlers.stopped.value() == 1);
  // C is told by the deadline it inherited, before the caller's (bench/ measures how long before);
  // the bound is for a loaded machine under a sanitizer, and still catches a hop that waits for
  // its own handle timeout. B's nested call to C ended by that deadline, or by B's own token
  // when a loaded machine runs the two timers late and together.
  CHECK(hops.c.handlers.told() <= deadline + 50ms);
  CHECK(hops.c.handlers.told() >= deadline - 10ms);
  const auto nested = hops.b.handlers.last_nested_code();
  CHECK((nested == static_cast<int>(geerpc::errc::deadline_exceeded) ||
         nested == static_cast<int>(geerpc::errc::canceled)));
  // Nothing stays in flight on any server once its handler returned.
  CHECK(test::eventually(
      [&] { return hops.a.server.inflight() + hops.b.server.inflight() + hops.c.server.inflight() == 0; }));
  // Each hop passes on its deadline less its reserve: 1% of a budget near 300 ms, capped at 1 ms.
  for (hop<TestType>* h : {&hops.a.handlers, &hops.b.handlers}) {
    const sighting s = h->last();
    REQUIRE(s.handler_deadline);
    REQUIRE(s.passed_on);
    CHECK(*s.handler_deadline - *s.passed_on == 1ms);
  }
  // The next hop's deadline is the one passed on, measured again from when its request was read
  // (later by the time the request took to arrive: no bound on that here, on a loaded machine).
  const sighting c = hops.c.handlers.last();
  REQUIRE(c.handler_deadline);
  CHECK(*c.handler_deadline < deadline + 1s);
}

TEMPLATE_TEST_CASE("a caller that cancels through its stop token stops every hop", "[inherit]",
                   GEERPC_ASYNC_TRANSPORTS) {
  chain<TestType> hops;
  auto client = geerpc::dial<TestType>(hops.a.address);
  std::stop_source cancel;
  std::jthread canceler([&] {
    if (hops.c.handlers.started.wait_for_at_least(1)) cancel.request_stop();
  });
  auto r = client.template try_call<int>(geerpc::with_stop_token(cancel.get_token()), "Hop.Relay", 7);
  CHECK(r.code() == geerpc::errc::canceled);
  REQUIRE(hops.all_ended(1));
  CHECK(hops.c.handlers.stopped.value() == 1);
  CHECK(hops.b.handlers.stopped.value() == 1);
  CHECK(hops.a.handlers.stopped.value() == 1);
  // No deadline anywhere: none was given.
  CHECK_FALSE(hops.c.handlers.last().handler_deadline);
}

// The cancellation of a call across hops reaches a handler on the threaded server only: the
// blocking server reads a cancel frame between handlers (docs/protocol.md, 4.7), so there a nested
// call ends by its inherited deadline. The tests that cancel run over the threaded transports.

TEMPLATE_TEST_CASE("a handler's nested call is canceled by its handle timeout", "[inherit]", GEERPC_TRANSPORTS) {
  hop_server<TestType> c;
  {
    hop_server<TestType> b;
    b.handlers.next.emplace(geerpc::dial<TestType>(c.address));
    geerpc::options opts;
    opts.timeouts.handle = 100ms;
    auto client = geerpc::dial<TestType>(b.address, opts);
    auto r = client.template try_call<int>("Hop.Relay", 1);
    CHECK(r.code() == geerpc::errc::handle_timeout);
    REQUIRE(c.handlers.ended.wait_for_at_least(1));
    CHECK(c.handlers.stopped.value() == 1);
    REQUIRE(b.handlers.ended.wait_for_at_least(1));
    const sighting seen = c.handlers.last();
    CHECK(seen.handler_deadline);  // the handle timeout, passed on as a deadline
  }
}

TEMPLATE_TEST_CASE("a handler's nested call is canceled by its server's stop", "[inherit]", GEERPC_ASYNC_TRANSPORTS) {
  hop_server<TestType> c;
  {
    auto b = std::make_unique<hop_server<TestType>>();
    b->handlers.next.emplace(geerpc::dial<TestType>(c.address));
    auto client = geerpc::dial<TestType>(b->address);
    std::jthread caller([&] { (void)client.template try_call<int>("Hop.Relay", 1); });
    REQUIRE(c.handlers.started.wait_for_at_least(1));
    b->server.stop();  // returns once B's handler has
    REQUIRE(c.handlers.ended.wait_for_at_least(1));
    CHECK(c.handlers.stopped.value() == 1);
  }
}

}  // namespace inherit_chain_test
