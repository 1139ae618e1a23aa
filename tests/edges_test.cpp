// The edges of the settings: durations too long for the clock, negative durations, and frame size
// limits too small to carry a frame. A duration too long must mean "no limit" (the farthest
// deadline), never an overflow: under UBSan, an overflow where a duration becomes a deadline
// fails these tests.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "catch.hpp"
#include "support.hpp"

namespace edges_test {

using namespace std::chrono_literals;
using test::Args;

namespace {

using steady = std::chrono::steady_clock;
constexpr auto farthest = steady::time_point::max();

}  // namespace

// ---------------------------------------------------------------------------------- with_timeout

TEST_CASE("with_timeout: a duration too long for the clock is the farthest deadline, whatever its type",
          "[edges][timeout]") {
  CHECK(geerpc::with_timeout(std::chrono::nanoseconds::max()).deadline() == farthest);
  CHECK(geerpc::with_timeout(std::chrono::hours::max()).deadline() == farthest);
  CHECK(geerpc::with_timeout(std::chrono::duration<std::uint64_t, std::milli>::max()).deadline() == farthest);
  CHECK(geerpc::with_timeout(std::chrono::duration<double>(1e300)).deadline() == farthest);
  CHECK(geerpc::with_timeout(std::chrono::duration<double>(std::numeric_limits<double>::infinity())).deadline() ==
        farthest);
  CHECK(geerpc::with_timeout(std::chrono::duration<float, std::ratio<86400>>(1e30f)).deadline() == farthest);
  // 400 years: more than steady_clock's nanoseconds reach (about 292 years).
  CHECK(geerpc::with_timeout(std::chrono::duration<int, std::ratio<31556952>>(400)).deadline() == farthest);
  // A context only gets stricter: a farthest deadline does not loosen an earlier one.
  const auto soon = geerpc::with_timeout(1s);
  CHECK(soon.with_timeout(std::chrono::nanoseconds::max()).deadline() == soon.deadline());
}

TEST_CASE("with_timeout: long but representable durations are kept exactly, rounded up", "[edges][timeout]") {
  const auto before = steady::now();
  const auto pico = *geerpc::with_timeout(std::chrono::duration<long long, std::pico>::max()).deadline();
  const auto years = *geerpc::with_timeout(std::chrono::duration<int, std::ratio<31556952>>(200)).deadline();
  const auto usual = *geerpc::with_timeout(250ms).deadline();
  const auto fraction = *geerpc::with_timeout(std::chrono::duration<double, std::milli>(0.0015)).deadline();
  const auto after = steady::now();
  // picoseconds::max() is about 106 days.
  CHECK(pico >=
        before + std::chrono::ceil<std::chrono::nanoseconds>(std::chrono::duration<long long, std::pico>::max()));
  CHECK(pico <=
        after + std::chrono::ceil<std::chrono::nanoseconds>(std::chrono::duration<long long, std::pico>::max()));
  CHECK(years > before + std::chrono::hours(24 * 365 * 199));
  CHECK(years < farthest);
  CHECK(usual >= before + 250ms);
  CHECK(usual <= after + 250ms);
  CHECK(fraction >= before + 1500ns);
  CHECK(fraction <= after + 1501ns);  // 0.0015 ms is not exact in binary
}

TEST_CASE("with_timeout: zero, negative and NaN durations have already passed", "[edges][timeout]") {
  const auto passed = [](const geerpc::context& ctx) { return ctx.deadline() && *ctx.deadline() <= steady::now(); };
  CHECK(passed(geerpc::with_timeout(0s)));
  CHECK(passed(geerpc::with_timeout(-1ns)));
  CHECK(passed(geerpc::with_timeout(-1s)));
  CHECK(passed(geerpc::with_timeout(std::chrono::nanoseconds::min())));
  CHECK(passed(geerpc::with_timeout(std::chrono::hours::min())));
  CHECK(passed(geerpc::with_timeout(std::chrono::duration<double>(-std::numeric_limits<double>::infinity()))));
  CHECK(passed(geerpc::with_timeout(std::chrono::duration<double>(std::nan("")))));
}

TEMPLATE_TEST_CASE("a call with the farthest deadline is served like one without", "[edges][timeout]",
                   GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  CHECK(client.template call<int>(geerpc::with_timeout(std::chrono::nanoseconds::max()), "Arith.Sum", Args{1, 2}) == 3);
  CHECK(client.template call<int>(geerpc::with_timeout(std::chrono::hours::max()), "Arith.Sum", Args{3, 4}) == 7);
  CHECK(client.template call<int>(geerpc::with_deadline(farthest), "Arith.Sum", Args{5, 6}) == 11);
  // The budget such a call carries must not give the server a deadline that fires: the handler's
  // stop token stays quiet until the client's own stop token cancels the call.
  std::stop_source stop;
  std::jthread canceller([&] {
    if (s.arith.started.wait_for_at_least(1)) stop.request_stop();
  });
  auto r = client.template try_call<int>(
      geerpc::with_timeout(std::chrono::nanoseconds::max()).with_stop_token(stop.get_token()), "Arith.WaitForStop",
      Args{1, 1});
  CHECK(r.code() == geerpc::errc::canceled);
}

TEMPLATE_TEST_CASE("a call with a negative timeout fails with deadline_exceeded at once and sends nothing",
                   "[edges][timeout]", GEERPC_TRANSPORTS) {
  test::listener l;
  std::unique_ptr<test::raw_peer> peer;
  std::jthread accepting([&] { peer = test::accept_greeted(l); });
  auto client = geerpc::dial<TestType>(l.address(), {.timeouts = {.connect = 5s}});
  accepting.join();
  REQUIRE(peer);

  for (const auto& ctx : {geerpc::with_timeout(-1s), geerpc::with_timeout(std::chrono::nanoseconds::min()),
                          geerpc::with_timeout(std::chrono::hours::min()), geerpc::with_timeout(-1ns)}) {
    auto r = client.template try_call<int>(ctx, "Arith.Sum", Args{1, 1});
    CHECK(r.code() == geerpc::errc::deadline_exceeded);
    CHECK(r.message() == "rpc client: call failed: context deadline exceeded");
  }
  // The first request the server sees is the call that came after them.
  std::jthread answering([&] {
    if (auto request = peer->read_frame(); request && test::decode_body<Args>(request->body).num1 == 2)
      peer->send(test::response_frame(request->header.seq, 4));
  });
  auto r = client.template try_call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{2, 2});
  REQUIRE(r);
  CHECK(*r == 4);
}

TEMPLATE_TEST_CASE("a caller's deadline holds while signals keep interrupting its wait for a silent server",
                   "[edges][timeout]", GEERPC_TRANSPORTS) {
  // A waiting recv() under a receive timeout is not restarted after a signal: restarted by hand,
  // it would wait its whole timeout again each time, and signals coming faster than that (a
  // profiler's SIGPROF) would hold the call past its deadline for as long as they come.
  struct sigaction quiet {};
  quiet.sa_handler = [](int) {};
  quiet.sa_flags = SA_RESTART;
  struct sigaction before {};
  REQUIRE(::sigaction(SIGUSR1, &quiet, &before) == 0);
  test::listener l;
  std::unique_ptr<test::raw_peer> peer;
  std::jthread accepting([&] { peer = test::accept_greeted(l); });
  auto client = geerpc::dial<TestType>(l.address(), {.timeouts = {.connect = 5s}});
  accepting.join();
  REQUIRE(peer);

  const pthread_t caller = ::pthread_self();
  std::atomic<bool> done{false};
  std::jthread signalling([&] {
    // Every 2 ms until the call ends; should it never end, the peer's close ends it after 3 s.
    for (int i = 0; i < 1500 && !done.load(); ++i) {
      ::pthread_kill(caller, SIGUSR1);
      std::this_thread::sleep_for(2ms);
    }
    if (!done.load()) ::shutdown(peer->fd(), SHUT_RDWR);
  });
  const auto start = steady::now();
  auto r = client.template try_call<int>(geerpc::with_timeout(300ms), "Arith.Sum", Args{1, 1});
  const auto took = steady::now() - start;
  done = true;
  signalling.join();
  ::sigaction(SIGUSR1, &before, nullptr);
  CHECK(r.code() == geerpc::errc::deadline_exceeded);
  CHECK(took >= 300ms);
  CHECK(took < 1s);  // the deadline, give or take a loaded machine; not the 3 s of the peer's close
}

TEST_CASE("call_future::wait_for takes any duration: hours::max() waits, a negative one does not", "[edges][async]") {
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial(s.address);
  auto done = client.async_call<int>("Arith.Sum", Args{1, 2});
  CHECK(done.wait_for(std::chrono::hours::max()));
  CHECK(done.wait_for(std::chrono::nanoseconds::max()));
  CHECK(done.get() == 3);
  auto pending = client.async_call<int>("Arith.WaitForStop", Args{1, 1});
  CHECK_FALSE(pending.wait_for(-1s));
  CHECK_FALSE(pending.wait_for(std::chrono::hours::min()));
  pending.cancel();
  CHECK(pending.try_get().code() == geerpc::errc::canceled);
}

// ---------------------------------------------------------------------------------- connect_timeout

TEMPLATE_TEST_CASE("connect_timeout: nanoseconds::max() is no limit, a negative one has expired before dialling",
                   "[edges][connect][timeout]", GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s;
  auto far = geerpc::try_dial<TestType>(s.address, {.timeouts = {.connect = std::chrono::nanoseconds::max()}});
  REQUIRE(far);
  CHECK(far->template call<int>("Arith.Sum", Args{1, 2}) == 3);

  for (const std::chrono::nanoseconds expired : {std::chrono::nanoseconds(-1ms), std::chrono::nanoseconds::min()}) {
    const auto start = steady::now();
    auto r = geerpc::try_dial<TestType>(s.address, {.timeouts = {.connect = expired}});
    REQUIRE_FALSE(r);
    CHECK(r.code() == geerpc::errc::connect_timeout);
    CHECK(r.message().find("rpc client: connect timeout: expect within -") == 0);
    CHECK(steady::now() - start < 1s);
  }
  CHECK(geerpc::try_dial<TestType>(s.address, {.timeouts = {.connect = -1ms}}).message() ==
        "rpc client: connect timeout: expect within -1ms");
}

TEST_CASE("durations print as Go prints them, up to the extremes", "[edges]") {
  using geerpc::detail::duration_text;
  CHECK(duration_text(std::chrono::nanoseconds::max()) == "2562047h47m16.854775807s");
  CHECK(duration_text(std::chrono::nanoseconds::min()) == "-2562047h47m16.854775808s");
  CHECK(duration_text(-1500ms) == "-1.5s");
}

// ---------------------------------------------------------------------------------- server timeouts

TEMPLATE_TEST_CASE("server timeouts of nanoseconds::max() never fire, and a negative one is no limit, as 0",
                   "[edges][timeout]", GEERPC_TRANSPORTS) {
  geerpc::server_options opts;
  SECTION("the farthest") {
    opts.timeouts.handshake = std::chrono::nanoseconds::max();
    opts.timeouts.frame = std::chrono::nanoseconds::max();
  }
  SECTION("negative") {
    opts.timeouts.handshake = -1s;
    opts.timeouts.frame = std::chrono::nanoseconds::min();
  }
  test::arith_server<TestType> s(opts);

  // A hello in two parts, then a request in two parts: the server arms its stall timer for each
  // unfinished part it reads. The pause only makes it likelier that the server reads them apart.
  test::raw_peer peer(s.address);
  std::array<std::byte, geerpc::wire::hello_size> hello{};
  geerpc::wire::encode_hello({geerpc::wire::protocol_version, geerpc::binary_codec::id, 0, 1u << 20}, hello);
  peer.send(std::span(hello).first(7));
  std::this_thread::sleep_for(20ms);
  peer.send(std::span(hello).subspan(7));
  auto reply = peer.read_hello_reply();
  REQUIRE(reply);
  CHECK(reply->accepted);
  const auto request = test::request_frame(1, "Arith.Sum", Args{20, 22});
  peer.send(std::span(request).first(10));
  std::this_thread::sleep_for(20ms);
  peer.send(std::span(request).subspan(10));
  auto answer = peer.read_frame();
  REQUIRE(answer);
  CHECK(answer->header.status == 0);
  CHECK(test::decode_body<int>(answer->body) == 42);
}

TEMPLATE_TEST_CASE("handle_timeout of nanoseconds::max() never fires: the caller's deadline still does",
                   "[edges][timeout]", GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address, {.timeouts = {.handle = std::chrono::nanoseconds::max()}});
  CHECK(client.template call<int>("Arith.Sum", Args{1, 2}) == 3);
  auto r = client.template try_call<int>(geerpc::with_timeout(100ms), "Arith.WaitForStop", Args{1, 1});
  CHECK(r.code() == geerpc::errc::deadline_exceeded);
  // The server's timer for that request is the caller's budget, not the handle timeout.
  CHECK(s.arith.stops_seen.wait_for_at_least(1));
  CHECK(client.template call<int>("Arith.Sum", Args{2, 3}) == 5);
}

// ---------------------------------------------------------------------------------- max_frame_size

TEMPLATE_TEST_CASE("a client max_frame_size too small for a frame header is refused at dial", "[edges][limits]",
                   GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s;
  for (const std::uint32_t size : {0u, 1u, static_cast<std::uint32_t>(geerpc::wire::header_size - 1)}) {
    INFO("max_frame_size = " << size);
    auto r = geerpc::try_dial<TestType>(s.address, {.limits = {.max_frame_size = size}});
    REQUIRE_FALSE(r);
    CHECK(r.code() == geerpc::errc::invalid_argument);
    CHECK(r.message() == "rpc client: options.limits.max_frame_size must be at least 20 bytes (a frame header), not " +
                             std::to_string(size));
  }
  // The smallest usable limit: a reply without a body fits, a bigger one fails that call only.
  auto smallest = geerpc::try_dial<TestType>(s.address, {.limits = {.max_frame_size = geerpc::wire::header_size}});
  REQUIRE(smallest);
  CHECK(smallest->template try_call<void>("Arith.Nothing", Args{1, 2}));
  CHECK(smallest->template try_call<int>("Arith.Sum", Args{1, 2}).code() == geerpc::errc::remote_error);
  CHECK(smallest->template try_call<void>("Arith.Nothing", Args{1, 2}));
}

TEMPLATE_TEST_CASE("a server max_frame_size too small for a frame header is refused when the server is made",
                   "[edges][limits]", GEERPC_TRANSPORTS) {
  for (const std::uint32_t size : {0u, 1u, static_cast<std::uint32_t>(geerpc::wire::header_size - 1)}) {
    INFO("max_frame_size = " << size);
    geerpc::server_options opts;
    opts.limits.max_frame_size = size;
    try {
      geerpc::basic_server<TestType> server(opts);
      FAIL("a server that could read no request was made");
    } catch (const geerpc::rpc_error& e) {
      CHECK(e.code() == geerpc::errc::invalid_argument);
      CHECK(std::string(e.what()) ==
            "rpc server: options.limits.max_frame_size must be at least 20 bytes (a frame header), not " +
                std::to_string(size));
    }
  }
  // A limit that holds a header is taken.
  geerpc::server_options opts;
  opts.limits.max_frame_size = geerpc::wire::header_size;
  geerpc::basic_server<TestType> server(opts);
  CHECK_FALSE(server.listen("127.0.0.1:0").empty());
}

}  // namespace edges_test
