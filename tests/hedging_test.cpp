// A balanced client's hedged calls and retry budget (balanced_client.hpp, client/hedging.hpp,
// client/retry_budget.hpp) over real servers, one made slow on purpose: the hedge wins and the slow
// attempt is cancelled, no hedge before the delay or for a method not marked idempotent, hedging
// after the method's p95, the budget that stops retries into servers answering busy, and deadlines.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "raw_peer.hpp"
#include "support.hpp"

namespace hedging_test {

using namespace std::chrono_literals;

namespace {

// A server that says who it is. When `slow`, its calls wait for `release` or their stop_token (up
// to 5 s). While `busy`, an interceptor refuses every call with errc::busy before any handler.
struct Replica {
  std::string name;
  std::atomic<bool> slow{false};
  std::atomic<bool> busy{false};
  std::atomic<bool> going_away{false};
  test::counter calls;
  test::counter refused;
  test::counter stops_seen;
  std::mutex mutex;
  std::condition_variable_any changed;
  bool released = false;

  std::string get(std::stop_token stop) {
    calls.add();
    if (slow) {
      std::unique_lock lock(mutex);
      changed.wait_for(lock, stop, 5s, [&] { return released; });
      if (stop.stop_requested()) stops_seen.add();
    }
    return name;
  }
  void release() {
    std::lock_guard lock(mutex);
    released = true;
    changed.notify_all();
  }
  void ping() {}
};

// "Get" is marked idempotent by the clients below, "Once" (the same handler) is not. "Ping" is not
// counted: connect_all's.
using ReplicaApi = geerpc::service<"Replica",                              //
                                   geerpc::method<"Get", &Replica::get>,   //
                                   geerpc::method<"Once", &Replica::get>,  //
                                   geerpc::method<"Ping", &Replica::ping>>;

struct fleet {
  std::vector<std::unique_ptr<Replica>> replicas;
  std::vector<std::unique_ptr<geerpc::server>> servers;
  std::vector<std::string> addresses;

  explicit fleet(int count) {
    for (int i = 0; i < count; ++i) {
      auto& r = *replicas.emplace_back(std::make_unique<Replica>());
      r.name = "n" + std::to_string(i);
      auto& s = *servers.emplace_back(std::make_unique<geerpc::server>());
      s.add<ReplicaApi>(r);
      s.use({.before = [&r](const geerpc::call_context&) -> std::optional<geerpc::error> {
        if (!r.busy && !r.going_away) return std::nullopt;
        r.refused.add();
        if (r.going_away)
          return geerpc::error{geerpc::make_error_code(geerpc::errc::going_away),
                               "rpc server: going away (on purpose)"};
        return geerpc::error{geerpc::make_error_code(geerpc::errc::busy), "rpc server: busy (on purpose)"};
      }});
      addresses.push_back(s.listen("127.0.0.1:0"));
    }
  }
  ~fleet() {
    for (auto& r : replicas) r->release();
  }
  std::shared_ptr<geerpc::static_discovery> discovery() const {
    return std::make_shared<geerpc::static_discovery>(addresses);
  }
  int requests() {  // those a handler ran, and those refused busy
    int total = 0;
    for (auto& r : replicas) total += r->calls.value() + r->refused.value();
    return total;
  }
};

// Opens the client's connection to every server (a hedge goes only to a server whose connection is
// open), without counting a call or moving round robin on.
void connect_all(geerpc::balanced_client& client) {
  REQUIRE(client.broadcast<void>(geerpc::with_timeout(5s), "Replica.Ping"));
}

// Round robin over the discovery's order: the first call goes to n0.
geerpc::balanced_options hedged_after(std::chrono::nanoseconds delay) {
  return {.mode = geerpc::select_mode::round_robin,
          .idempotent = {"Replica.Get"},
          .hedging = {.enabled = true, .delay = delay}};
}

}  // namespace

TEST_CASE("hedging: latency windows: no p95 before 16 samples, the nearest rank, the last 64 only", "[hedging]") {
  geerpc::detail::latency_windows windows;
  for (int i = 1; i <= 15; ++i) windows.record("M", std::chrono::milliseconds(i));
  CHECK_FALSE(windows.p95("M"));
  CHECK_FALSE(windows.p95("Other"));
  for (int i = 16; i <= 20; ++i) windows.record("M", std::chrono::milliseconds(i));
  CHECK(windows.p95("M") == std::chrono::milliseconds(19));  // of 1..20 ms: the 19th (95% of 20)
  for (int i = 1; i <= 64; ++i) windows.record("M", std::chrono::milliseconds(100 + i));
  CHECK(windows.p95("M") == std::chrono::milliseconds(161));  // of 101..164 ms alone: the 61st
  CHECK_FALSE(windows.p95("Other"));
}

TEST_CASE("hedging: a slow server's call is hedged to another: the first answer wins, the slow one is cancelled",
          "[hedging]") {
  fleet f(2);
  f.replicas[0]->slow = true;
  geerpc::balanced_client client(f.discovery(), hedged_after(20ms));
  connect_all(client);
  CHECK(client.call<std::string>(geerpc::with_timeout(10s), "Replica.Get") == "n1");
  CHECK(f.replicas[0]->stops_seen.wait_for_at_least(1));  // the cancel frame reached its handler
  CHECK(f.replicas[0]->calls.value() == 1);
  CHECK(f.replicas[1]->calls.value() == 1);
}

TEST_CASE("hedging: a method not marked idempotent is never hedged: its call waits for the slow server", "[hedging]") {
  fleet f(2);
  f.replicas[0]->slow = true;
  geerpc::balanced_client client(f.discovery(), hedged_after(1ms));
  const auto r = client.try_call<std::string>(geerpc::with_timeout(300ms), "Replica.Once");
  CHECK(r.code() == geerpc::errc::deadline_exceeded);  // a hedge would have had n1's answer long before
  CHECK(f.replicas[1]->calls.value() == 0);
}

TEST_CASE("hedging: a call answered before the delay sends one request", "[hedging]") {
  fleet f(2);
  geerpc::balanced_client client(f.discovery(), hedged_after(10s));
  for (int i = 0; i < 20; ++i) CHECK(client.call<std::string>("Replica.Get") == (i % 2 == 0 ? "n0" : "n1"));
  CHECK(f.requests() == 20);
}

TEST_CASE("hedging: after the method's recent p95: no hedge until enough calls are measured, then one", "[hedging]") {
  fleet f(2);
  auto options = hedged_after(0ns);
  options.hedging.min_delay = 1ms;
  geerpc::balanced_client client(f.discovery(), options);
  f.replicas[0]->slow = true;
  f.replicas[0]->release();  // slow, but released: it answers at once, until `released` is cleared
  for (int i = 0; i < 16; ++i) CHECK(client.call<std::string>("Replica.Get") == (i % 2 == 0 ? "n0" : "n1"));
  CHECK(f.requests() == 16);  // unmeasured: not hedged
  {
    std::lock_guard lock(f.replicas[0]->mutex);
    f.replicas[0]->released = false;
  }
  CHECK(client.call<std::string>(geerpc::with_timeout(10s), "Replica.Get") == "n1");  // n0's turn, hedged
  CHECK(f.replicas[0]->stops_seen.wait_for_at_least(1));
}

TEST_CASE("hedging: latency windows: the p95 is kept, and worked out again after recompute_every samples",
          "[hedging]") {
  using geerpc::detail::latency_windows;
  latency_windows windows;
  for (std::size_t i = 0; i < latency_windows::enough; ++i) windows.record("M", 1ms);
  CHECK(windows.p95("M") == 1ms);
  // One short of a recompute: the p95 kept, though the window's own is now 50 ms.
  for (std::size_t i = 0; i + 1 < latency_windows::recompute_every; ++i) windows.record("M", 50ms);
  CHECK(windows.p95("M") == 1ms);
  windows.record("M", 50ms);
  CHECK(windows.p95("M") == 50ms);
  windows.record("Other", 1ms);  // each method's own
  CHECK(windows.p95("M") == 50ms);
}

TEST_CASE("hedging: a single server's failure is its own error, not blamed on the retry budget", "[hedging]") {
  fleet f(1);
  f.replicas[0]->busy = true;
  // Two tokens: the first failure leaves half, and the budget allows no retry from then on.
  auto options = hedged_after(10s);
  options.retry_budget = {.max_tokens = 2, .token_ratio = 0.0};
  geerpc::balanced_client client(f.discovery(), options);
  for (const char* method : {"Replica.Once", "Replica.Once", "Replica.Get", "Replica.Get"}) {
    INFO(method);
    const auto r = client.try_call<std::string>(geerpc::with_timeout(5s), method);
    CHECK(r.code() == geerpc::errc::busy);
    CHECK(r.message() == "rpc server: busy (on purpose)");
  }
  CHECK(f.requests() == 4);
}

TEST_CASE("hedging: asynchronous successes refill the retry budget, as synchronous ones do", "[hedging]") {
  fleet f(2);
  for (auto& r : f.replicas) r->busy = true;
  geerpc::balanced_client client(f.discovery(), {.mode = geerpc::select_mode::round_robin,
                                                 .retry_budget = {.max_tokens = 10, .token_ratio = 1.0}});
  // Tokens 10 -> 8 -> 6 -> 5: the third call is not retried, and the budget is spent.
  for (int i = 0; i < 3; ++i) CHECK(client.try_call<std::string>("Replica.Once").code() == geerpc::errc::busy);
  CHECK(f.requests() == 5);
  for (auto& r : f.replicas) r->busy = false;
  // Each success puts a token back (its hook runs before its future is ready): 5 -> 10.
  for (int i = 0; i < 5; ++i) CHECK(client.async_call<std::string>("Replica.Once").get().size() == 2);
  for (auto& r : f.replicas) r->busy = true;
  const int before = f.requests();
  CHECK(client.try_call<std::string>("Replica.Once").code() == geerpc::errc::busy);
  CHECK(f.requests() - before == 2);  // refilled: retried on the other server
}

TEST_CASE("hedging: asynchronous busy answers take tokens, as synchronous ones do", "[hedging]") {
  fleet f(2);
  for (auto& r : f.replicas) r->busy = true;
  geerpc::balanced_client client(f.discovery(), {.mode = geerpc::select_mode::round_robin,
                                                 .retry_budget = {.max_tokens = 10, .token_ratio = 0.0}});
  // Each busy answer takes a token (its hook runs before its future is ready): 10 -> 5.
  for (int i = 0; i < 5; ++i)
    CHECK(client.async_call<std::string>("Replica.Once").try_get().code() == geerpc::errc::busy);
  CHECK(f.requests() == 5);
  // 5 -> 4, no more than half: the synchronous call is not retried on the other server.
  const auto r = client.try_call<std::string>("Replica.Once");
  CHECK(r.code() == geerpc::errc::busy);
  CHECK(r.message().find("retry budget is spent") != std::string::npos);
  CHECK(f.requests() == 6);
}

TEST_CASE("hedging: every server tried, the budget refusing the last failure: the server's own error", "[hedging]") {
  fleet f(2);
  for (auto& r : f.replicas) r->busy = true;
  geerpc::balanced_client client(f.discovery(), {.mode = geerpc::select_mode::round_robin,
                                                 .retry_budget = {.max_tokens = 11, .token_ratio = 0.0}});
  // 11 -> 9 -> 7; the third call: 7 -> 6 (moves on), 6 -> 5 (refused, but no server is left).
  for (int i = 0; i < 2; ++i) CHECK(client.try_call<std::string>("Replica.Once").code() == geerpc::errc::busy);
  CHECK(f.requests() == 4);
  const auto r = client.try_call<std::string>("Replica.Once");
  CHECK(r.code() == geerpc::errc::busy);
  CHECK(r.message() == "rpc server: busy (on purpose)");
  CHECK(f.requests() == 6);
  // 5 -> 4: the next call's first failure is refused with a server untried: the budget's message.
  const auto s = client.try_call<std::string>("Replica.Once");
  CHECK(s.message().find("retry budget is spent") != std::string::npos);
  CHECK(f.requests() == 7);
}

// A smoke test: the call fails with its connection as the client ends. (A failure on the timer
// thread, which the client's end does not join, is what the hook's own hold on the budget is for.)
TEST_CASE("hedging: an asynchronous call may complete after its balanced client is gone", "[hedging]") {
  fleet f(1);
  f.replicas[0]->slow = true;
  std::optional<geerpc::balanced_client::future<std::string>> pending;
  {
    geerpc::balanced_client client(f.discovery());
    pending.emplace(client.async_call<std::string>("Replica.Get"));
    REQUIRE(f.replicas[0]->calls.wait_for_at_least(1));
  }  // its connection closed as the client ended: the call completed, its hook holding the budget
  CHECK(pending->try_get().code() == geerpc::errc::connection_closed);
}

TEST_CASE("hedging: every server busy: the retry budget stops the retries, and successes refill it", "[hedging]") {
  fleet f(2);
  for (auto& r : f.replicas) r->busy = true;
  // 10 tokens, each success puts one back; a retry only while more than 5 are left.
  geerpc::balanced_client client(f.discovery(), {.mode = geerpc::select_mode::round_robin,
                                                 .retry_budget = {.max_tokens = 10, .token_ratio = 1.0}});
  std::vector<geerpc::result<std::string>> outcomes;
  for (int i = 0; i < 10; ++i) outcomes.push_back(client.try_call<std::string>("Replica.Once"));
  for (const auto& r : outcomes) CHECK(r.code() == geerpc::errc::busy);
  // Calls 1 and 2 try both servers (tokens 10 -> 6), then each failure leaves 5 or fewer: one
  // request a call. Without the budget: 20.
  CHECK(f.requests() == 12);
  CHECK(outcomes.back().message().find("retry budget is spent") != std::string::npos);
  CHECK(outcomes.front().message().find("retry budget") == std::string::npos);

  for (auto& r : f.replicas) r->busy = false;
  for (int i = 0; i < 10; ++i) CHECK(client.call<std::string>("Replica.Once").size() == 2);
  for (auto& r : f.replicas) r->busy = true;
  const int before = f.requests();
  CHECK(client.try_call<std::string>("Replica.Once").code() == geerpc::errc::busy);
  CHECK(f.requests() - before == 2);  // refilled: retried on the other server
}

TEST_CASE("hedging: hedges are sent only while the retry budget is more than half full", "[hedging]") {
  fleet f(2);
  auto options = hedged_after(1ms);
  options.retry_budget = {.max_tokens = 2, .token_ratio = 0.0};
  geerpc::balanced_client client(f.discovery(), options);
  connect_all(client);
  for (auto& r : f.replicas) r->busy = true;
  CHECK(client.try_call<std::string>("Replica.Once").code() == geerpc::errc::busy);  // 2 -> 1 token: half
  for (auto& r : f.replicas) {
    r->busy = false;
    r->slow = true;
  }
  const int before = f.requests();
  CHECK(client.try_call<std::string>(geerpc::with_timeout(300ms), "Replica.Get").code() ==
        geerpc::errc::deadline_exceeded);
  CHECK(f.requests() - before == 1);  // not hedged
}

TEST_CASE("hedging: hedges cost no budget: after many, a busy server's call still moves on", "[hedging]") {
  fleet f(2);
  geerpc::balanced_client client(f.discovery(), hedged_after(5ms));  // the default budget
  connect_all(client);
  f.replicas[0]->slow = true;
  for (int i = 0; i < 8; ++i) CHECK(client.call<std::string>(geerpc::with_timeout(5s), "Replica.Get") == "n1");
  CHECK(f.replicas[0]->calls.value() >= 4);  // n0's turns, hedged to n1: a charged hedge would have spent 4 tokens
  f.replicas[0]->slow = false;
  f.replicas[0]->busy = true;
  for (int i = 0; i < 4; ++i) CHECK(client.call<std::string>(geerpc::with_timeout(5s), "Replica.Once") == "n1");
}

TEST_CASE("hedging: a hedge never dials: a mute second server does not hold the caller past the first answer",
          "[hedging]") {
  fleet f(1);
  test::listener mute;  // completes TCP connects, never says a word: a dial to it lasts its timeout
  auto options = hedged_after(20ms);
  options.client.timeouts.connect = 30s;
  geerpc::balanced_client client(
      std::make_shared<geerpc::static_discovery>(std::vector<std::string>{f.addresses[0], mute.address()}), options);
  f.replicas[0]->slow = true;
  std::jthread answer([&] {  // n0 answers well after the hedge's delay
    f.replicas[0]->calls.wait_for_at_least(1);
    std::this_thread::sleep_for(200ms);
    f.replicas[0]->release();
  });
  const auto started = std::chrono::steady_clock::now();
  CHECK(client.call<std::string>(geerpc::with_timeout(10s), "Replica.Get") == "n0");
  CHECK(std::chrono::steady_clock::now() - started < 5s);  // a dial on the caller's thread: 10 s, the deadline
}

TEST_CASE("hedging: a server going away (a drain) costs no budget: the call moves on", "[hedging]") {
  fleet f(2);
  // One token to spare: a charged failure would leave half, and the call would not move on.
  const geerpc::balanced_options options{.mode = geerpc::select_mode::round_robin,
                                         .idempotent = {"Replica.Get"},
                                         .retry_budget = {.max_tokens = 2, .token_ratio = 0.0},
                                         .hedging = {.enabled = true, .delay = 10s}};
  f.replicas[0]->going_away = true;
  geerpc::balanced_client plain(f.discovery(), options);
  CHECK(plain.call<std::string>("Replica.Once") == "n1");
  geerpc::balanced_client hedging(f.discovery(), options);
  CHECK(hedging.call<std::string>("Replica.Get") == "n1");
  CHECK(f.replicas[0]->refused.value() == 2);
}

TEST_CASE("hedging: a hedged call answered busy moves to the other server", "[hedging]") {
  fleet f(2);
  geerpc::balanced_client client(f.discovery(), hedged_after(10s));
  f.replicas[0]->busy = true;
  CHECK(client.call<std::string>(geerpc::with_timeout(5s), "Replica.Get") == "n1");
  CHECK(f.replicas[0]->refused.value() == 1);
}

TEST_CASE("hedging: the caller's stop_token cancels every attempt of a hedged call", "[hedging]") {
  fleet f(2);
  for (auto& r : f.replicas) r->slow = true;
  geerpc::balanced_client client(f.discovery(), hedged_after(5ms));
  connect_all(client);
  std::stop_source stop;
  std::jthread stopper([&] {
    for (auto& r : f.replicas) r->calls.wait_for_at_least(1);  // both attempts running
    stop.request_stop();
  });
  const auto r =
      client.try_call<std::string>(geerpc::with_timeout(10s).with_stop_token(stop.get_token()), "Replica.Get");
  CHECK(r.code() == geerpc::errc::canceled);
  for (auto& replica : f.replicas) CHECK(replica->stops_seen.wait_for_at_least(1));
}

TEST_CASE("hedging: hedged calls from several threads at once, their attempts racing, all succeed", "[hedging]") {
  fleet f(3);
  geerpc::balanced_client client(f.discovery(),
                                 {.mode = geerpc::select_mode::least_inflight,
                                  .idempotent = {"Replica.Get"},
                                  .retry_budget = {.enabled = false},
                                  .hedging = {.enabled = true, .delay = 1ns, .max_attempts = 3}});  // at once
  connect_all(client);
  test::counter succeeded;
  {
    std::vector<std::jthread> callers;
    for (int t = 0; t < 4; ++t)
      callers.emplace_back([&] {
        for (int i = 0; i < 100; ++i)
          if (client.try_call<std::string>(geerpc::with_timeout(10s), "Replica.Get")) succeeded.add();
      });
  }
  CHECK(succeeded.value() == 400);
  CHECK(f.requests() > 400);  // hedged indeed
}

TEST_CASE("hedging: after the method's p95, a call answered within it is not hedged", "[hedging]") {
  fleet f(2);
  auto options = hedged_after(0ns);
  options.hedging.min_delay = 1ms;
  geerpc::balanced_client client(f.discovery(), options);
  for (auto& r : f.replicas) r->slow = true;  // each call held until released: 16 measured together
  test::counter measured;
  {
    std::vector<std::jthread> callers;
    for (int i = 0; i < 16; ++i)
      callers.emplace_back([&] {
        if (client.try_call<std::string>(geerpc::with_timeout(10s), "Replica.Get")) measured.add();
      });
    for (auto& r : f.replicas) CHECK(r->calls.wait_for_at_least(8));
    std::this_thread::sleep_for(400ms);  // the p95: at least this
    for (auto& r : f.replicas) r->release();
  }
  CHECK(measured.value() == 16);
  for (auto& r : f.replicas) {
    std::lock_guard lock(r->mutex);
    r->released = false;
  }
  const int before = f.requests();
  std::jthread answer([&] {  // answers well within the p95, well after min_delay
    f.replicas[0]->calls.wait_for_at_least(9);
    std::this_thread::sleep_for(30ms);
    f.replicas[0]->release();
  });
  CHECK(client.call<std::string>(geerpc::with_timeout(10s), "Replica.Get") == "n0");
  CHECK(f.requests() - before == 1);
}
TEST_CASE("hedging: out-of-range options: a huge max_attempts is taken as 5, a NaN token_ratio as 0", "[hedging]") {
  fleet f(2);
  f.replicas[0]->slow = true;
  auto options = hedged_after(1ms);
  options.hedging.max_attempts = std::numeric_limits<std::size_t>::max();  // reserved for: must not throw
  options.retry_budget.token_ratio = std::numeric_limits<double>::quiet_NaN();
  geerpc::balanced_client client(f.discovery(), options);
  connect_all(client);
  CHECK(client.call<std::string>(geerpc::with_timeout(10s), "Replica.Get") == "n1");
  CHECK(f.replicas[0]->stops_seen.wait_for_at_least(1));
  CHECK(f.requests() == 2);
}

TEST_CASE("hedging: every server slow: the call ends by its deadline, no attempt after it", "[hedging]") {
  fleet f(2);
  for (auto& r : f.replicas) r->slow = true;
  auto options = hedged_after(1ms);
  options.hedging.max_attempts = 3;  // more than the servers: the third finds none untried
  geerpc::balanced_client client(f.discovery(), options);
  connect_all(client);
  const auto started = std::chrono::steady_clock::now();
  const auto r = client.try_call<std::string>(geerpc::with_timeout(300ms), "Replica.Get");
  CHECK(r.code() == geerpc::errc::deadline_exceeded);
  CHECK(std::chrono::steady_clock::now() - started < 4s);  // not the handlers' 5 s: bounded by the deadline
  CHECK(f.replicas[0]->stops_seen.wait_for_at_least(1));
  CHECK(f.replicas[1]->stops_seen.wait_for_at_least(1));
  CHECK(f.requests() == 2);
}

}  // namespace hedging_test
