// One port, TLS or not (tls::server_settings::required): the server's TLS session looks at the
// first byte; a plaintext peer on a port that requires TLS is refused in its own protocol (a geerpc
// hello, an HTTP request) with how to reach the port, and one on a port that does not is served
// beside TLS clients. Peers that send 0x16 then garbage, nothing at all, or their first bytes
// one at a time get what they got before the sniffing existed.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "tls_support.hpp"

namespace tls_oneport_test {

using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using test::Args;
using test::tls::call_limit;

geerpc::tls::server_settings optional_tls(const test::tls::pki& pki) {
  geerpc::tls::server_settings settings = pki.server_settings();
  settings.required = false;
  return settings;
}

geerpc::server_options handshake_within(std::chrono::milliseconds limit) {
  geerpc::server_options opts;
  opts.timeouts.handshake = limit;
  return opts;
}

// Whether a plaintext client of `Transport` can dial `address` and make a call there.
template <class Transport>
bool serves_plaintext(const std::string& address) {
  auto client = geerpc::try_dial<Transport>(address, {.timeouts = {.connect = 5s}});
  if (!client.has_value()) return false;
  auto sum = client.value().template try_call<int>(geerpc::with_timeout(call_limit), "Arith.Sum", Args{20, 22});
  return sum.has_value() && sum.value() == 42;
}

// `bytes` sent one at a time, a little apart, so that the server's first read finds one byte.
void trickle(test::raw_peer& peer, std::span<const std::byte> bytes, std::size_t how_many) {
  for (std::size_t i = 0; i < how_many && i < bytes.size(); ++i) {
    peer.send(bytes.subspan(i, 1));
    std::this_thread::sleep_for(20ms);
  }
  if (how_many < bytes.size()) peer.send(bytes.subspan(how_many));
}

TEMPLATE_TEST_CASE("a plaintext geerpc client on a port that requires TLS is refused saying how to dial it",
                   "[tls][oneport]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());  // required: the default
  auto plain = geerpc::try_dial<TestType>(s.server.address, {.timeouts = {.connect = 5s}});
  REQUIRE_FALSE(plain.has_value());
  CHECK(plain.code() == geerpc::errc::handshake_rejected);
  CHECK_THAT(plain.message(), Contains("this port requires TLS") && Contains("dial tls@127.0.0.1:" + s.port()));
  CHECK(s.factory->refused_plaintext() == 1);
  CHECK(s.factory->failed_handshakes() == 0);
  CHECK(s.server.server.refused_connections() == 1);  // the debug page shows it too
  // The server goes on: a TLS client right after, and another plaintext one refused the same way.
  CHECK(test::tls::serves<TestType>(s.address(), pki.client_settings()));
  CHECK(geerpc::try_dial<TestType>(s.server.address, {.timeouts = {.connect = 5s}}).code() ==
        geerpc::errc::handshake_rejected);
  CHECK(s.factory->refused_plaintext() == 2);
}

TEMPLATE_TEST_CASE("plaintext HTTP on a port that requires TLS gets a 400 saying so", "[tls][oneport]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  test::raw_peer peer(s.server.address);
  peer.send("GET /debug/geerpc HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  const auto answer = peer.read_all();
  REQUIRE(answer.has_value());
  CHECK_THAT(*answer, StartsWith("HTTP/1.0 400 Bad Request\r\n") && Contains("text/plain") &&
                          Contains("geerpc: this port requires TLS: use https://127.0.0.1:" + s.port() + "/\n"));
  CHECK_THAT(*answer, !Contains("<html"));  // not the page
  CHECK(s.factory->refused_plaintext() == 1);
  CHECK(test::tls::serves<TestType>(s.address(), pki.client_settings()));
}

TEMPLATE_TEST_CASE("a port that does not require TLS serves plaintext and TLS clients at once", "[tls][oneport]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(optional_tls(pki));
  auto tls_client = test::tls::dial<TestType>(s.address(), pki.client_settings());
  auto plain_client = geerpc::try_dial<TestType>(s.server.address, {.timeouts = {.connect = 5s}});
  REQUIRE(tls_client.has_value());
  REQUIRE(plain_client.has_value());
  std::atomic<int> good{0};
  {
    std::vector<std::jthread> callers;
    for (int t = 0; t < 4; ++t)
      callers.emplace_back([&, t] {
        auto& client = t % 2 == 0 ? tls_client.value() : plain_client.value();
        for (int i = 0; i < 50; ++i) {
          auto r = client.template try_call<int>(geerpc::with_timeout(call_limit), "Arith.Sum", Args{t, i});
          if (r.has_value() && r.value() == t + i) good.fetch_add(1);
        }
      });
  }
  CHECK(good.load() == 200);
  // Plaintext HTTP is served too: the debug page, to this loopback peer.
  test::raw_peer peer(s.server.address);
  peer.send("GET /debug/geerpc/stats.json HTTP/1.0\r\n\r\n");
  const auto answer = peer.read_all();
  REQUIRE(answer.has_value());
  CHECK_THAT(*answer, StartsWith("HTTP/1.0 200 OK\r\n") && Contains("application/json"));
  CHECK(s.factory->refused_plaintext() == 0);
  CHECK(s.factory->failed_handshakes() == 0);
}

TEMPLATE_TEST_CASE("a peer that sends 0x16 then garbage is closed, and the server serves others", "[tls][oneport]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(optional_tls(pki));
  test::raw_peer peer(s.server.address);
  const std::vector<std::byte> garbage = {std::byte{0x16}, std::byte{0x03}, std::byte{0x01},
                                          std::byte{0x00}, std::byte{0x04}, std::byte{0xde},
                                          std::byte{0xad}, std::byte{0xbe}, std::byte{0xef}};
  peer.send(garbage);
  CHECK(peer.closed_by_peer(10s));
  // Taken for TLS (0x16), so refused by TLS, not served as plaintext.
  CHECK(test::eventually([&] { return s.factory->failed_handshakes() == 1; }));
  CHECK_THAT(s.factory->last_failure(), Contains("tls: "));
  CHECK(test::eventually([&] { return s.server.server.connection_count() == 0; }));
  CHECK(test::tls::serves<TestType>(s.address(), pki.client_settings()));
  CHECK(serves_plaintext<TestType>(s.server.address));
}

TEMPLATE_TEST_CASE("a peer that sends nothing is still dropped at the handshake timeout", "[tls][oneport]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  for (const bool required : {true, false}) {
    geerpc::tls::server_settings settings = pki.server_settings();
    settings.required = required;
    test::tls::tls_server<TestType> s(settings, handshake_within(300ms));
    test::raw_peer silent(s.server.address);
    CHECK(test::tls::serves<TestType>(s.address(), pki.client_settings()));
    CHECK(silent.closed_by_peer(10s));
    CHECK(test::eventually([&] { return s.server.server.connection_count() == 0; }));
    CHECK(s.factory->refused_plaintext() == 0);
  }
}

TEMPLATE_TEST_CASE("first bytes trickled one at a time are recognised all the same", "[tls][oneport]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> optional(optional_tls(pki));
  test::tls::tls_server<TestType> required(pki.server_settings());

  SECTION("a ClientHello: its first byte alone, then the rest, is answered in TLS") {
    const auto hello = test::tls::client_hello();
    test::raw_peer peer(optional.server.address);
    trickle(peer, hello, 1);
    const auto record = peer.read(5);  // the ServerHello's record header
    REQUIRE(record.has_value());
    CHECK((*record)[0] == std::byte{0x16});
    CHECK(optional.factory->refused_plaintext() == 0);
  }
  SECTION("a geerpc hello, byte by byte, is served on an optional port") {
    test::raw_peer peer(optional.server.address);
    std::array<std::byte, geerpc::wire::hello_size> hello{};
    geerpc::wire::encode_hello(
        {geerpc::wire::protocol_version, geerpc::binary_codec::id, 0, geerpc::wire::default_max_frame_size}, hello);
    trickle(peer, hello, 4);
    const auto reply = peer.read_hello_reply();
    REQUIRE(reply.has_value());
    CHECK(reply->accepted);
  }
  SECTION("a geerpc hello, byte by byte, is refused on a required port") {
    test::raw_peer peer(required.server.address);
    std::array<std::byte, geerpc::wire::hello_size> hello{};
    geerpc::wire::encode_hello(
        {geerpc::wire::protocol_version, geerpc::binary_codec::id, 0, geerpc::wire::default_max_frame_size}, hello);
    trickle(peer, hello, 4);
    const auto reply = peer.read_hello_reply();
    REQUIRE(reply.has_value());
    CHECK_FALSE(reply->accepted);
    CHECK_THAT(reply->reason, Contains("this port requires TLS"));
    CHECK(peer.closed_by_peer(10s));
  }
}

}  // namespace tls_oneport_test
