// Hedged against unhedged calls of a balanced client, in one run: three servers in this process, one
// of them slow on purpose (one call in ten of each method waits 50 ms, or until cancelled); calls
// interleaved between a client without hedging, one hedging after a fixed delay and one after the
// method's recent p95. Prints p50/p99/p99.9 of each and the requests hedging added per 100 calls.
//
//   geerpc_bench_hedging [calls per client, 3000] [fixed delay in ms, 5]
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include <geerpc/geerpc.hpp>

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

constexpr int variants = 3;
constexpr std::array<const char*, variants> names{"unhedged", "hedged-fixed", "hedged-p95"};

// One call in ten of each method waits 50 ms on the slow server, or until its stop_token fires.
struct Replica {
  bool slow = false;
  std::array<std::atomic<long>, variants> requests{};
  std::array<std::atomic<long>, variants> cancelled{};

  int serve(int variant, std::stop_token stop) {
    const long n = requests[variant]++;
    if (slow && n % 10 == 0) {
      std::mutex m;
      std::condition_variable_any cv;
      std::unique_lock lock(m);
      cv.wait_for(lock, stop, 50ms, [] { return false; });
      if (stop.stop_requested()) ++cancelled[variant];
    }
    return variant;
  }
  int unhedged(std::stop_token stop) { return serve(0, std::move(stop)); }
  int fixed(std::stop_token stop) { return serve(1, std::move(stop)); }
  int p95(std::stop_token stop) { return serve(2, std::move(stop)); }
};

using BenchApi = geerpc::service<"Bench",                                         //
                                 geerpc::method<"Unhedged", &Replica::unhedged>,  //
                                 geerpc::method<"Fixed", &Replica::fixed>,        //
                                 geerpc::method<"P95", &Replica::p95>>;

double percentile(std::vector<double>& sorted, double p) {
  const auto rank = static_cast<std::size_t>(std::llround(p / 100.0 * static_cast<double>(sorted.size() - 1)));
  return sorted[std::min(rank, sorted.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 3000;
  const auto delay = std::chrono::milliseconds(argc > 2 ? std::atoi(argv[2]) : 5);
  if (calls <= 0 || delay <= 0ms) {
    std::fprintf(stderr, "usage: %s [calls per client > 0] [fixed delay in ms > 0]\n", argv[0]);
    return 2;
  }
  constexpr int fleet_size = 3;
  std::vector<std::unique_ptr<Replica>> replicas;
  std::vector<std::unique_ptr<geerpc::server>> servers;
  std::vector<std::string> addresses;
  for (int i = 0; i < fleet_size; ++i) {
    replicas.push_back(std::make_unique<Replica>());
    replicas.back()->slow = i == 0;
    servers.push_back(std::make_unique<geerpc::server>());
    servers.back()->add<BenchApi>(*replicas.back());
    addresses.push_back(servers.back()->listen("127.0.0.1:0"));
  }
  const auto discovery = std::make_shared<geerpc::static_discovery>(addresses);
  const std::vector<std::string> idempotent{"Bench.Unhedged", "Bench.Fixed", "Bench.P95"};
  geerpc::balanced_client unhedged(discovery, {.idempotent = idempotent});
  geerpc::balanced_client fixed(discovery, {.idempotent = idempotent, .hedging = {.enabled = true, .delay = delay}});
  geerpc::balanced_client p95(discovery, {.idempotent = idempotent, .hedging = {.enabled = true}});
  const std::array<geerpc::balanced_client*, variants> clients{&unhedged, &fixed, &p95};
  const std::array<const char*, variants> methods{"Bench.Unhedged", "Bench.Fixed", "Bench.P95"};

  std::array<std::vector<double>, variants> latencies_us;
  std::array<long, variants> failures{};
  for (auto& l : latencies_us) l.reserve(static_cast<std::size_t>(calls));
  for (int i = 0; i < calls; ++i) {
    for (int v = 0; v < variants; ++v) {  // interleaved: each sees the same machine at the same time
      const auto started = clock_type::now();
      const auto r = clients[v]->try_call<int>(geerpc::with_timeout(1s), methods[v]);
      const std::chrono::duration<double, std::micro> took = clock_type::now() - started;
      if (!r) ++failures[v];
      latencies_us[v].push_back(took.count());
    }
  }
  std::printf(
      "hedging bench: %d calls per client, %d servers, server 0 holds 1 call in 10 for 50 ms; "
      "fixed delay %lld ms; p95 floor 1 ms\n",
      calls, fleet_size, static_cast<long long>(delay.count()));
  std::printf("%-13s %9s %9s %9s %9s %14s %10s %8s\n", "client", "p50_us", "p90_us", "p99_us", "p99.9_us",
              "extra_req/100", "cancelled", "failed");
  for (int v = 0; v < variants; ++v) {
    auto& l = latencies_us[v];
    std::sort(l.begin(), l.end());
    long requests = 0, cancelled = 0;
    for (const auto& r : replicas) {
      requests += r->requests[v].load();
      cancelled += r->cancelled[v].load();
    }
    std::printf("%-13s %9.0f %9.0f %9.0f %9.0f %14.2f %10ld %8ld\n", names[v], percentile(l, 50), percentile(l, 90),
                percentile(l, 99), percentile(l, 99.9), 100.0 * static_cast<double>(requests - calls) / calls,
                cancelled, failures[v]);
  }
  return 0;
}
