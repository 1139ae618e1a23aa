// What the inheritance tests share: a hop of a chain of servers in this process (A -> B -> C), its
// handlers recording what each call saw of the one before it, and a wait on a stop token.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support.hpp"

namespace test::inherit {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

// What a hop's handler saw of its call.
struct sighting {
  std::optional<clock::time_point> handler_deadline;  // its own
  std::optional<clock::time_point> passed_on;         // context::from(ctx).deadline()
  std::optional<std::string> traceparent, secret;
};

// Blocks until `stop` fires, or the bound (which only catches a test that fails): whether it fired.
inline bool wait_for(const std::stop_token& stop, std::chrono::milliseconds bound = 5s) {
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  return cv.wait_for(lock, stop, bound, [] { return false; }) || stop.stop_requested();
}

template <class Transport>
inline constexpr bool supports_async = Transport::supports_async;

// One hop of a chain: Relay calls the next hop's Relay (if any) and then waits for its own call's
// stop token, made lazily (no handler here takes a std::stop_token).
template <class Transport>
struct hop {
  std::optional<geerpc::basic_client<Transport>> next;
  std::optional<geerpc::context> nested;  // the context Relay's nested call is given, when set
  bool nested_async = false;              // Relay's nested call is an async_call (threaded only)
  test::counter started, stopped, ended;  // Relay began, saw its stop token fire, returned
  std::mutex mutex;
  std::vector<sighting> seen;
  std::optional<int> nested_code;  // the error code of the last nested call
  // Read once Relay has ended (ended counts it), under the lock it was written under.
  std::optional<int> last_nested_code() {
    std::lock_guard lock(mutex);
    return nested_code;
  }

  int relay(int x, const geerpc::call_context& ctx) {
    started.add();
    note(ctx);
    // When this hop is told: the stop token's callback runs when it fires (or here, if it has).
    const std::stop_token stop = ctx.stop_token();
    std::stop_callback tell(stop, [&] { told_at = clock::now().time_since_epoch().count(); });
    if (next) {
      const int code = nested_call(x);
      std::lock_guard lock(mutex);
      nested_code = code;
    }
    if (wait_for(stop)) stopped.add();
    ended.add();
    return x;
  }
  // When Relay's stop token last fired, in ticks of the clock (0: never).
  std::atomic<clock::rep> told_at{0};
  clock::time_point told() const { return clock::time_point(clock::duration(told_at.load())); }
  int nested_call(int x) {
    if constexpr (supports_async<Transport>) {
      if (nested_async) {
        auto future = next->template async_call<int>(nested.value_or(geerpc::context{}), "Hop.Relay", x);
        auto r = future.try_get();
        return r ? 0 : r.code().value();
      }
    }
    auto r =
        nested ? next->template try_call<int>(*nested, "Hop.Relay", x) : next->template try_call<int>("Hop.Relay", x);
    return r ? 0 : r.code().value();
  }
  // Waits for the test's word, then asks for its stop token for the first time: whether it had fired.
  test::event release;
  std::atomic<int> late_fired{-1};
  int late(const geerpc::call_context& ctx) {
    started.add();
    (void)release.wait();
    late_fired = ctx.stop_token().stop_requested() ? 1 : 0;
    ended.add();
    return 1;
  }
  // Answers at once with what it saw.
  int probe(const geerpc::call_context& ctx) {
    note(ctx);
    return 1;
  }
  void note(const geerpc::call_context& ctx) {
    sighting s{ctx.handler_deadline(), geerpc::context::from(ctx).deadline(), {}, {}};
    if (auto v = ctx.metadata("traceparent")) s.traceparent = std::string(*v);
    if (auto v = ctx.metadata("secret")) s.secret = std::string(*v);
    std::lock_guard lock(mutex);
    seen.push_back(std::move(s));
  }
  sighting last() {
    std::lock_guard lock(mutex);
    return seen.empty() ? sighting{} : seen.back();
  }
};

template <class Transport>
using HopApi =
    geerpc::service<"Hop", geerpc::method<"Relay", &hop<Transport>::relay>,
                    geerpc::method<"Probe", &hop<Transport>::probe>, geerpc::method<"Late", &hop<Transport>::late>>;

// A hop served on loopback.
template <class Transport>
struct hop_server {
  hop<Transport> handlers;
  geerpc::basic_server<Transport> server;
  std::string address;
  explicit hop_server(geerpc::server_options opts = {}) : server(test::with_test_io_threads(std::move(opts))) {
    server.template add<HopApi<Transport>>(handlers);
    address = server.listen("127.0.0.1:0");
  }
};

// A -> B -> C, each calling the next over its own connection.
template <class Transport>
struct chain {
  hop_server<Transport> a, b, c;
  chain() {
    b.handlers.next.emplace(geerpc::dial<Transport>(c.address));
    a.handlers.next.emplace(geerpc::dial<Transport>(b.address));
  }
  bool all_ended(int count) {
    return a.handlers.ended.wait_for_at_least(count) && b.handlers.ended.wait_for_at_least(count) &&
           c.handlers.ended.wait_for_at_least(count);
  }
};

}  // namespace test::inherit
