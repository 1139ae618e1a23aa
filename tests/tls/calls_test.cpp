// Calls over TLS on both transports: sequential, concurrent, larger than socket buffers, with a
// deadline and a handle timeout; the tls@ address form, and what dial() says without a factory.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "tls_support.hpp"

namespace tls_calls_test {

using namespace std::chrono_literals;
using test::Args;
using test::tls::call_limit;

TEMPLATE_TEST_CASE("TLS calls: sequential, concurrent, large, with deadlines", "[tls]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  auto dialed = test::tls::dial<TestType>(s.address(), pki.client_settings());
  REQUIRE(dialed.has_value());
  auto& client = dialed.value();
  for (int i = 0; i < 100; ++i)
    REQUIRE(client.template call<int>(geerpc::with_timeout(call_limit), "Arith.Sum", Args{i, 1}) == i + 1);

  std::vector<std::jthread> callers;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        auto r = client.template try_call<int>(geerpc::with_timeout(call_limit), "Arith.Sum", Args{t, i});
        if (r.has_value() && r.value() == t + i) good.fetch_add(1);
      }
    });
  callers.clear();
  CHECK(good.load() == 200);

  // Larger than socket buffers both ways: many records, partial writes, a writer that retries.
  const std::string big(3u << 20, 'x');
  CHECK(client.template call<std::string>(geerpc::with_timeout(test::tls::large_limit), "Arith.Echo", big) == big);

  CHECK(client.template try_call<int>(geerpc::with_timeout(50ms), "Arith.WaitForStop", Args{}).code() ==
        geerpc::errc::deadline_exceeded);
  auto late = test::tls::dial<TestType>(s.address(), pki.client_settings(), {.timeouts = {.handle = 50ms}});
  REQUIRE(late.has_value());
  CHECK(late.value().template try_call<int>(geerpc::with_timeout(call_limit), "Arith.WaitForStop", Args{}).code() ==
        geerpc::errc::handle_timeout);
  CHECK(client.template call<int>(geerpc::with_timeout(call_limit), "Arith.Sum", Args{5, 6}) == 11);
  CHECK(s.factory->failed_handshakes() == 0);
}

TEMPLATE_TEST_CASE("TLS calls without a deadline", "[tls]", GEERPC_TRANSPORTS) {
  // A caller with no deadline must poll, not sleep in recv(), while a session holds the stream: a
  // watchdog closes the client if a call hangs, so that the hang fails the test.
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  auto dialed = test::tls::dial<TestType>(s.address(), pki.client_settings());
  REQUIRE(dialed.has_value());
  auto& client = dialed.value();
  test::event done;
  std::jthread watchdog([&] {
    if (!done.wait(20s)) client.close();
  });
  int good = 0;
  for (int i = 0; i < 100; ++i) {
    auto r = client.template try_call<int>("Arith.Sum", Args{i, 2});
    good += r.has_value() && r.value() == i + 2;
  }
  const std::string big(1u << 20, 'y');
  auto echoed = client.template try_call<std::string>("Arith.Echo", big);
  done.set();
  CHECK(good == 100);
  CHECK((echoed.has_value() && echoed.value() == big));
}

TEMPLATE_TEST_CASE("tls@host:port, and host:port with a TLS factory, both dial TLS", "[tls]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  CHECK(test::tls::serves<TestType>(s.address(), pki.client_settings()));
  CHECK(test::tls::serves<TestType>(s.server.address, pki.client_settings()));
}

TEMPLATE_TEST_CASE("a host name from the address is checked against the certificate", "[tls]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings(), {}, "localhost:0");
  CHECK(test::tls::serves<TestType>("tls@localhost:" + s.port(), pki.client_settings()));
}

TEMPLATE_TEST_CASE("calls with the record buffers kept while idle", "[tls]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  auto server_settings = pki.server_settings();
  server_settings.release_idle_buffers = false;
  test::tls::tls_server<TestType> s(server_settings);
  auto client_settings = pki.client_settings();
  client_settings.release_idle_buffers = false;
  auto dialed = test::tls::dial<TestType>(s.address(), client_settings);
  REQUIRE(dialed.has_value());
  const std::string big(1u << 20, 'k');
  CHECK(dialed.value().template call<std::string>(geerpc::with_timeout(test::tls::large_limit), "Arith.Echo", big) ==
        big);
}

TEMPLATE_TEST_CASE("tls@ without a TLS factory fails dial() saying what to set", "[tls]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  auto plain = geerpc::try_dial<TestType>(s.address(), {.timeouts = {.connect = 5s}});
  REQUIRE_FALSE(plain.has_value());
  CHECK(plain.code() == geerpc::errc::invalid_argument);
  CHECK_THAT(plain.message(),
             Catch::Matchers::Contains("options.session") && Catch::Matchers::Contains("geerpc::tls::client"));
}

TEST_CASE("a server cannot listen on tls@: it is TLS by its session factory", "[tls]") {
  geerpc::server server;
  try {
    server.listen("tls@127.0.0.1:0");
    FAIL("listen accepted tls@");
  } catch (const geerpc::rpc_error& e) {
    CHECK(e.code() == geerpc::errc::invalid_argument);
    CHECK_THAT(e.what(), Catch::Matchers::Contains("server_options::session"));
  }
}

}  // namespace tls_calls_test
