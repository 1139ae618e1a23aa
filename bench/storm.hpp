// The timeout storm (BENCHMARK.md, T1): one connection, 1,000 calls to a handler that would take
// 1 s, each with a 200 ms deadline. It reports the lateness of each timeout (when the caller got
// its error, minus its deadline: never negative), whether 100 fast calls on the same connection
// then succeed, how many handlers were told to stop, and the server's threads and RSS (KiB)
// before, during and 2 s after. Three runs in one process, so that each is judged
// against a floor measured in the same run:
//   floor  1,000 plain threads, each waiting on a condition variable until its own deadline;
//   sync   1,000 caller threads, one synchronous call each (judged against the floor);
//   async  1,000 asynchronous calls from one thread (judged against 1 ms).
// Each prints one line: "storm <peer> <run> p50_us=… p99_us=… max_us=… min_us=… [...]".
// Two hops (bench/relay.hpp, bench/run.sh): the same storm through a middle server that passes each
// call on with the deadline it inherits; the slow handler says when it was told against the
// caller's deadline, which the caller sends as metadata (told_p50_us, told_p99_us).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "arith.hpp"
#include "harness.hpp"

namespace bench {

struct lateness {
  std::vector<std::int64_t> ns;
  long errors = 0;  // calls that did not end in deadline_exceeded
  void print(const std::string& peer, const char* run, const std::string& extra) {
    const auto [lo, hi] = std::minmax_element(ns.begin(), ns.end());
    const double min_us = ns.empty() ? 0 : static_cast<double>(*lo) / 1000.0;
    const double max_us = ns.empty() ? 0 : static_cast<double>(*hi) / 1000.0;
    const double p50 = percentile_us(ns, 0.50), p99 = percentile_us(ns, 0.99);
    std::printf("storm %s %s p50_us=%.1f p99_us=%.1f max_us=%.1f min_us=%.1f errors=%ld%s\n", peer.c_str(), run, p50,
                p99, max_us, min_us, errors, extra.c_str());
    std::fflush(stdout);
  }
};

using storm_clock = std::chrono::steady_clock;
inline constexpr auto storm_deadline = std::chrono::milliseconds(200);
inline constexpr int storm_calls = 1000;

inline std::int64_t late_ns(storm_clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(storm_clock::now() - deadline).count();
}

// 1,000 plain threads, each waiting until its own deadline: what waking a thread costs here.
inline lateness storm_floor() {
  lateness out;
  out.ns.resize(storm_calls);
  std::mutex m;
  std::condition_variable never;
  std::vector<std::jthread> threads;
  std::atomic<int> ready{0};
  const auto start = storm_clock::now() + std::chrono::milliseconds(50);  // after every thread exists
  for (int i = 0; i < storm_calls; ++i)
    threads.emplace_back([&, i] {
      const auto deadline = start + storm_deadline;
      std::unique_lock lock(m);
      ready.fetch_add(1);
      never.wait_until(lock, deadline, [&] { return storm_clock::now() >= deadline; });
      out.ns[static_cast<std::size_t>(i)] = late_ns(deadline);
    });
  threads.clear();
  return out;
}

template <class Client>
std::string fast_calls_after(Client& client) {
  int ok = 0;
  for (int i = 0; i < 100; ++i) {
    auto r = client.template try_call<std::int32_t>(geerpc::with_timeout(std::chrono::seconds(1)), "Arith.Sum",
                                                    SumArgs{i, 1});
    ok += r && *r == i + 1 ? 1 : 0;
  }
  return " fast_after=" + std::to_string(ok) + "/100";
}

// How many handlers were told to stop since the last ask, and when against their caller's
// deadline (told_p50_us, told_p99_us: negative is before it; one or two hops away, the handler's
// own deadline is its caller's less each hop's reserve). A request whose deadline passed while it
// waited for a thread is answered without running: no stop.
template <class Client>
std::string stop_count(Client& client) {
  const auto stops = client.template call<std::vector<std::int64_t>>("Arith.Stops", std::uint8_t{0});
  auto told = client.template call<std::vector<std::int64_t>>("Arith.Told", std::uint8_t{0});
  char when[96];
  std::snprintf(when, sizeof when, " told_p50_us=%.1f told_p99_us=%.1f", percentile_us(told, 0.50),
                percentile_us(told, 0.99));
  return " handlers_stopped=" + std::to_string(stops.size()) + when;
}

// A storm call's context: its deadline, and the same deadline as metadata for the slow handler.
inline geerpc::context storm_context(storm_clock::time_point deadline) {
  return geerpc::with_deadline(deadline).with_metadata(caller_deadline_key, deadline_text(deadline));
}

inline std::string server_state(int pid) {
  if (pid <= 0) return "";
  return std::to_string(proc_status(pid, "Threads")) + "/" + std::to_string(proc_status(pid, "VmRSS"));
}

// 1,000 caller threads on one connection, one call each.
template <class Client>
lateness storm_sync(Client& client, int server_pid, std::string& extra) {
  lateness out;
  out.ns.resize(storm_calls);
  std::atomic<long> errors{0};
  const std::string before = server_state(server_pid);
  std::string during;
  {
    std::vector<std::jthread> threads;
    const auto start = storm_clock::now() + std::chrono::milliseconds(50);
    for (int i = 0; i < storm_calls; ++i)
      threads.emplace_back([&, i] {
        std::this_thread::sleep_until(start);
        const auto deadline = storm_clock::now() + storm_deadline;
        auto r = client.template try_call<std::int32_t>(storm_context(deadline), "Arith.Slow", SumArgs{i, 0});
        out.ns[static_cast<std::size_t>(i)] = late_ns(deadline);
        if (r.code() != geerpc::errc::deadline_exceeded) errors.fetch_add(1);
      });
    std::this_thread::sleep_until(start + storm_deadline / 2);
    during = server_state(server_pid);
  }
  out.errors = errors.load();
  extra = fast_calls_after(client);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // handlers end, surplus pool threads retire
  extra += stop_count(client);
  if (server_pid > 0) extra += " server_threads_rss_kb=" + before + "," + during + "," + server_state(server_pid);
  return out;
}

// 1,000 asynchronous calls from this thread, then each waited for in turn.
template <class Client>
lateness storm_async(Client& client, std::string& extra) {
  lateness out;
  using future = decltype(client.template async_call<std::int32_t>(geerpc::context{}, "Arith.Slow", SumArgs{}));
  std::vector<future> calls;
  std::vector<storm_clock::time_point> deadlines;
  calls.reserve(storm_calls);
  deadlines.reserve(storm_calls);
  for (int i = 0; i < storm_calls; ++i) {
    deadlines.push_back(storm_clock::now() + storm_deadline);
    calls.push_back(
        client.template async_call<std::int32_t>(storm_context(deadlines.back()), "Arith.Slow", SumArgs{i, 0}));
  }
  for (std::size_t i = 0; i < calls.size(); ++i) {
    calls[i].wait();
    out.ns.push_back(late_ns(deadlines[i]));
    if (calls[i].try_get().code() != geerpc::errc::deadline_exceeded) ++out.errors;
  }
  extra = fast_calls_after(client);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  extra += stop_count(client);
  return out;
}

}  // namespace bench
