// The adaptive concurrency limit's core (server/concurrency_limit.hpp), fed simulated windows:
// explicit times and latencies, no clock, no server. A simulated server's latency is a function of
// the concurrency the limiter allows; each window is filled with min_samples samples at the limit,
// one window length apart.
#include "geerpc/server/concurrency_limit.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

#include "catch.hpp"

namespace concurrency_limit_test {

using namespace std::chrono_literals;
using geerpc::detail::concurrency_limit;
using clock = std::chrono::steady_clock;

namespace {

geerpc::adaptive_concurrency_limit settings(std::size_t max_limit, std::size_t probe_every = 50) {
  return {.enabled = true,
          .min_limit = 4,
          .max_limit = max_limit,
          .initial_limit = 16,
          .window = 100ms,
          .min_samples = 10,
          .tolerance = 1.5,
          .probe_every = probe_every};
}

// Runs `windows` windows; in each, the demand is min(limit, demand) requests in flight, whose
// latency is latency_of(in_flight). Returns the time after the last.
clock::time_point run(concurrency_limit& limiter, clock::time_point at, int windows, std::size_t demand,
                      const std::function<std::chrono::nanoseconds(std::size_t)>& latency_of) {
  for (int w = 0; w < windows; ++w) {
    const std::size_t inflight = std::min(limiter.limit(), demand);
    for (int i = 0; i < 10; ++i) limiter.on_sample(latency_of(inflight), inflight, at + 10ms * i);
    at += 100ms;
  }
  return at;
}

// A server that slows as concurrency passes `knee`: latency = base × (1 + in flight / knee).
auto slowing(std::chrono::nanoseconds base, std::size_t knee) {
  return [base, knee](std::size_t inflight) {
    return std::chrono::nanoseconds(base.count() +
                                    base.count() * static_cast<long long>(inflight) / static_cast<long long>(knee));
  };
}

}  // namespace

TEST_CASE("adaptive limit: constant latency with demand at the limit grows it to max_limit", "[concurrency_limit]") {
  concurrency_limit limiter(settings(1000), {});
  REQUIRE(limiter.limit() == 4);  // the first window is a probe, at a quarter of initial_limit
  run(limiter, clock::time_point{} + 1s, 2, 1'000'000, [](std::size_t) { return 1ms; });  // closed by the second
  CHECK(limiter.limit() == 16);
  run(limiter, clock::time_point{} + 1s, 2000, 1'000'000, [](std::size_t) { return 1ms; });
  CHECK(limiter.limit() == 1000);
  CHECK(limiter.noload_latency() == 1ms);
}

TEST_CASE("adaptive limit: latency rising with concurrency settles near the knee, not at max", "[concurrency_limit]") {
  concurrency_limit limiter(settings(10000), {});
  run(limiter, clock::time_point{} + 1s, 3000, 1'000'000, slowing(1ms, 100));
  // Between half the knee (latency 1.5 × base) and twice it (3 × base).
  CHECK(limiter.limit() >= 50);
  CHECK(limiter.limit() <= 200);
}

TEST_CASE("adaptive limit: an idle server does not grow its limit", "[concurrency_limit]") {
  concurrency_limit limiter(settings(1000), {});
  // Two requests in flight against a limit of 16: well under half of it.
  run(limiter, clock::time_point{} + 1s, 500, 2, [](std::size_t) { return 1ms; });
  CHECK(limiter.limit() == 16);
}

TEST_CASE("adaptive limit: a permanent latency step is learnt, and the limit recovers", "[concurrency_limit]") {
  concurrency_limit limiter(settings(10000), {});
  auto at = run(limiter, clock::time_point{} + 1s, 1000, 1'000'000, slowing(1ms, 100));
  const std::size_t before = limiter.limit();
  // Everything four times slower from now on (a slower disk), at any concurrency: the limit first
  // falls (latency far above the no-load estimate) ...
  at = run(limiter, at, 20, 1'000'000, slowing(4ms, 100));
  CHECK(limiter.limit() < before);
  // ... until a probe measures the new no-load latency, and it comes back near the knee.
  run(limiter, at, 1000, 1'000'000, slowing(4ms, 100));
  CHECK(limiter.noload_latency() >= 4ms);
  CHECK(limiter.limit() >= before / 2);
  CHECK(limiter.limit() <= 200);
}

TEST_CASE("adaptive limit: without probes a permanent step keeps the limit at min_limit", "[concurrency_limit]") {
  concurrency_limit limiter(settings(10000, 0), {});
  auto at = run(limiter, clock::time_point{} + 1s, 500, 1'000'000, slowing(1ms, 100));
  run(limiter, at, 500, 1'000'000, slowing(4ms, 100));
  CHECK(limiter.limit() == 4);
}

TEST_CASE("adaptive limit: stays within its bounds, and max_limit 0 means max_inflight", "[concurrency_limit]") {
  SECTION("shrinks to min_limit, never below") {
    concurrency_limit limiter(settings(1000, 0), {});
    auto at = run(limiter, clock::time_point{} + 1s, 1, 1'000'000, [](std::size_t) { return 1ms; });
    run(limiter, at, 500, 1'000'000, [](std::size_t) { return 1s; });
    CHECK(limiter.limit() == 4);
  }
  SECTION("max_limit 0") {
    concurrency_limit limiter(settings(0), 40);
    run(limiter, clock::time_point{} + 1s, 500, 1'000'000, [](std::size_t) { return 1ms; });
    CHECK(limiter.limit() == 40);
  }
  SECTION("settings out of bounds are brought in") {
    concurrency_limit limiter({.enabled = true,
                               .min_limit = 0,
                               .max_limit = 0,
                               .initial_limit = 0,
                               .window = -1s,
                               .min_samples = 0,
                               .tolerance = -3,
                               .probe_every = 0},
                              0);
    CHECK(limiter.limit() == 1);
    run(limiter, clock::time_point{} + 1s, 10, 1'000'000, [](std::size_t) { return 1ms; });
    CHECK(limiter.limit() == 1);
  }
  SECTION("off: samples change nothing") {
    auto off = settings(1000);
    off.enabled = false;
    concurrency_limit limiter(off, {});
    run(limiter, clock::time_point{} + 1s, 100, 1'000'000, [](std::size_t) { return 1ms; });
    CHECK(limiter.limit() == 16);
    CHECK(limiter.noload_latency() == 0ns);
  }
}

TEST_CASE("adaptive limit: 0 ns and huge latencies divide nothing by zero and overflow nothing",
          "[concurrency_limit]") {
  concurrency_limit limiter(settings(1000, 0), {});
  auto at = run(limiter, clock::time_point{} + 1s, 400, 1'000'000, [](std::size_t) { return 0ns; });
  CHECK(limiter.limit() == 1000);  // latency never above the no-load one: it grows
  CHECK(limiter.noload_latency() == 1ns);
  at = run(limiter, at, 200, 1'000'000, [](std::size_t) { return std::chrono::nanoseconds::max(); });
  CHECK(limiter.limit() == 4);
  // A negative latency (a clock that went back) counts as 0: the limit grows again.
  run(limiter, at, 200, 1'000'000, [](std::size_t) { return -1ms; });
  CHECK(limiter.limit() > 100);
  CHECK(limiter.limit() <= 1000);
}

TEST_CASE("adaptive limit: a sample from above the limit is left out", "[concurrency_limit]") {
  concurrency_limit limiter(settings(1000, 0), {});
  REQUIRE(limiter.limit() == 16);
  auto at = clock::time_point{} + 1s;
  // Ten slow samples admitted at 17 in flight, over the limit of 16 (admitted before it fell):
  // they would close a window, and make 10 s the no-load latency.
  for (int i = 0; i < 10; ++i) limiter.on_sample(10s, 17, at + 20ms * i);
  CHECK(limiter.noload_latency() == 0ns);
  run(limiter, at + 1s, 100, 1'000'000, [](std::size_t) { return 1ms; });
  CHECK(limiter.noload_latency() == 1ms);
  CHECK(limiter.limit() > 16);
}

// Samples from several threads at once while windows close: TSan sees the try-lock, and every
// window closes on one thread only.
TEST_CASE("adaptive limit: samples from several threads, windows closed by one at a time", "[concurrency_limit]") {
  auto s = settings(1000, 0);
  s.window = 1ms;
  concurrency_limit limiter(s, {});
  std::vector<std::thread> threads;
  const auto start = clock::time_point{} + 1s;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20000; ++i) {
        const std::size_t inflight = std::min<std::size_t>(limiter.limit(), 1000);
        limiter.on_sample(1ms, inflight, start + std::chrono::microseconds(i * 10 + t));
      }
    });
  for (auto& thread : threads) thread.join();
  // 200 ms of samples at 1 ms windows: the limit grew. (A sample that lands while a window closes
  // may count its latency in one window and itself in the next: the means are near 1 ms.)
  CHECK(limiter.limit() > 16);
  CHECK(limiter.noload_latency() >= 500us);
  CHECK(limiter.noload_latency() <= 2ms);
}

}  // namespace concurrency_limit_test
