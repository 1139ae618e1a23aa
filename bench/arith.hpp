// The benchmark service of BENCHMARK.md, shared by geerpc's benchmark server and client.
#pragma once

#include <atomic>
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

// The metadata under which the timeout storm's caller sends its own deadline, as steady_clock's
// nanoseconds since its epoch (CLOCK_MONOTONIC: the same clock in every process of the machine),
// so that the slow handler, one or two hops away, can say when it was told against that deadline.
// The two-hop storm's middle server propagates it (server_options::propagated_metadata).
inline constexpr const char* caller_deadline_key = "bench-caller-deadline-ns";

inline std::string deadline_text(std::chrono::steady_clock::time_point deadline) {
  return std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count());
}

struct Arith {
  std::int32_t sum(const SumArgs& x) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(x.a) + static_cast<std::uint32_t>(x.b));
  }
  std::string echo(const std::string& bytes) { return bytes; }
  // Not a workload: lets the client read the server's allocation count around a timed phase.
  std::uint64_t allocations(const std::uint8_t&) { return bench::allocations(); }

  // The timeout storm's handler: would take 1 s, unless its stop_token fires first (the caller's
  // deadline, carried in the request, or inherited from the hop before). Notes how long after its
  // start the stop came and, when the caller sent its deadline, when against that deadline.
  // "Told" is when the stop request reached the handler's token (a stop_callback notes the time,
  // on the thread that fired it), not when this thread woke: with 1,000 handlers waking at once on
  // two CPUs, the wake-up alone takes as long as the storm's floor.
  std::int32_t slow(const SumArgs& x, std::stop_token stop, const geerpc::call_context& ctx) {
    const auto began = std::chrono::steady_clock::now();
    std::atomic<std::int64_t> told_ns_since_epoch{0};
    const std::stop_callback note_told(stop, [&told_ns_since_epoch] {
      told_ns_since_epoch.store(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
              .count(),
          std::memory_order_release);
      told_ns_since_epoch.notify_all();
    });
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait_for(lock, stop, std::chrono::seconds(1), [] { return false; });
    if (stop.stop_requested()) {
      // The thread that fired the stop may run the wait's own callback before ours: wait for ours.
      told_ns_since_epoch.wait(0, std::memory_order_acquire);
      const auto told = std::chrono::steady_clock::time_point(
          std::chrono::nanoseconds(told_ns_since_epoch.load(std::memory_order_acquire)));
      std::lock_guard guard(stops_mutex);
      stops_ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(told - began).count());
      if (const auto sent = ctx.metadata(caller_deadline_key))
        told_ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(told.time_since_epoch()).count() -
                          std::stoll(std::string(*sent)));
    }
    return x.a;
  }
  // How long after their start the slow handlers since the last ask were told to stop (ns).
  std::vector<std::int64_t> stops(const std::uint8_t&) {
    std::lock_guard guard(stops_mutex);
    return std::exchange(stops_ns, {});
  }
  // When those of them whose caller sent its deadline were told, minus that deadline (ns; negative:
  // before it).
  std::vector<std::int64_t> told(const std::uint8_t&) {
    std::lock_guard guard(stops_mutex);
    return std::exchange(told_ns, {});
  }
  std::mutex stops_mutex;
  std::vector<std::int64_t> stops_ns;
  std::vector<std::int64_t> told_ns;
};

using ArithApi =
    geerpc::service<"Arith", geerpc::method<"Sum", &Arith::sum>, geerpc::method<"Echo", &Arith::echo>,
                    geerpc::method<"Allocations", &Arith::allocations>, geerpc::method<"Slow", &Arith::slow>,
                    geerpc::method<"Stops", &Arith::stops>, geerpc::method<"Told", &Arith::told>>;

}  // namespace bench
