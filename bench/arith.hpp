// The benchmark service of BENCHMARK.md, shared by geerpc's benchmark server and client.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <geerpc/geerpc.hpp>
#include <mutex>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "alloc_counter.hpp"

namespace bench {

struct SumArgs {
  std::int32_t a;
  std::int32_t b;
};

struct Arith {
  std::int32_t sum(const SumArgs& x) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(x.a) + static_cast<std::uint32_t>(x.b));
  }
  std::string echo(const std::string& bytes) { return bytes; }
  // Not a workload: lets the client read the server's allocation count around a timed phase.
  std::uint64_t allocations(const std::uint8_t&) { return bench::allocations(); }

  // The timeout storm's handler: would take 1 s, unless its stop_token fires first (the caller's
  // deadline, carried in the request). Notes how long after its start the stop came.
  std::int32_t slow(const SumArgs& x, std::stop_token stop) {
    const auto began = std::chrono::steady_clock::now();
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait_for(lock, stop, std::chrono::seconds(1), [] { return false; });
    if (stop.stop_requested()) {
      const auto took = std::chrono::steady_clock::now() - began;
      std::lock_guard guard(stops_mutex);
      stops_ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(took).count());
    }
    return x.a;
  }
  // How long after their start the slow handlers since the last ask were told to stop (ns).
  std::vector<std::int64_t> stops(const std::uint8_t&) {
    std::lock_guard guard(stops_mutex);
    return std::exchange(stops_ns, {});
  }
  std::mutex stops_mutex;
  std::vector<std::int64_t> stops_ns;
};

using ArithApi = geerpc::service<"Arith", geerpc::method<"Sum", &Arith::sum>, geerpc::method<"Echo", &Arith::echo>,
                                 geerpc::method<"Allocations", &Arith::allocations>,
                                 geerpc::method<"Slow", &Arith::slow>, geerpc::method<"Stops", &Arith::stops>>;

}  // namespace bench
