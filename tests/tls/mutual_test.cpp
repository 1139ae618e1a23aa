// Mutual TLS: a server that requires or requests client certificates against its own CA, and
// reload(): a new context for new connections, while those already open keep theirs.
#include <array>
#include <string>

#include "catch.hpp"
#include "tls_support.hpp"

namespace tls_mutual_test {

using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using geerpc::tls::client_certificates;
using geerpc::tls::pem;
using test::Args;

// A server identity from `pki`, asking `clients` for certificates issued by `client_ca`.
geerpc::tls::server_settings asking(const test::tls::pki& pki, client_certificates clients,
                                    const test::tls::authority& client_ca) {
  auto settings = pki.server_settings();
  settings.clients = clients;
  settings.client_ca = pem::in_memory(client_ca.certificate());
  return settings;
}

// A client of `pki`'s server, with the identity `who` (made by some CA).
geerpc::tls::client_settings as(const test::tls::pki& pki, const test::tls::identity& who) {
  auto settings = pki.client_settings();
  settings.certificate = pem::in_memory(who.certificate);
  settings.key = pem::in_memory(who.key);
  return settings;
}

// Expects dial() to fail: the server refuses after the client's part of the handshake (TLS 1.3),
// so the client learns it from the server's alert while reading the hello's reply.
template <class Transport>
void refused(const std::string& address, const geerpc::tls::client_settings& client, const std::string& reason) {
  auto dialed = test::tls::dial<Transport>(address, client);
  REQUIRE_FALSE(dialed.has_value());
  CHECK(dialed.code() == geerpc::errc::connect_failed);
  CHECK_THAT(dialed.message(), Contains(reason));
}

TEMPLATE_TEST_CASE("a server that requires client certificates refuses a client without one, or from another CA",
                   "[tls][mutual]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::authority clients("client CA"), strangers("stranger CA");
  test::tls::tls_server<TestType> s(asking(pki, client_certificates::require, clients));
  const auto alice = clients.issue({.common_name = "alice"});
  CHECK(test::tls::serves<TestType>(s.address(), as(pki, alice)));

  refused<TestType>(s.address(), pki.client_settings(), "alert certificate required");
  CHECK(test::eventually([&] { return s.factory->failed_handshakes() == 1; }));
  CHECK_THAT(s.factory->last_failure(), Contains("peer did not return a certificate"));

  refused<TestType>(s.address(), as(pki, strangers.issue({.common_name = "mallory"})), "alert unknown ca");
  CHECK(test::eventually([&] { return s.factory->failed_handshakes() == 2; }));
  CHECK_THAT(s.factory->last_failure(), Contains("certificate verify failed"));
  // And the server goes on serving the clients it knows.
  CHECK(test::tls::serves<TestType>(s.address(), as(pki, alice)));
}

TEMPLATE_TEST_CASE("a server that requests client certificates lets one without in, not a bad one", "[tls][mutual]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::authority clients("client CA"), strangers("stranger CA");
  test::tls::tls_server<TestType> s(asking(pki, client_certificates::request, clients));
  CHECK(test::tls::serves<TestType>(s.address(), pki.client_settings()));
  CHECK(test::tls::serves<TestType>(s.address(), as(pki, clients.issue({.common_name = "alice"}))));
  refused<TestType>(s.address(), as(pki, strangers.issue({.common_name = "mallory"})), "alert unknown ca");
}

TEMPLATE_TEST_CASE("reload: new connections get the new context, open ones keep theirs", "[tls][mutual][reload]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::authority old_ca("old client CA"), new_ca("new client CA");
  const auto alice = old_ca.issue({.common_name = "alice"});
  const auto bob = new_ca.issue({.common_name = "bob"});
  test::tls::tls_server<TestType> s(asking(pki, client_certificates::require, old_ca));

  auto open = test::tls::dial<TestType>(s.address(), as(pki, alice));
  REQUIRE(open.has_value());
  CHECK(open.value().template call<int>(geerpc::with_timeout(test::tls::call_limit), "Arith.Sum", Args{1, 2}) == 3);
  refused<TestType>(s.address(), as(pki, bob), "alert unknown ca");

  // A bad reload throws and changes nothing.
  auto broken = asking(pki, client_certificates::require, new_ca);
  broken.key = pem::in_memory("garbage");
  CHECK_THROWS_WITH(s.factory->reload(broken), Contains("no PEM private key"));
  CHECK_FALSE(test::tls::serves<TestType>(s.address(), as(pki, bob)));

  s.factory->reload(asking(pki, client_certificates::require, new_ca));
  CHECK(test::tls::serves<TestType>(s.address(), as(pki, bob)));
  // Alice's certificate is no longer accepted for a new connection (revoked by the reload)...
  refused<TestType>(s.address(), as(pki, alice), "alert unknown ca");
  // ...while her connection from before goes on, on the old context.
  const std::string big(1u << 20, 'r');
  CHECK(open.value().template call<std::string>(geerpc::with_timeout(test::tls::large_limit), "Arith.Echo", big) ==
        big);
  CHECK(open.value().template call<int>(geerpc::with_timeout(test::tls::call_limit), "Arith.Sum", Args{3, 4}) == 7);
}

TEMPLATE_TEST_CASE("reload reads certificate files again", "[tls][reload]", GEERPC_TRANSPORTS) {
  test::tls::pki first, second;
  test::temp_dir dir;
  const std::string cert = dir.path() + "/cert.pem", key = dir.path() + "/key.pem";
  const auto write = [](const std::string& path, const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  };
  write(cert, first.server.certificate);
  write(key, first.server.key);
  const geerpc::tls::server_settings files{.certificate = pem::file(cert), .key = pem::file(key)};
  test::tls::tls_server<TestType> s(files);
  CHECK(test::tls::serves<TestType>(s.address(), first.client_settings()));
  CHECK_FALSE(test::tls::serves<TestType>(s.address(), second.client_settings()));
  write(cert, second.server.certificate);
  write(key, second.server.key);
  s.factory->reload(files);
  CHECK(test::tls::serves<TestType>(s.address(), second.client_settings()));
  CHECK_FALSE(test::tls::serves<TestType>(s.address(), first.client_settings()));
}

// A session one client resumes skips the certificate checks a reload may since have tightened:
// a server resumes none, in TLS 1.2 (tickets and the session cache) or 1.3 (tickets).
TEMPLATE_TEST_CASE("a server resumes no session, in TLS 1.2 or 1.3", "[tls]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  for (int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    INFO("TLS version " << std::hex << version);
    test::tls::raw_tls_client first(s.server.address, {.max_version = version});
    REQUIRE(first.handshake());
    std::array<std::byte, geerpc::wire::hello_size> hello{};
    geerpc::wire::encode_hello({.codec_id = geerpc::binary_codec::id, .max_response_size = 1u << 20}, hello);
    REQUIRE(first.write(hello));
    REQUIRE(first.read(geerpc::wire::hello_reply_header_size));  // TLS 1.3 tickets come after the handshake
    SSL_SESSION* offered = SSL_get1_session(first.ssl());
    REQUIRE(offered != nullptr);
    CHECK(SSL_SESSION_has_ticket(offered) == 0);
    test::tls::raw_tls_client second(s.server.address, {.max_version = version});
    SSL_set_session(second.ssl(), offered);
    SSL_SESSION_free(offered);
    REQUIRE(second.handshake());
    CHECK(SSL_session_reused(second.ssl()) == 0);
  }
}

}  // namespace tls_mutual_test
