// The adaptive concurrency limit's core (server/concurrency_limit.hpp), fed simulated windows:
// explicit times and latencies, no clock, no server. A simulated server's latency is a function of
// the concurrency the limiter allows; each window is filled with min_samples samples at the limit,
// one window length apart.
#include "geerpc/server/concurrency_limit.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
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
          .probe_every = probe_every,
          // A quarter: the simulated servers below slow from the first request on, so a probe
          // measures the no-load latency only well below the limit.
          .probe_fraction = 0.25};
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
  REQUIRE(limiter.limit() == 16);  // the first window is no probe: it starts at initial_limit
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
  SECTION("off by default: samples change nothing") {
    concurrency_limit limiter(geerpc::server_options{}.limits.adaptive_concurrency, 65536);
    REQUIRE_FALSE(limiter.enabled());
    run(limiter, clock::time_point{} + 1s, 100, 1'000'000, [](std::size_t) { return 1ms; });
    CHECK(limiter.limit() == geerpc::adaptive_concurrency_limit{}.initial_limit);
    CHECK(limiter.noload_latency() == 0ns);
  }
}

TEST_CASE("adaptive limit: 0 ns and huge latencies divide nothing by zero and overflow nothing",
          "[concurrency_limit]") {
  concurrency_limit limiter(settings(1000, 0), {});
  // A window of mean under 1 ns (samples racing a close) teaches nothing.
  auto at = run(limiter, clock::time_point{} + 1s, 400, 1'000'000, [](std::size_t) { return 0ns; });
  CHECK(limiter.limit() == 16);
  CHECK(limiter.noload_latency() == 0ns);
  at = run(limiter, at, 400, 1'000'000, [](std::size_t) { return 1ns; });
  CHECK(limiter.limit() == 1000);  // latency never above the no-load one: it grows
  CHECK(limiter.noload_latency() == 1ns);
  at = run(limiter, at, 200, 1'000'000, [](std::size_t) { return std::chrono::nanoseconds::max(); });
  CHECK(limiter.limit() == 4);
  // A negative latency (a clock that went back) counts as 0, and teaches nothing.
  run(limiter, at, 200, 1'000'000, [](std::size_t) { return -1ms; });
  CHECK(limiter.limit() == 4);
}

TEST_CASE("adaptive limit: settings near SIZE_MAX are brought down to 2^53, and nothing overflows",
          "[concurrency_limit]") {
  auto s = settings(SIZE_MAX, 1);
  s.initial_limit = SIZE_MAX;
  s.min_limit = SIZE_MAX - 1;
  concurrency_limit limiter(s, SIZE_MAX);
  CHECK(limiter.limit() == concurrency_limit::largest_setting);
  run(limiter, clock::time_point{} + 1s, 10, SIZE_MAX, [](std::size_t) { return 1ms; });
  CHECK(limiter.limit() == concurrency_limit::largest_setting);
}

TEST_CASE("adaptive limit: one window of fast samples moves the no-load estimate a tenth of the way",
          "[concurrency_limit]") {
  // The reviewer's sequence: steady 1 ms at demand above the limit, one window at 20 us (a peer
  // flooding a cheap method), then 1 ms again. Taken at once, the 20 us window made 20 us the
  // no-load latency, and the limit fell to about 7 until the next probe.
  concurrency_limit limiter(settings(10000, 0), {});
  auto at = run(limiter, clock::time_point{} + 1s, 150, 1'000'000, [](std::size_t) { return 1ms; });
  const std::size_t before = limiter.limit();
  REQUIRE(before > 100);
  at = run(limiter, at, 1, 1'000'000, [](std::size_t) { return 20us; });
  CHECK(limiter.noload_latency() > 850us);
  run(limiter, at, 50, 1'000'000, [](std::size_t) { return 1ms; });
  CHECK(limiter.limit() >= before);  // within tolerance of the estimate: it still grows
}

TEST_CASE("adaptive limit: a probe cuts to probe_fraction, and ends unmeasured after two windows without samples",
          "[concurrency_limit]") {
  auto s = settings(1000, 1);  // every other window a probe
  s.probe_fraction = 0.25;
  concurrency_limit limiter(s, {});
  auto at = clock::time_point{} + 1s;
  for (int i = 0; i < 10; ++i) limiter.on_sample(1ms, 16, at + 10ms * i);
  at += 100ms;
  limiter.on_sample(1ms, 16, at);  // closes the first window: a probe starts
  const std::size_t full = 17;     // 16.8: grew by sqrt(16) / 5
  REQUIRE(limiter.limit() < full);
  CHECK(limiter.limit() == 4);  // a quarter of 16.8, rounded
  // Long requests hold more than the cut in flight: every new one is refused, no sample comes
  // (or only ones from above the cut, left out).
  limiter.on_sample(1ms, 10, at + 50ms);
  limiter.on_refusal(at + 150ms);
  CHECK(limiter.limit() == 4);
  limiter.on_refusal(at + 200ms);  // two window lengths after the probe began
  CHECK(limiter.limit() == full);
  CHECK(limiter.noload_latency() == 1ms);  // unmeasured: the estimate stays
  SECTION("a sample past the bound ends it too") {
    concurrency_limit other(s, {});
    auto t = clock::time_point{} + 1s;
    for (int i = 0; i < 10; ++i) other.on_sample(1ms, 16, t + 10ms * i);
    other.on_sample(1ms, 16, t + 100ms);
    REQUIRE(other.limit() == 4);
    other.on_sample(1ms, 2, t + 300ms);
    CHECK(other.limit() == full);
  }
}

TEST_CASE("adaptive limit: the default probe cuts to half the limit", "[concurrency_limit]") {
  auto s = settings(1000, 1);
  s.probe_fraction = geerpc::adaptive_concurrency_limit{}.probe_fraction;
  concurrency_limit limiter(s, {});
  auto at = clock::time_point{} + 1s;
  for (int i = 0; i <= 10; ++i) limiter.on_sample(1ms, 16, at + 10ms * i);
  CHECK(limiter.limit() == 8);  // half of 16.8
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
  // One simulated clock for all, so that windows come due on several threads at once.
  std::atomic<long long> now_us{1'000'000};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        const std::size_t inflight = std::min<std::size_t>(limiter.limit(), 1000);
        const auto now = clock::time_point{} + std::chrono::microseconds(now_us.fetch_add(3));
        limiter.on_sample(1ms, inflight, now);
      }
    });
  for (auto& thread : threads) thread.join();
  // 240 ms of samples at 1 ms windows: the limit grew. (A sample that lands while a window closes
  // may count its latency in one window and itself in the next: the means are near 1 ms.)
  CHECK(limiter.limit() > 16);
  CHECK(limiter.noload_latency() >= 500us);
  CHECK(limiter.noload_latency() <= 2ms);
}

}  // namespace concurrency_limit_test
