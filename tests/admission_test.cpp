// Deadline-aware admission (server/admission.hpp): a request whose deadline passed while it waited
// for a handler thread, or that waited longer than timeouts.max_queue_time, or whose budget had
// run out when it was read, is answered without running its handler, and counted.
//
// Each server has one handler thread, held by Arith.Late (blocked on the test's event), and a raw
// peer sends a second Arith.Late behind it in the same write: on the blocking transport both then
// come from one read and the second waits for the connection's thread; on the threaded one it
// waits in the pool's queue. The test sees it wait (its bytes counted as queued), lets the clock
// pass a known time beyond its limit (a sleep until a time point already past the limit, not a
// guess at how long something takes), then releases the first handler. Arith's `started` counts
// the handlers that ran: the second never does.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "catch.hpp"
#include "support.hpp"

namespace admission_test {

using namespace std::chrono_literals;
using test::Args;
using clock = std::chrono::steady_clock;

namespace {

constexpr auto status_of = [](geerpc::errc code) { return static_cast<std::uint8_t>(code); };

using test::number_after;

// The number after `"key":` in the first recent call of the page's JSON whose outcome is `outcome`
// (its record: {"finished_unix_ms":..., "outcome":...}); -1 when there is none.
long long recent_call_field(const std::string& json, std::string_view outcome, std::string_view key) {
  const auto at = json.find("\"outcome\":\"" + std::string(outcome) + "\"");
  if (at == std::string::npos) return -1;
  const auto record = json.rfind("{\"finished_unix_ms\":", at);
  if (record == std::string::npos) return -1;
  return number_after(json.substr(record), "", key);
}

// A server with one handler thread and a runtime of its own (whose scheduler a test may hold), and
// a raw peer past the handshake (asking for `handle_timeout`, 0: none).
template <class Transport>
struct one_thread_server {
  std::shared_ptr<geerpc::runtime> runtime = std::make_shared<geerpc::runtime>();
  test::arith_server<Transport> s;
  test::raw_peer peer{s.address};

  explicit one_thread_server(geerpc::server_options opts = {}, std::chrono::microseconds handle_timeout = 0us)
      : s(with_one_thread(std::move(opts), runtime)) {
    peer.send_hello(handle_timeout);
    REQUIRE(peer.read_hello_reply());
  }
  static geerpc::server_options with_one_thread(geerpc::server_options opts,
                                                const std::shared_ptr<geerpc::runtime>& runtime) {
    opts.threads.handlers = 1;
    opts.threads.max_handlers = 1;  // so that the second request waits
    opts.runtime = runtime;
    return opts;
  }

  // Late(1) holding the only thread, and Late(2) with `budget_us` behind it, in one write; returns
  // once the first handler runs and the second waits, at a time after the second was read.
  clock::time_point send_blocked_then_waiting(std::uint64_t budget_us) {
    std::vector<std::byte> burst = test::request_frame(1, "Arith.Late", Args{1, 0});
    const auto waiting = test::request_frame(2, "Arith.Late", Args{2, 0}, budget_us);
    burst.insert(burst.end(), waiting.begin(), waiting.end());
    peer.send(burst);
    REQUIRE(s.arith.started.wait_for_at_least(1));
    // The first one's bytes stopped counting when it started: what is queued is the second's.
    REQUIRE(test::eventually([&] { return s.server.queued_request_bytes() > 0; }));
    return clock::now();
  }

  std::string stats() { return test::http_get(s.address, "/debug/geerpc/stats.json"); }
  long long turned_away(std::string_view limit) { return number_after(stats(), "\"turned_away\":", limit); }
  long long of_late(std::string_view key) { return number_after(stats(), "{\"name\":\"Arith.Late\"", key); }
};

// Reads the answers to Late(1) (1000) and to Late(2), which must be `code` with a text that starts
// with `text`; the handler of Late(2) never ran.
template <class Server>
void check_second_refused(Server& t, geerpc::errc code, std::string_view text) {
  auto first = t.peer.read_frame();
  REQUIRE(first);
  CHECK(first->header.seq == 1);
  CHECK(test::decode_body<int>(first->body) == 1000);
  auto second = t.peer.read_frame();
  REQUIRE(second);
  CHECK(second->header.seq == 2);
  CHECK(second->header.status == status_of(code));
  CHECK(second->text.substr(0, text.size()) == text);
  CHECK(t.s.arith.started.value() == 1);
}

}  // namespace

TEMPLATE_TEST_CASE(
    "admission: a caller's deadline that passes before a handler thread is free: "
    "deadline_exceeded at the start, the handler never runs, counted",
    "[admission]", GEERPC_TRANSPORTS) {
  one_thread_server<TestType> t;
  // The scheduler held: the deadline's timer cannot answer first, only the check at the start can.
  std::optional<test::hold_scheduler> held(std::in_place, t.runtime->scheduler());
  REQUIRE(held->held());
  const auto read_by = t.send_blocked_then_waiting(20'000);  // 20 ms
  std::this_thread::sleep_until(read_by + 30ms);             // past the deadline, whenever it was read
  t.s.arith.release.set();
  check_second_refused(t, geerpc::errc::deadline_exceeded,
                       "rpc server: the caller's deadline passed before the handler started, after ");
  held.reset();
  CHECK(test::eventually([&] { return t.turned_away("deadline_before_start") == 1; }));
  CHECK(test::eventually([&] { return t.of_late("expired_before_start") == 1; }));
  CHECK(t.of_late("shed_by_queue_time") == 0);
  CHECK(number_after(t.stats(), "{\"name\":\"Arith.Late\"", "deadline_exceeded") == 1);
}

TEMPLATE_TEST_CASE(
    "admission: a deadline whose timer answers while the request waits: the handler never runs, "
    "counted",
    "[admission]", GEERPC_TRANSPORTS) {
  one_thread_server<TestType> t;
  t.send_blocked_then_waiting(20'000);
  // The timer answers while the first handler still holds the thread.
  auto second = t.peer.read_frame();
  REQUIRE(second);
  CHECK(second->header.seq == 2);
  CHECK(second->header.status == status_of(geerpc::errc::deadline_exceeded));
  t.s.arith.release.set();
  auto first = t.peer.read_frame();
  REQUIRE(first);
  CHECK(first->header.seq == 1);
  CHECK(test::eventually([&] { return t.turned_away("deadline_before_start") == 1; }));
  CHECK(test::eventually([&] { return t.of_late("expired_before_start") == 1; }));
  CHECK(t.s.arith.started.value() == 1);
}

TEMPLATE_TEST_CASE(
    "admission: the handle timeout that passes before a handler thread is free: handle_timeout at "
    "the start, the handler never runs",
    "[admission]", GEERPC_TRANSPORTS) {
  one_thread_server<TestType> t({}, 20ms);  // the connection asks for a 20 ms handle timeout
  // The scheduler held: neither request's timer can answer, only the check at the start can.
  std::optional<test::hold_scheduler> held(std::in_place, t.runtime->scheduler());
  REQUIRE(held->held());
  const auto read_by = t.send_blocked_then_waiting(0);
  std::this_thread::sleep_until(read_by + 30ms);
  t.s.arith.release.set();
  // The first one started in time: its handler's answer goes out (its timer could not fire).
  check_second_refused(t, geerpc::errc::handle_timeout,
                       "rpc server: request handle timeout: expect within 20ms; it passed before the handler started, "
                       "after ");
  held.reset();
  CHECK(test::eventually([&] { return t.turned_away("deadline_before_start") == 1; }));
  CHECK(test::eventually([&] { return t.of_late("expired_before_start") == 1; }));
}

TEMPLATE_TEST_CASE(
    "admission: a request that waited longer than max_queue_time: busy, the handler never runs, "
    "counted",
    "[admission]", GEERPC_TRANSPORTS) {
  one_thread_server<TestType> t({.timeouts = {.max_queue_time = 20ms}});
  const auto read_by = t.send_blocked_then_waiting(10'000'000);  // the caller would wait 10 s
  std::this_thread::sleep_until(read_by + 30ms);
  t.s.arith.release.set();
  check_second_refused(t, geerpc::errc::busy, "rpc server: busy: waited ");
  CHECK(test::eventually([&] { return t.turned_away("max_queue_time_ns") == 1; }));
  CHECK(test::eventually([&] { return t.of_late("shed_by_queue_time") == 1; }));
  CHECK(t.of_late("expired_before_start") == 0);
  CHECK(t.turned_away("deadline_before_start") == 0);
  // The limit in force, on the page's JSON.
  CHECK(number_after(t.stats(), "\"limits\":", "max_queue_time_ns") == 20'000'000);
  // Among the recent failures, the shed call spent no time in a handler: it never had one.
  CHECK(recent_call_field(t.stats(), "busy", "handler_ns") == 0);
}

TEMPLATE_TEST_CASE("admission: without max_queue_time a request runs however long it waited", "[admission]",
                   GEERPC_TRANSPORTS) {
  one_thread_server<TestType> t;
  const auto read_by = t.send_blocked_then_waiting(10'000'000);
  std::this_thread::sleep_until(read_by + 30ms);
  t.s.arith.release.set();
  for (std::uint64_t seq = 1; seq <= 2; ++seq) {
    auto answer = t.peer.read_frame();
    REQUIRE(answer);
    CHECK(answer->header.seq == seq);
    CHECK(answer->header.status == 0);
  }
  CHECK(t.s.arith.started.value() == 2);
}

TEMPLATE_TEST_CASE("admission: a request whose budget had run out when it was read is answered at once, not run",
                   "[admission]", GEERPC_TRANSPORTS) {
  one_thread_server<TestType> t;
  t.s.arith.release.set();                                           // a handler that ran would answer at once
  t.peer.send(test::request_frame(7, "Arith.Late", Args{7, 0}, 1));  // 1 µs: what a passed deadline is sent as
  auto answer = t.peer.read_frame();
  REQUIRE(answer);
  CHECK(answer->header.seq == 7);
  CHECK(answer->header.status == status_of(geerpc::errc::deadline_exceeded));
  CHECK(answer->text == "rpc server: the caller's deadline passed before the request was read");
  CHECK(t.s.arith.started.value() == 0);
  CHECK(test::eventually([&] { return t.turned_away("deadline_before_start") == 1; }));
  CHECK(test::eventually([&] { return t.of_late("expired_before_start") == 1; }));
  // The connection goes on: a call with time left runs.
  t.peer.send(test::request_frame(8, "Arith.Late", Args{8, 0}, 1'000'000));
  auto next = t.peer.read_frame();
  REQUIRE(next);
  CHECK(next->header.status == 0);
  CHECK(t.s.arith.started.value() == 1);
}

TEMPLATE_TEST_CASE(
    "admission: a seq in flight sent again with a run-out budget closes the connection unanswered, "
    "as any reused seq",
    "[admission]", GEERPC_TRANSPORTS) {
  one_thread_server<TestType> t;
  // In one write, so that the second is read while the first is in flight, on every transport.
  std::vector<std::byte> burst = test::request_frame(5, "Arith.Late", Args{5, 0});
  const auto again = test::request_frame(5, "Arith.Late", Args{6, 0}, 1);
  burst.insert(burst.end(), again.begin(), again.end());
  t.peer.send(burst);
  CHECK_FALSE(t.peer.read_frame(2s));  // no answer to either: not the second's deadline_exceeded
  CHECK(t.peer.closed_by_peer());
  t.s.arith.release.set();
}

TEMPLATE_TEST_CASE("admission: a client shed by max_queue_time gets errc::busy", "[admission]",
                   GEERPC_ASYNC_TRANSPORTS) {
  one_thread_server<TestType> t({.timeouts = {.max_queue_time = 20ms}});
  auto client = geerpc::dial<TestType>(t.s.address);
  auto blocked = client.template async_call<int>("Arith.Late", Args{1, 0});
  REQUIRE(t.s.arith.started.wait_for_at_least(1));
  auto waiting = client.template async_call<int>(geerpc::with_timeout(10s), "Arith.Late", Args{2, 0});
  REQUIRE(test::eventually([&] { return t.s.server.queued_request_bytes() > 0; }));
  std::this_thread::sleep_until(clock::now() + 30ms);
  t.s.arith.release.set();
  CHECK(blocked.get() == 1000);
  const auto shed = waiting.try_get();
  CHECK(shed.code() == geerpc::errc::busy);
  CHECK(t.s.arith.started.value() == 1);
}

}  // namespace admission_test
