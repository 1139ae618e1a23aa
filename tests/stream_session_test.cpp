// The stream seam (net/stream.hpp) checked against the TLS plan in docs/transports.md: a test-only
// session that behaves towards the engines as a TLS session does (scramble_session.hpp: bytes held
// inside it while the socket is not readable, reads that wait for writability) is plugged into
// both transports' clients and servers, and real calls go through it: sequential, concurrent,
// asynchronous, larger than socket buffers, with deadlines. An engine that waits on the socket for
// bytes the session holds, or only for POLLIN when the session wants POLLOUT, hangs; the calls'
// deadlines turn that hang into a failure.
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "scramble_session.hpp"
#include "support.hpp"

namespace stream_session_test {

using namespace std::chrono_literals;
using test::Args;

namespace {

// Limits only to catch a hang: a healthy call through the session takes well under a millisecond,
// a large one tens of milliseconds, but under TSan on a loaded 2-core machine the 3 MiB echo took
// more than 3 s (a CI run failed on it), so the limits are far above any healthy figure.
constexpr auto call_limit = 5s;
constexpr auto large_limit = 30s;

template <class T>
T value_or(geerpc::result<T> r, T fallback) {
  return r.has_value() ? std::move(r).value() : std::move(fallback);
}

template <class Transport>
struct scrambled {
  std::shared_ptr<test::scramble_factory> factory = std::make_shared<test::scramble_factory>();
  test::arith_server<Transport> server;
  explicit scrambled(geerpc::server_options opts = {}, const std::string& where = "127.0.0.1:0")
      : server(with_session(opts, factory), where) {}

  geerpc::basic_client<Transport> dial(geerpc::options opts = {}) {
    opts.session = factory;
    if (opts.timeouts.connect == std::chrono::seconds(10)) opts.timeouts.connect = 1s;
    return geerpc::dial<Transport>(server.address, opts);
  }

  static geerpc::server_options with_session(geerpc::server_options opts,
                                             std::shared_ptr<test::scramble_factory> factory) {
    opts.session = std::move(factory);
    return opts;
  }
};

}  // namespace

TEMPLATE_TEST_CASE("calls through a stream session: sequential, concurrent, large, with deadlines", "[stream]",
                   GEERPC_TRANSPORTS) {
  const std::size_t held_before = test::scramble_session::held_.load();
  const std::size_t wanted_before = test::scramble_session::wanted_write_.load();
  scrambled<TestType> s;
  auto client = s.dial();
  for (int i = 0; i < 200; ++i)
    REQUIRE(client.template call<int>(geerpc::with_timeout(call_limit), "Arith.Sum", Args{i, 1}) == i + 1);

  std::vector<std::jthread> callers;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i)
        if (value_or(client.template try_call<int>(geerpc::with_timeout(call_limit), "Arith.Sum", Args{t, i}), -1) ==
            t + i)
          good.fetch_add(1);
    });
  callers.clear();
  CHECK(good.load() == 200);

  // Larger than socket buffers both ways: partial writes, writability, many pieces per frame.
  const std::string big(3u << 20, 'x');
  CHECK(client.template call<std::string>(geerpc::with_timeout(large_limit), "Arith.Echo", big) == big);

  CHECK(client.template try_call<int>(geerpc::with_timeout(50ms), "Arith.WaitForStop", Args{}).code() ==
        geerpc::errc::deadline_exceeded);
  auto late = s.dial({.timeouts = {.handle = 50ms}});
  CHECK(late.template try_call<int>(geerpc::with_timeout(call_limit), "Arith.WaitForStop", Args{}).code() ==
        geerpc::errc::handle_timeout);
  CHECK(client.template try_call<int>(geerpc::with_timeout(call_limit), "Arith.Fail", Args{}).code() ==
        geerpc::errc::remote_error);
  CHECK(client.template call<int>(geerpc::with_timeout(call_limit), "Arith.Sum", Args{5, 6}) == 11);

  CHECK(s.factory->made.load() == 4);  // two clients, and the server's end of each
  // Both of the session's hard cases were met, not only the easy path.
  CHECK(test::scramble_session::held_.load() > held_before);
  CHECK(test::scramble_session::wanted_write_.load() > wanted_before);
}

TEMPLATE_TEST_CASE("calls without a deadline through a stream session", "[stream]", GEERPC_TRANSPORTS) {
  // A caller with no deadline may read its own reply asleep in recv() on a plain socket; with a
  // session it must poll instead (rule 4). A watchdog closes the client if a call hangs, so that
  // the hang fails the test instead of blocking it.
  scrambled<TestType> s;
  auto client = s.dial();
  test::event done;
  std::jthread watchdog([&] {
    if (!done.wait(30s)) client.close();
  });
  int good = 0;
  for (int i = 0; i < 200; ++i) good += value_or(client.template try_call<int>("Arith.Sum", Args{i, 2}), -1) == i + 2;
  const std::string big(1u << 20, 'y');
  const bool echoed = value_or(client.template try_call<std::string>("Arith.Echo", big), std::string()) == big;
  done.set();
  CHECK(good == 200);
  CHECK(echoed);
}

TEMPLATE_TEST_CASE("async calls through a stream session", "[stream][async]", GEERPC_ASYNC_TRANSPORTS) {
  scrambled<TestType> s;
  auto client = s.dial();
  std::vector<decltype(client.template async_call<int>("Arith.Sum", Args{}))> calls;
  for (int i = 0; i < 100; ++i)
    calls.push_back(client.template async_call<int>(geerpc::with_timeout(call_limit), "Arith.Sum", Args{i, i}));
  const std::string big(2u << 20, 'z');
  auto echo = client.template async_call<std::string>(geerpc::with_timeout(large_limit), "Arith.Echo", big);
  for (int i = 0; i < 100; ++i) CHECK(value_or(calls[static_cast<std::size_t>(i)].try_get(), -1) == 2 * i);
  CHECK(value_or(echo.try_get(), std::string()) == big);
}

TEMPLATE_TEST_CASE("a stream session over a Unix socket", "[stream][unix]", GEERPC_TRANSPORTS) {
  test::temp_dir dir;
  scrambled<TestType> s({}, dir.socket());
  auto client = s.dial();
  CHECK(client.template call<int>(geerpc::with_timeout(call_limit), "Arith.Sum", Args{2, 3}) == 5);
  const std::string big(1u << 20, 'u');
  CHECK(client.template call<std::string>(geerpc::with_timeout(large_limit), "Arith.Echo", big) == big);
}

TEMPLATE_TEST_CASE("the session really carries the bytes: a peer without it cannot talk to a server with it",
                   "[stream]", GEERPC_TRANSPORTS) {
  scrambled<TestType> s;
  auto plain = geerpc::try_dial<TestType>(s.server.address, {.timeouts = {.connect = 1s}});
  CHECK_FALSE(plain.has_value());
  // And the server goes on serving those that have it.
  CHECK(s.dial().template call<int>(geerpc::with_timeout(call_limit), "Arith.Sum", Args{1, 1}) == 2);
}

namespace {
struct refusing_factory final : geerpc::net::stream_session_factory {
  std::unique_ptr<geerpc::net::stream_session> make(int, role) override {
    throw std::runtime_error("no session today");
  }
};
}  // namespace

TEMPLATE_TEST_CASE("a session factory that refuses fails dial(), or closes that one accepted connection", "[stream]",
                   GEERPC_TRANSPORTS) {
  test::arith_server<TestType> plain_server;
  geerpc::options opts{.timeouts = {.connect = 1s}};
  opts.session = std::make_shared<refusing_factory>();
  auto refused = geerpc::try_dial<TestType>(plain_server.address, opts);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.code() == geerpc::errc::connect_failed);
  CHECK_THAT(refused.message(), Catch::Matchers::Contains("no session today"));

  geerpc::server_options refusing;
  refusing.session = std::make_shared<refusing_factory>();
  test::arith_server<TestType> server(refusing);
  CHECK_FALSE(geerpc::try_dial<TestType>(server.address, {.timeouts = {.connect = 1s}}).has_value());
  CHECK(server.server.connection_count() == 0);
}

}  // namespace stream_session_test
