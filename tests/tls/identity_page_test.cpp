// The debug page and the peer's identity: its policy sees what a connection proved (debug_peer::
// identity(); local() admits a peer that passed mutual TLS), and the page lists who each
// connection's peer is, a hostile certificate's names escaped in the HTML and valid in the JSON.
#include <sys/socket.h>
#include <sys/time.h>

#include <string>
#include <vector>

#include "catch.hpp"
#include "strict_json.hpp"
#include "tls_support.hpp"

namespace tls_identity_page_test {

using namespace std::chrono_literals;
using geerpc::debug_page_policy;
using geerpc::debug_peer;
using geerpc::tls::client_certificates;
using geerpc::tls::pem;

// A remote peer (not loopback, not a Unix socket) that proved `who`.
debug_peer remote(const geerpc::net::peer_identity& who) {
  return geerpc::detail::debug_peer_of("10.1.2.3:40000", &who);
}

TEST_CASE("debug page policy: local() admits a remote peer that passed mutual TLS, no other remote one",
          "[tls][identity][debug_page]") {
  geerpc::net::peer_identity alice{.encrypted = true, .verified = true, .subject = "CN=alice"};
  alice.uris = {"spiffe://example.org/ops/alice"};
  const geerpc::net::peer_identity anonymous_tls{.encrypted = true};
  const debug_page_policy local = debug_page_policy::local();

  CHECK(local.allows(remote(alice)));
  CHECK(remote(alice).mutual_tls());
  CHECK_FALSE(remote(alice).local());
  CHECK_FALSE(local.allows(remote(anonymous_tls)));                        // TLS without a certificate
  CHECK_FALSE(local.allows(geerpc::detail::debug_peer_of("10.1.2.3:1")));  // plaintext
  CHECK(local.allows(geerpc::detail::debug_peer_of("127.0.0.1:1")));       // local, as before
  CHECK(debug_page_policy().allows(remote(alice)));                        // the default is local()
  CHECK(debug_page_policy(true).allows(remote(alice)));
  CHECK_FALSE(debug_page_policy::off().allows(remote(alice)));

  // A predicate of one's own reads the identity: here, operators' SPIFFE IDs only, local or not.
  const auto ops = debug_page_policy::allow_if(
      [](const debug_peer& peer) { return peer.identity().has_uri("spiffe://example.org/ops/alice"); });
  CHECK(ops.allows(remote(alice)));
  geerpc::net::peer_identity bob{.encrypted = true, .verified = true, .subject = "CN=bob"};
  CHECK_FALSE(ops.allows(remote(bob)));
  CHECK_FALSE(ops.allows(geerpc::detail::debug_peer_of("127.0.0.1:1")));
  CHECK_FALSE(debug_peer{}.identity().encrypted);  // a peer made by hand proved nothing
}

// An HTTPS GET of `path` on `address` (host:port) with the client certificate `who`, or none:
// the whole answer, head and body, as the server sent it before closing.
std::string https_get(const std::string& address, const std::string& path, const test::tls::identity* who) {
  test::tls::raw_tls_client raw(address);
  const timeval limit{10, 0};  // a server that never answers fails the test instead of hanging it
  ::setsockopt(raw.socket().fd(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  if (who != nullptr) {
    const geerpc::tls::detail::bio_ptr cert_bio = geerpc::tls::detail::memory_bio(who->certificate);
    const geerpc::tls::detail::bio_ptr key_bio = geerpc::tls::detail::memory_bio(who->key);
    const geerpc::tls::detail::x509_ptr cert(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
    std::unique_ptr<EVP_PKEY, geerpc::tls::detail::key_deleter> key(
        PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
    REQUIRE(SSL_use_certificate(raw.ssl(), cert.get()) == 1);
    REQUIRE(SSL_use_PrivateKey(raw.ssl(), key.get()) == 1);
  }
  REQUIRE(raw.handshake());
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
  REQUIRE(raw.write(std::as_bytes(std::span(request))));
  std::string answer;
  char buffer[16384];
  std::size_t n = 0;
  while (SSL_read_ex(raw.ssl(), buffer, sizeof buffer, &n) == 1) answer.append(buffer, n);
  ERR_clear_error();
  return answer;
}

std::string body_of(const std::string& answer) {
  REQUIRE(answer.starts_with("HTTP/1.0 200 "));
  const auto at = answer.find("\r\n\r\n");
  REQUIRE(at != std::string::npos);
  return answer.substr(at + 4);
}

TEMPLATE_TEST_CASE("debug page: a predicate on the identity sees what the TLS connection proved", "[tls][identity]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::authority clients("client CA");
  auto settings = pki.server_settings();
  settings.clients = client_certificates::request;
  settings.client_ca = pem::in_memory(clients.certificate());
  geerpc::server_options opts;
  opts.observability.debug_page = debug_page_policy::allow_if([](const debug_peer& peer) { return peer.mutual_tls(); });
  test::tls::tls_server<TestType> s(settings, opts);
  const auto alice = clients.issue({.common_name = "alice"});

  CHECK(https_get(s.server.address, "/debug/geerpc", nullptr).starts_with("HTTP/1.0 404 "));
  CHECK(body_of(https_get(s.server.address, "/debug/geerpc", &alice)).find("<h2>Connections</h2>") !=
        std::string::npos);
}

TEMPLATE_TEST_CASE("debug page: who each connection is, a hostile certificate's names escaped and valid JSON",
                   "[tls][identity][hostile]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::authority clients("client CA");
  auto settings = pki.server_settings();
  settings.clients = client_certificates::request;
  settings.client_ca = pem::in_memory(clients.certificate());
  test::tls::tls_server<TestType> s(settings);
  // Quotes, markup, control characters and bytes that are no UTF-8 in the CN and in a URI SAN.
  const auto eve = clients.issue({.common_name = "<script>\"eve\" & \x01\x1b[31m\xC3\x28</td>",
                                  .uris = {"spiffe://x/<b>\"\xFF\xFE\x01"},
                                  .raw_common_name = true});
  auto hostile = test::tls::dial<TestType>(s.address(), [&] {
    auto c = pki.client_settings();
    c.certificate = pem::in_memory(eve.certificate);
    c.key = pem::in_memory(eve.key);
    return c;
  }());
  REQUIRE(hostile.has_value());
  auto anonymous = test::tls::dial<TestType>(s.address(), pki.client_settings());
  REQUIRE(anonymous.has_value());
  // Each connection's hello has been accepted once a call of it is answered.
  for (auto* client : {&hostile.value(), &anonymous.value()})
    REQUIRE(client->template try_call<int>(geerpc::with_timeout(test::tls::call_limit), "Arith.Sum", test::Args{1, 2})
                .has_value());

  const std::string html = body_of(https_get(s.server.address, "/debug/geerpc", nullptr));
  CHECK(test::valid_utf8(html));
  CHECK(html.find("<script>") == std::string::npos);
  CHECK(html.find("<b>") == std::string::npos);
  // RFC 2253 escaped the CN's quotes and controls; the page escaped the rest.
  CHECK(html.find("CN=\\&lt;script\\&gt;\\&quot;eve\\&quot; &amp; \\01\\1B[31m\xC3\x83(\\&lt;/td\\&gt;") !=
        std::string::npos);
  CHECK(html.find("spiffe://x/&lt;b&gt;&quot;") != std::string::npos);
  CHECK(html.find("<td>no certificate</td>") != std::string::npos);  // the anonymous TLS client

  const std::string json = body_of(https_get(s.server.address, "/debug/geerpc/stats.json", nullptr));
  const std::string why = test::strict_json::check(json);
  INFO("the JSON: " << why);
  CHECK(why.empty());
  CHECK(json.find(R"("tls":{"verified":true,"subject":"CN=\\<script\\>\\\"eve\\\" & \\01\\1B[31m)") !=
        std::string::npos);
  CHECK(json.find(R"("uri":["spiffe://x/<b>\"\ufffd\ufffd\u0001"])") != std::string::npos);
  CHECK(json.find(R"("tls":{"verified":false})") != std::string::npos);
}

}  // namespace tls_identity_page_test
