// The client's checks, on by default: the chain against the given CA (or the system's store), the
// validity window, the host name or IP address; each failure fails dial() with connect_failed and
// a message naming the reason, the server counts a refused handshake and keeps serving. Turning
// the checks off takes the option that says it is insecure.
#include <string>
#include <thread>

#include "catch.hpp"
#include "tls_support.hpp"

namespace tls_verification_test {

using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using geerpc::tls::pem;

// Dials `address` with `client` and expects connect_failed with `reason` in the message; the
// server `s` (the one dialed, or another if that one is bad) then still serves a good client.
template <class Transport>
void refused(test::tls::tls_server<Transport>& s, const test::tls::pki& good, const std::string& address,
             const geerpc::tls::client_settings& client, const std::string& reason) {
  auto dialed = test::tls::dial<Transport>(address, client);
  REQUIRE_FALSE(dialed.has_value());
  CHECK(dialed.code() == geerpc::errc::connect_failed);
  CHECK_THAT(dialed.message(), Contains("certificate verify failed") && Contains(reason));
  CHECK(test::tls::serves<Transport>(s.address(), good.client_settings()));
}

TEMPLATE_TEST_CASE("a server whose CA the client does not trust is refused", "[tls][verify]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  test::tls::authority other("another CA");
  refused(s, pki, s.address(), {.ca = pem::in_memory(other.certificate())}, "unable to get local issuer certificate");
  // The system's store (the default) does not hold the test CA either.
  refused(s, pki, s.address(), {}, "unable to get local issuer certificate");
  // The server saw the client's alert.
  CHECK(test::eventually([&] { return s.factory->failed_handshakes() >= 2; }));
  CHECK_THAT(s.factory->last_failure(), Contains("tls: ") && Contains("alert"));
}

TEMPLATE_TEST_CASE("an expired or not yet valid server certificate is refused", "[tls][verify]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> good(pki.server_settings());
  const auto expired = pki.ca.issue({.ips = {"127.0.0.1"}, .not_before = -48h, .not_after = -1h});
  test::tls::tls_server<TestType> old(
      {.certificate = pem::in_memory(expired.certificate), .key = pem::in_memory(expired.key)});
  refused(good, pki, old.address(), pki.client_settings(), "certificate has expired");
  const auto future = pki.ca.issue({.ips = {"127.0.0.1"}, .not_before = 1h, .not_after = 48h});
  test::tls::tls_server<TestType> early(
      {.certificate = pem::in_memory(future.certificate), .key = pem::in_memory(future.key)});
  refused(good, pki, early.address(), pki.client_settings(), "certificate is not yet valid");
}

TEMPLATE_TEST_CASE("the host name is checked: the dialed one, or server_name", "[tls][verify]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  auto named = pki.client_settings();
  named.server_name = "rpc.test";
  CHECK(test::tls::serves<TestType>(s.address(), named));
  named.server_name = "wrong.test";
  refused(s, pki, s.address(), named, "hostname mismatch");
}

TEMPLATE_TEST_CASE("a host name only in the subject's CN is refused", "[tls][verify]", GEERPC_TRANSPORTS) {
  // Names are checked against the SANs alone: OpenSSL falls back to the CN of a certificate with
  // no DNS SAN unless told not to, as browsers and RFC 6125 no longer do.
  test::tls::pki pki;
  test::tls::tls_server<TestType> good(pki.server_settings());
  const auto cn_only = pki.ca.issue({.common_name = "localhost"});
  test::tls::tls_server<TestType> old(
      {.certificate = pem::in_memory(cn_only.certificate), .key = pem::in_memory(cn_only.key)});
  auto named = pki.client_settings();
  named.server_name = "localhost";
  refused(good, pki, old.address(), named, "hostname mismatch");
}

TEMPLATE_TEST_CASE("an IP address certificate: matched and mismatched", "[tls][verify]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  const auto this_ip = pki.ca.issue({.ips = {"127.0.0.1"}});
  test::tls::tls_server<TestType> here(
      {.certificate = pem::in_memory(this_ip.certificate), .key = pem::in_memory(this_ip.key)});
  CHECK(test::tls::serves<TestType>(here.address(), pki.client_settings()));
  // Dialed by IP, a certificate naming only hosts does not match (and no IP goes out as SNI).
  const auto only_names = pki.ca.issue({.dns = {"localhost"}});
  test::tls::tls_server<TestType> names(
      {.certificate = pem::in_memory(only_names.certificate), .key = pem::in_memory(only_names.key)});
  refused(here, pki, names.address(), pki.client_settings(), "IP address mismatch");
  const auto other_ip = pki.ca.issue({.ips = {"127.0.0.2"}});
  test::tls::tls_server<TestType> elsewhere(
      {.certificate = pem::in_memory(other_ip.certificate), .key = pem::in_memory(other_ip.key)});
  refused(here, pki, elsewhere.address(), pki.client_settings(), "IP address mismatch");
}

// The name a client sent as SNI to a TLS server made with OpenSSL directly (which then closes),
// or "(none)".
template <class Transport>
std::string sni_sent(const test::tls::pki& pki, const geerpc::tls::client_settings& client) {
  const geerpc::tls::context_ptr ctx = geerpc::tls::make_server_context(pki.server_settings());
  test::listener listening;
  std::string seen = "(no handshake)";
  std::jthread server([&] {
    const auto accepted = test::accept_raw(listening, 10s);  // none: the dial failed first
    if (accepted == nullptr) return;
    std::unique_ptr<SSL, test::tls::ssl_deleter> ssl(SSL_new(ctx.get()));
    SSL_set_fd(ssl.get(), accepted->fd());
    if (SSL_accept(ssl.get()) == 1) {
      const char* name = SSL_get_servername(ssl.get(), TLSEXT_NAMETYPE_host_name);
      seen = name != nullptr ? name : "(none)";
    }
    ERR_clear_error();
  });
  CHECK_FALSE(test::tls::dial<Transport>("tls@" + listening.address(), client).has_value());
  server.join();
  return seen;
}

TEMPLATE_TEST_CASE("SNI carries a host name, never an IP address", "[tls][verify]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  CHECK(sni_sent<TestType>(pki, pki.client_settings()) == "(none)");  // dialed 127.0.0.1
  auto named = pki.client_settings();
  named.server_name = "rpc.test";
  CHECK(sni_sent<TestType>(pki, named) == "rpc.test");
}

TEMPLATE_TEST_CASE("verification is off only through the option named insecure", "[tls][verify]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  test::tls::authority other("another CA");
  CHECK(test::tls::serves<TestType>(s.address(),
                                    {.ca = pem::in_memory(other.certificate()), .insecure_skip_verification = true}));
}

TEST_CASE("bad settings are refused when the factory is made, with the reason", "[tls][verify]") {
  test::tls::pki pki;
  CHECK_THROWS_WITH(geerpc::tls::client({.ca = pem::file("/nonexistent/ca.pem")}),
                    Contains("cannot read /nonexistent/ca.pem"));
  CHECK_THROWS_WITH(geerpc::tls::client({.ca = pem::in_memory("not a certificate")}), Contains("no PEM certificate"));
  const auto other = pki.ca.issue({.dns = {"x"}});
  CHECK_THROWS_WITH(
      geerpc::tls::server({.certificate = pem::in_memory(pki.server.certificate), .key = pem::in_memory(other.key)}),
      Contains("key values mismatch"));
  CHECK_THROWS_WITH(geerpc::tls::server({.certificate = pem::in_memory(pki.server.certificate),
                                         .key = pem::in_memory(pki.server.key),
                                         .clients = geerpc::tls::client_certificates::require}),
                    Contains("client_ca"));
  CHECK_THROWS_WITH(geerpc::tls::client({.certificate = pem::in_memory(pki.server.certificate)}),
                    Contains("needs its key"));
}

TEMPLATE_TEST_CASE("a Unix socket needs server_name to be checked", "[tls][verify][unix]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::temp_dir dir;
  test::tls::tls_server<TestType> s(pki.server_settings(), {}, dir.socket());
  auto unnamed = test::tls::dial<TestType>(s.server.address, pki.client_settings());
  REQUIRE_FALSE(unnamed.has_value());
  CHECK(unnamed.code() == geerpc::errc::connect_failed);
  CHECK_THAT(unnamed.message(), Contains("server_name"));
  auto named = pki.client_settings();
  named.server_name = "localhost";
  CHECK(test::tls::serves<TestType>(s.server.address, named));
}

}  // namespace tls_verification_test
