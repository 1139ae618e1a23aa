// Peers that do not play by the rules, against a TLS server (and a TLS client against servers that
// do not speak it): each gets a clear failure on the side that should see it, nothing is held
// beyond the handshake timeout, and the server keeps serving others meanwhile.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <array>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "tls_support.hpp"

namespace tls_hostile_test {

using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using test::Args;

geerpc::server_options handshake_within(std::chrono::milliseconds limit) {
  geerpc::server_options opts;
  opts.timeouts.handshake = limit;
  return opts;
}

TEMPLATE_TEST_CASE("a plaintext client to a TLS server fails, and the server says why", "[tls][hostile]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  auto plain = geerpc::try_dial<TestType>(s.server.address, {.timeouts = {.connect = 5s}});
  REQUIRE_FALSE(plain.has_value());
  // Refused in the hello reply (oneport_test.cpp has the rest), not as a failed TLS handshake.
  CHECK(plain.code() == geerpc::errc::handshake_rejected);
  CHECK_THAT(plain.message(), Contains("this port requires TLS"));
  CHECK(s.factory->refused_plaintext() == 1);
  CHECK(test::tls::serves<TestType>(s.address(), pki.client_settings()));
}

TEMPLATE_TEST_CASE("a TLS client to a plaintext server fails with the TLS reason", "[tls][hostile]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::arith_server<TestType> plain;
  auto dialed = test::tls::dial<TestType>(plain.address, pki.client_settings());
  REQUIRE_FALSE(dialed.has_value());
  CHECK(dialed.code() == geerpc::errc::connect_failed);
  CHECK_THAT(dialed.message(), Contains("tls: ") && Contains("SSL routines"));
  // The plaintext server goes on serving plaintext clients.
  auto client = geerpc::dial<TestType>(plain.address);
  CHECK(client.template call<int>(geerpc::with_timeout(test::tls::call_limit), "Arith.Sum", Args{1, 1}) == 2);
}

TEMPLATE_TEST_CASE("a peer that stops mid-handshake is dropped with a reason", "[tls][hostile]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  const auto hello = test::tls::client_hello();
  {
    test::raw_peer peer(s.server.address);
    peer.send(std::span(hello).first(hello.size() / 2));
  }  // gone, half a ClientHello sent
  CHECK(test::eventually([&] { return s.factory->failed_handshakes() == 1; }));
  CHECK_THAT(s.factory->last_failure(), Contains("during the TLS handshake"));
  CHECK(test::eventually([&] { return s.server.server.connection_count() == 0; }));
  CHECK(test::tls::serves<TestType>(s.address(), pki.client_settings()));
}

TEMPLATE_TEST_CASE("a peer that sends nothing is dropped at the handshake timeout", "[tls][hostile]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings(), handshake_within(300ms));
  test::raw_peer silent(s.server.address);
  CHECK(test::tls::serves<TestType>(s.address(), pki.client_settings()));
  CHECK(silent.closed_by_peer(10s));
  CHECK(test::eventually([&] { return s.server.server.connection_count() == 0; }));
}

TEMPLATE_TEST_CASE("stalled handshakes hold connections, not threads, and not for long", "[tls][hostile]",
                   GEERPC_ASYNC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings(), handshake_within(500ms));
  REQUIRE(test::tls::serves<TestType>(s.address(), pki.client_settings()));
  REQUIRE(test::eventually([&] { return s.server.server.connection_count() == 0; }));
  const int threads = test::thread_count();
  const auto hello = test::tls::client_hello();
  std::vector<std::unique_ptr<test::raw_peer>> stalled;
  for (int i = 0; i < 20; ++i) {
    stalled.push_back(std::make_unique<test::raw_peer>(s.server.address));
    stalled.back()->send(std::span(hello).first(hello.size() / 2));
  }
  CHECK(test::eventually([&] { return s.server.server.connection_count() == 20; }));
  CHECK(test::thread_count() <= threads);  // (the handler pool may shrink meanwhile, never grow for these)
  for (auto& peer : stalled) CHECK(peer->closed_by_peer(10s));
  CHECK(test::eventually([&] { return s.server.server.connection_count() == 0; }));
}

TEMPLATE_TEST_CASE("a ClientHello trickled a byte per 100 ms ends at the handshake timeout", "[tls][hostile]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings(), handshake_within(1s));
  const auto hello = test::tls::client_hello();
  test::raw_peer slow(s.server.address);
  bool served_meanwhile = false, closed = false;
  std::size_t sent = 0;
  while (sent < hello.size() && !closed) {
    slow.send(std::span(hello).subspan(sent++, 1));
    if (sent == 3) served_meanwhile = test::tls::serves<TestType>(s.address(), pki.client_settings());
    // The pace of the trickle, and the event it waits for: the server closing the connection.
    pollfd p{slow.fd(), POLLIN, 0};
    closed = ::poll(&p, 1, 100) == 1;
  }
  CHECK(closed);
  CHECK(slow.closed_by_peer(10s));
  CHECK(sent < hello.size());  // it never got the whole ClientHello in
  CHECK(served_meanwhile);
}

TEMPLATE_TEST_CASE("garbage after a valid handshake closes that connection only", "[tls][hostile]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  test::tls::raw_tls_client raw(s.server.address);
  REQUIRE(raw.handshake());
  // A forged application-data record (its bytes cannot authenticate), then plain text.
  std::string forged = "\x17\x03\x03";
  forged += static_cast<char>(0);
  forged += static_cast<char>(64);
  forged += std::string(64, 'g');
  raw.socket().send(forged);
  raw.socket().send(std::string_view("GET /debug/geerpc HTTP/1.1\r\n\r\n"));
  CHECK(raw.socket().closed_by_peer(10s));
  CHECK(test::eventually([&] { return s.factory->failed_after_handshake() == 1; }));
  CHECK(s.factory->failed_handshakes() == 0);
  CHECK_THAT(s.factory->last_failure(), Contains("tls: ") && Contains("SSL routines"));
  CHECK(test::tls::serves<TestType>(s.address(), pki.client_settings()));
}

TEMPLATE_TEST_CASE("a record header announcing more than TLS allows is refused before its body", "[tls][hostile]",
                   GEERPC_TRANSPORTS) {
  // A record holds at most 16 KiB of plaintext (plus its expansion); the header says 65535 bytes,
  // and none of them follow: the server refuses on the header alone, without waiting for them.
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  test::tls::raw_tls_client raw(s.server.address);
  REQUIRE(raw.handshake());
  raw.socket().send(std::string_view("\x17\x03\x03\xff\xff"));
  CHECK(raw.socket().closed_by_peer(10s));
  CHECK(test::eventually([&] { return s.factory->failed_after_handshake() == 1; }));
  CHECK(s.factory->failed_handshakes() == 0);
  CHECK_THAT(s.factory->last_failure(), Contains("tls: ") && Contains("SSL routines"));
  CHECK(test::tls::serves<TestType>(s.address(), pki.client_settings()));
}

TEMPLATE_TEST_CASE("key updates and a request in one segment: the request is answered", "[tls][hostile]",
                   GEERPC_TRANSPORTS) {
  // The session's BIO takes the whole segment in one recv; a read that meets a record without
  // data (each KeyUpdate) must go on to the request behind them, which no readiness of the socket
  // would announce again.
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  test::tls::raw_tls_client raw(s.server.address);
  REQUIRE(raw.handshake());
  std::array<std::byte, geerpc::wire::hello_size> hello{};
  geerpc::wire::encode_hello({.codec_id = geerpc::binary_codec::id, .max_response_size = 1u << 20}, hello);
  REQUIRE(raw.write(hello));
  REQUIRE(raw.read(geerpc::wire::hello_reply_header_size));
  const int on = 1, off = 0;
  ::setsockopt(raw.socket().fd(), IPPROTO_TCP, TCP_CORK, &on, sizeof on);  // one segment for all below
  for (int i = 0; i < 100; ++i) {
    REQUIRE(SSL_key_update(raw.ssl(), SSL_KEY_UPDATE_NOT_REQUESTED) == 1);
    REQUIRE(SSL_do_handshake(raw.ssl()) == 1);  // sends it
  }
  REQUIRE(raw.write(test::request_frame(1, "Arith.Sum", test::Args{40, 2})));
  ::setsockopt(raw.socket().fd(), IPPROTO_TCP, TCP_CORK, &off, sizeof off);
  const timeval limit{10, 0};  // a server that missed the request: the read fails instead of waiting for ever
  ::setsockopt(raw.socket().fd(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  const auto expected = test::response_frame(1, 42);
  const auto reply = raw.read(expected.size());
  REQUIRE(reply.has_value());
  CHECK(*reply == expected);
}

TEMPLATE_TEST_CASE("a client that offers no ALPN geerpc/1 is refused", "[tls][hostile]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  test::tls::raw_tls_client raw(s.server.address, {.alpn = false});
  raw.handshake();  // TLS 1.3: the client may finish before the server has looked
  CHECK(raw.socket().closed_by_peer(10s));
  CHECK(test::eventually([&] { return s.factory->failed_handshakes() == 1; }));
  CHECK_THAT(s.factory->last_failure(), Contains("the client offered no ALPN protocol geerpc/1"));
  CHECK(test::tls::serves<TestType>(s.address(), pki.client_settings()));
}

TEMPLATE_TEST_CASE("a server that selects no ALPN protocol is refused by the client", "[tls][hostile]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  // A TLS server made with OpenSSL directly, from geerpc's context less its ALPN choice.
  const geerpc::tls::context_ptr ctx = geerpc::tls::make_server_context(pki.server_settings());
  SSL_CTX_set_alpn_select_cb(ctx.get(), nullptr, nullptr);
  test::listener listening;
  std::jthread server([&] {
    const auto accepted = test::accept_raw(listening, 10s);  // none: the dial failed first
    if (accepted == nullptr) return;
    std::unique_ptr<SSL, test::tls::ssl_deleter> ssl(SSL_new(ctx.get()));
    SSL_set_fd(ssl.get(), accepted->fd());
    if (SSL_accept(ssl.get()) == 1) accepted->closed_by_peer(10s);
    ERR_clear_error();
  });
  auto dialed = test::tls::dial<TestType>("tls@" + listening.address(), pki.client_settings());
  REQUIRE_FALSE(dialed.has_value());
  CHECK(dialed.code() == geerpc::errc::connect_failed);
  CHECK_THAT(dialed.message(), Contains("the server selected no ALPN protocol (geerpc/1 is required)"));
}

TEMPLATE_TEST_CASE("a renegotiation attempt is refused and the server goes on", "[tls][hostile]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  test::tls::raw_tls_client raw(s.server.address, {.max_version = TLS1_2_VERSION});
  REQUIRE(raw.handshake());
  REQUIRE(SSL_version(raw.ssl()) == TLS1_2_VERSION);
  // The server answers a renegotiating ClientHello with a no_renegotiation alert, and the
  // client's second handshake fails with that reason.
  REQUIRE(SSL_renegotiate(raw.ssl()) == 1);
  ERR_clear_error();
  CHECK(SSL_do_handshake(raw.ssl()) != 1);
  CHECK_THAT(geerpc::tls::detail::drain_errors(), Contains("no renegotiation"));
  CHECK(test::tls::serves<TestType>(s.address(), pki.client_settings()));
}

TEMPLATE_TEST_CASE("a TLS dial to a server that never answers ends at the connect timeout", "[tls][hostile]",
                   GEERPC_TRANSPORTS) {
  // The kernel completes the TCP connect from the backlog; nobody ever reads the ClientHello.
  test::listener silent;
  test::tls::pki pki;
  auto dialed =
      test::tls::dial<TestType>("tls@" + silent.address(), pki.client_settings(), {.timeouts = {.connect = 300ms}});
  REQUIRE_FALSE(dialed.has_value());
  CHECK(dialed.code() == geerpc::errc::connect_timeout);
  CHECK_THAT(dialed.message(), Contains("connect timeout: expect within 300ms"));
}

}  // namespace tls_hostile_test
