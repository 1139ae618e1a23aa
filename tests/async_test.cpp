// The threaded transport's extras: asynchronous calls, and requests on one connection running
// side by side.
#include <optional>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace async_test {

using namespace std::chrono_literals;
using test::Args;
using test::ArithApi;

namespace {

// A server with one handler thread, and a raw peer past the handshake: that thread runs the
// requests of one read one after another, which is when it holds replies.
template <class Transport>
struct one_handler_thread {
  test::arith_server<Transport> s{{.threads = {.handlers = 1, .max_handlers = 1}}};
  test::raw_peer peer{s.address};
  one_handler_thread() {
    peer.send_hello();
    REQUIRE(peer.read_hello_reply());
  }
  // Sum(1, 2), then a WaitForStop, in one send(): the server most likely reads both in one go, so
  // the thread holds the quick call's reply and then blocks in the slow one.
  void send_quick_then_slow(std::uint64_t quick_seq, std::uint64_t slow_seq, std::uint64_t quick_budget_us = 0) {
    std::vector<std::byte> burst = test::request_frame(quick_seq, "Arith.Sum", Args{1, 2}, quick_budget_us);
    const auto slow = test::request_frame(slow_seq, "Arith.WaitForStop", Args{});
    burst.insert(burst.end(), slow.begin(), slow.end());
    peer.send(burst);
  }
};

}  // namespace

TEMPLATE_TEST_CASE("async calls complete independently and yield their own results", "[async]",
                   GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  std::vector<test::future<int, TestType>> futures;
  for (int i = 0; i < 100; ++i) futures.push_back(client.template async_call<int>("Arith.Sum", Args{i, i}));
  for (int i = 0; i < 100; ++i) CHECK(futures[static_cast<std::size_t>(i)].get() == 2 * i);

  auto typed = client.template async_call<ArithApi::fn<"Sum">>({2, 3});
  CHECK(typed.get() == 5);
  CHECK_FALSE(typed.valid());
}

TEMPLATE_TEST_CASE("a slow request does not hold up a fast one on the same connection", "[async][concurrency]",
                   GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  auto slow = client.template async_call<int>("Arith.Late", Args{5, 0});
  REQUIRE(s.arith.started.wait_for_at_least(1));
  CHECK(client.template call<int>(geerpc::with_timeout(2s), "Arith.Sum", Args{1, 2}) == 3);
  CHECK(s.arith.finished.value() == 0);  // the slow one was still running when the fast one came back
  CHECK_FALSE(slow.ready());
  s.arith.release.set();
  CHECK(slow.get() == 5000);
}

TEMPLATE_TEST_CASE("requests queued behind slow ones get a thread, and the connection is still read",
                   "[async][concurrency]", GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s({.threads = {.handlers = 5}});
  test::raw_peer peer(s.address);
  peer.send_hello();
  REQUIRE(peer.read_hello_reply());
  const auto late = [](int seq) {
    return test::request_frame(static_cast<std::uint64_t>(seq), "Arith.Late", Args{seq, 0});
  };
  const auto sum = [](int seq) {
    return test::request_frame(static_cast<std::uint64_t>(seq), "Arith.Sum", Args{seq, 1});
  };
  // One send(), so the server most likely reads all three in one go: two handlers that block,
  // then a quick one that must not wait for them.
  std::vector<std::byte> burst = late(1);
  for (const auto& frame : {late(2), sum(3)}) burst.insert(burst.end(), frame.begin(), frame.end());
  peer.send(burst);
  const auto quick = peer.read_frame(2s);
  // Then a third slow one, taken by whichever thread reads it: another must take over the reading,
  // or the call after it is never seen.
  peer.send(late(4));
  const bool third_started = s.arith.started.wait_for_at_least(3, 2s);
  peer.send(sum(5));
  const auto after = peer.read_frame(2s);
  s.arith.release.set();  // before any REQUIRE: the blocked handlers must end for the server to stop
  REQUIRE(quick);
  CHECK(quick->header.seq == 3);  // answered while both slow ones were still blocked
  CHECK(test::decode_body<int>(quick->body) == 4);
  CHECK(third_started);
  REQUIRE(after);
  CHECK(after->header.seq == 5);
  CHECK(test::decode_body<int>(after->body) == 6);
  for (int i = 0; i < 3; ++i) {
    const auto reply = peer.read_frame();
    REQUIRE(reply);
    CHECK(test::decode_body<int>(reply->body) == static_cast<int>(reply->header.seq) * 1000);
  }
}

TEMPLATE_TEST_CASE("a reply held for the next request of its connection is not kept behind a slow handler",
                   "[async][concurrency]", GEERPC_ASYNC_TRANSPORTS) {
  // One handler thread: it runs the quick call, holds its reply because the next queued request
  // is for the same peer, and then blocks in that one. The watchdog must send the held reply.
  one_handler_thread<TestType> t;
  auto& [s, peer] = t;
  const auto runtime = geerpc::runtime::default_runtime();  // the server's: it holds it
  geerpc::detail::deadline_scheduler* const scheduler = &runtime->scheduler();
  // Twice: the second time after the watchdog has gone idle, so that it must be armed again.
  for (std::uint64_t round = 0; round < 2; ++round) {
    const std::uint64_t quick_seq = 2 * round + 1, slow_seq = 2 * round + 2;
    t.send_quick_then_slow(quick_seq, slow_seq);
    const auto quick = peer.read_frame(2s);
    const bool slow_still_running = s.arith.finished.value() == static_cast<int>(round);
    // The cancel must find the slow one running, not still queued (then it never starts): with
    // no reply held (tuning::none) the quick reply may come before the thread takes it.
    REQUIRE(s.arith.started.wait_for_at_least(static_cast<int>(round) + 1));
    peer.send(test::cancel_frame(slow_seq));
    REQUIRE(quick);
    CHECK(quick->header.seq == quick_seq);
    CHECK(test::decode_body<int>(quick->body) == 3);
    CHECK(slow_still_running);
    const auto canceled = peer.read_frame();
    REQUIRE(canceled);
    CHECK(canceled->header.seq == slow_seq);
    CHECK(canceled->header.status == static_cast<std::uint8_t>(geerpc::errc::canceled));
    // Idle: nothing held, so the watchdog stops looking (bounded poll for a state, not a timing).
    REQUIRE(s.arith.finished.wait_for_at_least(static_cast<int>(round) + 1));
    const auto until = std::chrono::steady_clock::now() + 2s;
    while (scheduler->pending() != 0 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
    REQUIRE(scheduler->pending() == 0);
  }
}

TEMPLATE_TEST_CASE("a held reply still goes out when its connection closes", "[async][concurrency]",
                   GEERPC_ASYNC_TRANSPORTS) {
  // The watchdog cannot run (the scheduler thread is kept busy), so the quick call's reply stays
  // held while the slow call runs; stopping the server closes the connection, and the reply of a
  // handler that finished must be sent before it.
  one_handler_thread<TestType> t;
  auto& [s, peer] = t;
  std::optional<test::hold_scheduler> busy;
  busy.emplace(geerpc::runtime::default_runtime()->scheduler());  // the server's: it holds it
  REQUIRE(busy->held());
  t.send_quick_then_slow(1, 2);
  REQUIRE(s.arith.started.wait_for_at_least(1));  // the slow one runs, so the quick one has answered
  s.server.stop();
  busy.reset();
  const auto quick = peer.read_frame(2s);
  REQUIRE(quick);
  CHECK(quick->header.seq == 1);
  CHECK(test::decode_body<int>(quick->body) == 3);
}

TEMPLATE_TEST_CASE("a reply whose caller's deadline is near is sent at once, not held", "[async][timeout]",
                   GEERPC_ASYNC_TRANSPORTS) {
  // As above, the watchdog cannot run; a reply held now would reach its caller only after its
  // 3 ms budget, so the server must send it instead of holding it for the next request.
  one_handler_thread<TestType> t;
  auto& [s, peer] = t;
  std::optional<test::hold_scheduler> busy;
  busy.emplace(geerpc::runtime::default_runtime()->scheduler());  // the server's: it holds it
  REQUIRE(busy->held());
  t.send_quick_then_slow(1, 2, 3000);
  const auto quick = peer.read_frame(2s);
  peer.send(test::cancel_frame(2));
  busy.reset();
  REQUIRE(quick);
  CHECK(quick->header.seq == 1);
  CHECK(test::decode_body<int>(quick->body) == 3);
  const auto canceled = peer.read_frame();
  REQUIRE(canceled);
  CHECK(canceled->header.seq == 2);
}

TEMPLATE_TEST_CASE("waiting on a future can time out without affecting the call", "[async]", GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  auto slow = client.template async_call<int>("Arith.Late", Args{2, 0});
  CHECK_FALSE(slow.wait_for(20ms));
  s.arith.release.set();
  CHECK(slow.wait_for(10s));
  CHECK(slow.ready());
  CHECK(slow.get() == 2000);
}

TEMPLATE_TEST_CASE("an async call's deadline and stop_token behave like a sync call's", "[async][timeout]",
                   GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);

  auto timed = client.template async_call<int>(geerpc::with_timeout(100ms), "Arith.WaitForStop", Args{1, 2});
  auto outcome = timed.try_get();
  CHECK(outcome.code() == geerpc::errc::deadline_exceeded);

  std::stop_source source;
  auto stoppable =
      client.template async_call<int>(geerpc::with_stop_token(source.get_token()), "Arith.WaitForStop", Args{});
  REQUIRE(s.arith.started.wait_for_at_least(2));
  source.request_stop();
  CHECK(stoppable.try_get().code() == geerpc::errc::canceled);
  CHECK(s.arith.stops_seen.wait_for_at_least(2));  // the cancel frame reached the handler
}

TEMPLATE_TEST_CASE("cancel() and dropping a pending future both cancel the call on the server", "[async][cancel]",
                   GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);

  auto canceled = client.template async_call<int>("Arith.WaitForStop", Args{});
  REQUIRE(s.arith.started.wait_for_at_least(1));
  canceled.cancel();
  CHECK(canceled.try_get().code() == geerpc::errc::canceled);
  CHECK(s.arith.stops_seen.wait_for_at_least(1));

  {
    auto dropped = client.template async_call<int>("Arith.WaitForStop", Args{});
    REQUIRE(s.arith.started.wait_for_at_least(2));
  }
  CHECK(s.arith.stops_seen.wait_for_at_least(2));
  CHECK(client.template call<int>("Arith.Sum", Args{1, 2}) == 3);
}

TEMPLATE_TEST_CASE("async calls pending when the client closes fail with connection_closed", "[async][shutdown]",
                   GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  auto pending = client.template async_call<int>("Arith.WaitForStop", Args{});
  REQUIRE(s.arith.started.wait_for_at_least(1));
  client.close();
  CHECK(pending.try_get().code() == geerpc::errc::connection_closed);
  CHECK(client.template async_call<int>("Arith.Sum", Args{1, 2}).try_get().code() == geerpc::errc::connection_closed);

  geerpc::client never_connected;
  CHECK(never_connected.template async_call<int>("Arith.Sum", Args{}).try_get().code() ==
        geerpc::errc::connection_closed);
  CHECK(never_connected.template try_call<int>("Arith.Sum", Args{}).code() == geerpc::errc::connection_closed);
}

TEMPLATE_TEST_CASE("a future outliving its client still completes", "[async][shutdown]", GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s;
  test::future<int, TestType> survivor;
  {
    auto client = geerpc::dial<TestType>(s.address);
    survivor = client.template async_call<int>("Arith.Sum", Args{20, 22});
    survivor.wait();
  }
  CHECK(survivor.get() == 42);
}

// A synchronous call made while no other call is pending reads the socket itself, with the
// receiving thread parked off it (transport/threaded/client.hpp). The three tests below hold that reader to
// the receiving thread's duties.
TEMPLATE_TEST_CASE("a caller reading its own reply hands other calls' replies to their owners", "[async][concurrency]",
                   GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  geerpc::result<int> slow = 0;
  std::jthread caller([&] { slow = client.template try_call<int>("Arith.Late", Args{3, 0}); });  // nothing else pending
  REQUIRE(s.arith.started.wait_for_at_least(1));
  auto quick = client.template async_call<int>("Arith.Sum", Args{1, 2});
  const bool quick_came = quick.wait_for(2s);  // while the slow caller still waits on the socket
  s.arith.release.set();
  caller.join();
  CHECK(quick_came);
  CHECK(quick.get() == 3);
  REQUIRE(slow.has_value());
  CHECK(*slow == 3000);
}

TEMPLATE_TEST_CASE("when the caller that read for itself returns, the receiving thread reads for the calls left",
                   "[async][concurrency]", GEERPC_ASYNC_TRANSPORTS) {
  // One handler thread: the second call runs only after the first has answered, and then blocks
  // until the handle timeout answers it, long after the first caller has gone.
  test::arith_server<TestType> s({.threads = {.handlers = 1}});
  auto client = geerpc::dial<TestType>(s.address, {.timeouts = {.handle = 300ms}});
  geerpc::result<int> first = 0;
  std::jthread caller([&] { first = client.template try_call<int>("Arith.Late", Args{1, 0}); });
  REQUIRE(s.arith.started.wait_for_at_least(1));
  auto second = client.template async_call<int>("Arith.WaitForStop", Args{});
  s.arith.release.set();
  caller.join();
  REQUIRE(first.has_value());
  CHECK(*first == 1000);
  REQUIRE(second.wait_for(5s));
  CHECK(second.try_get().code() == geerpc::errc::handle_timeout);
}

TEMPLATE_TEST_CASE("a client with no call pending still sees its server close the connection", "[async][shutdown]",
                   GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  CHECK(client.template call<int>("Arith.Sum", Args{1, 2}) == 3);  // read by its caller: the receiving thread is parked
  s.server.stop();
  CHECK(test::eventually([&] { return !client.is_open(); }, 2s));
}

// On one CPU (the suite's one_cpu run) the threaded server runs a lone request of a connection
// that calls one at a time without waking a thread to read meanwhile; its lead watchdog must
// wake one when the handler turns out slow.
TEMPLATE_TEST_CASE("a slow handler of a caller that calls one at a time does not keep other connections waiting",
                   "[async][concurrency]", GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s;
  auto sequential = geerpc::dial<TestType>(s.address);
  auto other = geerpc::dial<TestType>(s.address);
  for (int i = 0; i < 40; ++i) REQUIRE(sequential.template call<int>("Arith.Sum", Args{i, 1}) == i + 1);
  auto slow = sequential.template async_call<int>("Arith.Late", Args{1, 0});
  REQUIRE(s.arith.started.wait_for_at_least(1));
  auto quick = other.template async_call<int>("Arith.Sum", Args{2, 3});
  const bool answered = quick.wait_for(2s);  // while the slow handler still blocks
  s.arith.release.set();
  CHECK(answered);
  CHECK(quick.get() == 5);
  CHECK(slow.get() == 1000);
}

// The same for a connection that pipelines its calls: on one CPU the server runs its requests
// without waking a thread to read too, as long as no handler has lately blocked; the watchdog
// must then wake one, for the requests queued behind the slow one and for other connections.
TEMPLATE_TEST_CASE("a slow handler of a pipelining caller does not keep other requests waiting", "[async][concurrency]",
                   GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s;
  auto pipelined = geerpc::dial<TestType>(s.address);
  auto other = geerpc::dial<TestType>(s.address);
  auto slow = pipelined.template async_call<int>("Arith.Late", Args{1, 0});
  std::vector<test::future<int, TestType>> behind;
  for (int i = 0; i < 4; ++i) behind.push_back(pipelined.template async_call<int>("Arith.Sum", Args{i, 1}));
  REQUIRE(s.arith.started.wait_for_at_least(1));
  auto quick = other.template async_call<int>("Arith.Sum", Args{2, 3});
  bool answered = quick.wait_for(2s);  // while the slow handler still blocks
  for (auto& call : behind) answered = call.wait_for(2s) && answered;
  s.arith.release.set();
  CHECK(answered);
  CHECK(quick.get() == 5);
  for (int i = 0; i < 4; ++i) CHECK(behind[static_cast<std::size_t>(i)].get() == i + 1);
  CHECK(slow.get() == 1000);
}

}  // namespace async_test
