// The adaptive concurrency limit in a server (limits.adaptive_concurrency; its core is
// concurrency_limit_test.cpp's): a request beyond the limit is answered busy at once, with a text
// that names the limit, and counted; off (the default), the same load is all admitted; on, the
// requests' latencies reach the limiter.
//
// The limit is pinned (min_limit = max_limit = 2): a raw peer sends three Arith.Late in one write;
// the first two are admitted (running, or on the blocking transport the second waiting for the
// connection's thread), held by the test's event, and the third finds two in flight.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace adaptive_concurrency_test {

using test::Args;

namespace {

constexpr auto status_of = [](geerpc::errc code) { return static_cast<std::uint8_t>(code); };

using test::number_after;

geerpc::server_options pinned_at_two() {
  geerpc::server_options opts;
  opts.threads.handlers = 4;
  opts.limits.adaptive_concurrency = {.enabled = true, .min_limit = 2, .max_limit = 2, .initial_limit = 2};
  return opts;
}

template <class Transport>
struct raw_server {
  test::arith_server<Transport> s;
  test::raw_peer peer{s.address};

  explicit raw_server(geerpc::server_options opts) : s(std::move(opts)) {
    peer.send_hello(std::chrono::microseconds(0));
    REQUIRE(peer.read_hello_reply());
  }

  // Late(1), Late(2) and Late(3) in one write.
  void send_three_late() {
    std::vector<std::byte> burst;
    for (int seq = 1; seq <= 3; ++seq) {
      const auto frame = test::request_frame(static_cast<std::uint64_t>(seq), "Arith.Late", Args{seq, 0});
      burst.insert(burst.end(), frame.begin(), frame.end());
    }
    peer.send(burst);
  }
  std::string stats() { return test::http_get(s.address, "/debug/geerpc/stats.json"); }
  long long turned_away(std::string_view limit) { return number_after(stats(), "\"turned_away\":", limit); }
};

}  // namespace

TEMPLATE_TEST_CASE("adaptive concurrency: a request beyond the limit is answered busy at once, and counted",
                   "[adaptive_concurrency]", GEERPC_TRANSPORTS) {
  raw_server<TestType> t(pinned_at_two());
  t.send_three_late();
  // Answered while the other two are still held.
  auto third = t.peer.read_frame();
  REQUIRE(third);
  CHECK(third->header.seq == 3);
  CHECK(third->header.status == status_of(geerpc::errc::busy));
  CHECK(third->text == "rpc server: busy: over the adaptive concurrency limit (2 calls in flight)");
  CHECK(t.s.arith.finished.value() == 0);
  t.s.arith.release.set();
  std::uint64_t seqs = 0;  // the two answered, in whatever order their handlers finished
  for (int i = 0; i < 2; ++i) {
    auto answer = t.peer.read_frame();
    REQUIRE(answer);
    seqs += answer->header.seq;
    CHECK(answer->header.status == 0);
  }
  CHECK(seqs == 1 + 2);
  CHECK(t.s.arith.started.value() == 2);
  CHECK(test::eventually([&] { return t.turned_away("adaptive_concurrency") == 1; }));
  CHECK(t.turned_away("max_inflight") == 0);
  // The limit in force, on the page's JSON.
  CHECK(number_after(t.stats(), "\"limits\":", "adaptive_concurrency") == 2);
}

TEMPLATE_TEST_CASE("adaptive concurrency: off by default, the same load is all admitted", "[adaptive_concurrency]",
                   GEERPC_TRANSPORTS) {
  geerpc::server_options opts;  // the adaptive limit as a server has it by default
  opts.threads.handlers = 4;
  raw_server<TestType> t(opts);
  t.send_three_late();
  REQUIRE(t.s.arith.started.wait_for_at_least(1));
  t.s.arith.release.set();
  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    auto answer = t.peer.read_frame();
    REQUIRE(answer);
    CHECK(answer->header.status == 0);
  }
  CHECK(t.s.arith.started.value() == 3);
  CHECK(t.turned_away("adaptive_concurrency") == 0);
  CHECK(number_after(t.stats(), "\"limits\":", "adaptive_concurrency") == 0);  // off
}

TEMPLATE_TEST_CASE("adaptive concurrency: the successful calls' latencies reach the limiter", "[adaptive_concurrency]",
                   GEERPC_TRANSPORTS) {
  geerpc::server_options opts;
  // Every finished call closes a window: the no-load latency is known after the first.
  opts.limits.adaptive_concurrency = {.enabled = true, .window = std::chrono::nanoseconds(0), .min_samples = 1};
  test::arith_server<TestType> s(opts);
  CHECK(number_after(test::http_get(s.address, "/debug/geerpc/stats.json"),
                     "\"limits\":", "adaptive_noload_latency_ns") == 0);
  auto client = geerpc::dial<TestType>(s.address);
  // A failure says nothing of the service's latency: no sample. (A request's sample is taken
  // before it stops counting in flight.)
  for (int i = 0; i < 3; ++i) CHECK_FALSE(client.template try_call<int>("Arith.Fail", Args{i, 1}));
  REQUIRE(test::eventually([&] { return s.server.inflight() == 0; }));
  CHECK(number_after(test::http_get(s.address, "/debug/geerpc/stats.json"),
                     "\"limits\":", "adaptive_noload_latency_ns") == 0);
  for (int i = 0; i < 3; ++i) CHECK(client.template call<int>("Arith.Sum", Args{i, 1}) == i + 1);
  CHECK(test::eventually([&] {
    return number_after(test::http_get(s.address, "/debug/geerpc/stats.json"),
                        "\"limits\":", "adaptive_noload_latency_ns") > 0;
  }));
}

// Long calls (long polls, deferred responders) held above a probe's cut: every new call is refused
// while the probe lasts, and no sample comes to close it. The probe must end on its own, in time.
TEST_CASE("adaptive concurrency: calls held above a probe's cut leave the others refused only while it lasts",
          "[adaptive_concurrency]") {
  geerpc::server_options opts;
  opts.threads.handlers = 8;
  // Every call after the first closes a window (1 ms), and every window is followed by a probe at
  // a quarter of the limit of 8: 2, under the 4 held.
  opts.limits.adaptive_concurrency = {.enabled = true,
                                      .min_limit = 1,
                                      .max_limit = 8,
                                      .initial_limit = 8,
                                      .window = std::chrono::milliseconds(1),
                                      .min_samples = 1,
                                      .probe_every = 1,
                                      .probe_fraction = 0.25};
  test::arith_server<geerpc::threaded> s(opts);
  auto client = geerpc::dial<geerpc::threaded>(s.address);
  std::vector<decltype(client.async_call<int>("Arith.Late", Args{0, 0}))> held;
  for (int i = 0; i < 4; ++i) held.push_back(client.async_call<int>("Arith.Late", Args{i, 0}));
  REQUIRE(s.arith.started.wait_for_at_least(4));
  bool refused = false;   // a probe began: the calls held are above its cut
  bool admitted = false;  // and a call was admitted after it
  for (int i = 0; i < 20000 && !admitted; ++i) {
    auto sum = client.try_call<int>("Arith.Sum", Args{i, 1});
    if (sum) {
      admitted = refused;
    } else {
      REQUIRE(sum.code() == geerpc::errc::busy);
      refused = true;
    }
  }
  CHECK(refused);
  CHECK(admitted);
  s.arith.release.set();
  for (auto& late : held) CHECK(late.get() >= 0);
}

// A fresh server (default settings: no probe first) with as many calls held as a probe would have
// admitted still admits the others.
TEST_CASE("adaptive concurrency: a fresh server with calls held admits others", "[adaptive_concurrency]") {
  geerpc::server_options opts;
  opts.threads.handlers = 16;
  opts.limits.adaptive_concurrency.enabled = true;
  test::arith_server<geerpc::threaded> s(opts);
  auto client = geerpc::dial<geerpc::threaded>(s.address);
  std::vector<decltype(client.async_call<int>("Arith.Late", Args{0, 0}))> held;
  for (int i = 0; i < 8; ++i) held.push_back(client.async_call<int>("Arith.Late", Args{i, 0}));
  REQUIRE(s.arith.started.wait_for_at_least(8));
  auto sum = client.try_call<int>("Arith.Sum", Args{1, 2});
  REQUIRE(sum);
  CHECK(sum.value() == 3);
  s.arith.release.set();
  for (auto& late : held) CHECK(late.get() >= 0);
}

}  // namespace adaptive_concurrency_test
