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
#include <vector>

#include "catch.hpp"
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
};

// "Get" is marked idempotent by the clients below, "Once" (the same handler) is not.
using ReplicaApi = geerpc::service<"Replica",                             //
                                   geerpc::method<"Get", &Replica::get>,  //
                                   geerpc::method<"Once", &Replica::get>>;

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
        if (!r.busy) return std::nullopt;
        r.refused.add();
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

// Round robin over the discovery's order: the first call goes to n0.
geerpc::balanced_options hedged_after(std::chrono::nanoseconds delay) {
  return {.mode = geerpc::select_mode::round_robin,
          .idempotent = {"Replica.Get"},
          .hedging = {.enabled = true, .delay = delay}};
}

}  // namespace

TEST_CASE("hedging: a slow server's call is hedged to another: the first answer wins, the slow one is cancelled",
          "[hedging]") {
  fleet f(2);
  f.replicas[0]->slow = true;
  geerpc::balanced_client client(f.discovery(), hedged_after(20ms));
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

TEST_CASE("hedging: a hedge spends from the retry budget: with it spent, slow calls are not hedged", "[hedging]") {
  fleet f(2);
  auto options = hedged_after(1ms);
  options.retry_budget = {.max_tokens = 2, .token_ratio = 0.0};  // one hedge: 2 -> 1, then none
  geerpc::balanced_client client(f.discovery(), options);
  f.replicas[0]->slow = true;
  CHECK(client.call<std::string>(geerpc::with_timeout(10s), "Replica.Get") == "n1");
  // n0's turn again (round robin counted the hedge's choice too): not hedged this time.
  const auto r = client.try_call<std::string>(geerpc::with_timeout(300ms), "Replica.Get");
  CHECK(r.code() == geerpc::errc::deadline_exceeded);
  CHECK(f.replicas[1]->calls.value() == 1);
}

TEST_CASE("hedging: a hedge with no other server to go to costs no budget", "[hedging]") {
  fleet f(2);
  f.replicas[0]->slow = true;
  auto listed = std::make_shared<geerpc::static_discovery>(std::vector<std::string>{f.addresses[0]});
  auto options = hedged_after(1ms);
  options.retry_budget = {.max_tokens = 2, .token_ratio = 0.0};  // one hedge, if none is wasted
  geerpc::balanced_client client(listed, options);
  CHECK(client.try_call<std::string>(geerpc::with_timeout(200ms), "Replica.Get").code() ==
        geerpc::errc::deadline_exceeded);  // n0 alone: its hedge found no server
  listed->update(f.addresses);
  // Whichever of the two calls goes to n0 first is hedged to n1 with the token still there.
  CHECK(client.call<std::string>(geerpc::with_timeout(5s), "Replica.Get") == "n1");
  CHECK(client.call<std::string>(geerpc::with_timeout(5s), "Replica.Get") == "n1");
  CHECK(f.replicas[0]->stops_seen.wait_for_at_least(2));  // the first call's deadline, the hedged one's cancel
}

TEST_CASE("hedging: out-of-range options: a huge max_attempts is taken as 5, a NaN token_ratio as 0", "[hedging]") {
  fleet f(2);
  f.replicas[0]->slow = true;
  auto options = hedged_after(1ms);
  options.hedging.max_attempts = std::numeric_limits<std::size_t>::max();  // reserved for: must not throw
  options.retry_budget.token_ratio = std::numeric_limits<double>::quiet_NaN();
  geerpc::balanced_client client(f.discovery(), options);
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
  const auto started = std::chrono::steady_clock::now();
  const auto r = client.try_call<std::string>(geerpc::with_timeout(300ms), "Replica.Get");
  CHECK(r.code() == geerpc::errc::deadline_exceeded);
  CHECK(std::chrono::steady_clock::now() - started < 4s);  // not the handlers' 5 s: bounded by the deadline
  CHECK(f.replicas[0]->stops_seen.wait_for_at_least(1));
  CHECK(f.replicas[1]->stops_seen.wait_for_at_least(1));
  CHECK(f.requests() == 2);
}

}  // namespace hedging_test
