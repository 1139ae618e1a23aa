// Who is calling: what a handler, a deferred handler and an interceptor learn of the peer through
// call_context::identity() (net::peer_identity, filled by the TLS session as its handshake ends),
// on every server transport; and geerpc::allow_identities, the usual mutual-TLS policy, refusing
// with the codes and messages the client then sees.
#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "catch.hpp"
#include "tls_support.hpp"

namespace tls_identity_test {

using namespace std::chrono_literals;
using geerpc::tls::client_certificates;
using geerpc::tls::pem;

// What the handler saw, sent back to the test as the reply.
struct Seen {
  bool encrypted = false;
  bool verified = false;
  std::string subject;
  std::vector<std::string> dns;
  std::vector<std::string> ips;
  std::vector<std::string> uris;
  std::vector<std::string> emails;
};

Seen seen(const geerpc::call_context& ctx) {
  const geerpc::net::peer_identity& who = ctx.identity();
  CHECK(ctx.encrypted() == who.encrypted);
  return {who.encrypted, who.verified, who.subject, who.dns_names, who.ip_addresses, who.uris, who.emails};
}

struct Who {
  Seen am(const int&, const geerpc::call_context& ctx) { return seen(ctx); }
  // Deferred: answers from the handler's thread here, with what its context says.
  void later(const int&, const geerpc::call_context& ctx, geerpc::responder<Seen> reply) { reply(seen(ctx)); }
  int admin(const int& x) { return x + 1; }
};
using WhoApi = geerpc::service<"Who", geerpc::method<"Am", &Who::am>, geerpc::method<"Later", &Who::later>,
                               geerpc::method<"Admin", &Who::admin>>;

// A server of `Transport` serving Who, over TLS when `tls` is given.
template <class Transport>
struct who_server {
  Who who;
  std::shared_ptr<geerpc::tls::server_factory> factory;
  geerpc::basic_server<Transport> server;
  std::string address;

  explicit who_server(const geerpc::tls::server_settings* tls, std::vector<geerpc::server_interceptor> uses = {})
      : factory(tls != nullptr ? geerpc::tls::server(*tls) : nullptr), server(options(factory)) {
    server.template add<WhoApi>(who);
    for (auto& use : uses) server.use(std::move(use));
    address = (factory ? "tls@" : "") + server.listen("127.0.0.1:0");
  }

 private:
  static geerpc::server_options options(std::shared_ptr<geerpc::tls::server_factory> f) {
    geerpc::server_options opts;
    opts.session = std::move(f);
    return opts;
  }
};

// A server asking `clients` for certificates issued by `client_ca`.
geerpc::tls::server_settings asking(const test::tls::pki& pki, client_certificates clients,
                                    const test::tls::authority& client_ca) {
  auto settings = pki.server_settings();
  settings.clients = clients;
  settings.client_ca = pem::in_memory(client_ca.certificate());
  return settings;
}

// A client of `pki`'s server with the certificate `who`, or none.
geerpc::tls::client_settings as(const test::tls::pki& pki, const test::tls::identity* who) {
  auto settings = pki.client_settings();
  if (who != nullptr) {
    settings.certificate = pem::in_memory(who->certificate);
    settings.key = pem::in_memory(who->key);
  }
  return settings;
}

template <class Transport>
geerpc::basic_client<Transport> dial(const std::string& address, const geerpc::tls::client_settings& settings) {
  auto client = test::tls::dial<Transport>(address, settings);
  REQUIRE(client.has_value());
  return std::move(client).value();
}

template <class Transport>
Seen ask(geerpc::basic_client<Transport>& client, const char* method = "Who.Am") {
  auto r = client.template try_call<Seen>(geerpc::with_timeout(test::tls::call_limit), method, 1);
  REQUIRE(r.has_value());
  return r.value();
}

TEMPLATE_TEST_CASE("a handler sees the subject and SANs of a verified client certificate", "[tls][identity]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::authority clients("client CA");
  const auto alice = clients.issue({.common_name = "alice",
                                    .dns = {"alice.test"},
                                    .ips = {"10.1.2.3", "2001:db8::7"},
                                    .uris = {"spiffe://example.org/ns/prod/sa/alice"},
                                    .emails = {"alice@example.org"}});
  const auto settings = asking(pki, client_certificates::require, clients);
  who_server<TestType> s(&settings);
  auto client = dial<TestType>(s.address, as(pki, &alice));
  for (const char* method : {"Who.Am", "Who.Later"}) {
    INFO(method);
    const Seen got = ask(client, method);
    CHECK(got.encrypted);
    CHECK(got.verified);
    CHECK(got.subject == "CN=alice");
    CHECK(got.dns == std::vector<std::string>{"alice.test"});
    CHECK(got.ips == std::vector<std::string>{"10.1.2.3", "2001:db8::7"});
    CHECK(got.uris == std::vector<std::string>{"spiffe://example.org/ns/prod/sa/alice"});
    CHECK(got.emails == std::vector<std::string>{"alice@example.org"});
  }
}

TEMPLATE_TEST_CASE("a TLS client without a certificate reads encrypted and unverified", "[tls][identity]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::authority clients("client CA");
  const auto settings = asking(pki, client_certificates::request, clients);
  who_server<TestType> s(&settings);
  auto client = dial<TestType>(s.address, as(pki, nullptr));
  const Seen got = ask(client);
  CHECK(got.encrypted);
  CHECK_FALSE(got.verified);
  CHECK(got.subject.empty());
  CHECK(got.dns.empty());
  CHECK(got.uris.empty());
}

TEMPLATE_TEST_CASE("a plaintext connection reads not encrypted", "[tls][identity]", GEERPC_TRANSPORTS) {
  who_server<TestType> s(nullptr);
  auto client = geerpc::dial<TestType>(s.address);
  const Seen got = ask(client);
  CHECK_FALSE(got.encrypted);
  CHECK_FALSE(got.verified);
  CHECK(got.subject.empty());
  // And a context made by hand (a test calling a handler directly) proves nothing either.
  const geerpc::call_context empty;
  CHECK_FALSE(empty.encrypted());
  CHECK_FALSE(empty.identity().verified);
}

// The policy of the tests below: Who.Am for any verified client, Who.Admin for alice's SPIFFE ID.
geerpc::server_interceptor policy() {
  return geerpc::allow_identities([](const geerpc::net::peer_identity& who, std::string_view method) {
    if (method == "Who.Admin") return who.has_uri("spiffe://example.org/admin/alice");
    return who.verified;
  });
}

TEMPLATE_TEST_CASE("an interceptor refuses by identity: unauthenticated, permission_denied, and admits alice",
                   "[tls][identity][interceptor]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::authority clients("client CA");
  const auto alice = clients.issue({.common_name = "alice", .uris = {"spiffe://example.org/admin/alice"}});
  const auto bob = clients.issue({.common_name = "bob", .uris = {"spiffe://example.org/user/bob"}});
  const auto settings = asking(pki, client_certificates::request, clients);
  // An `after` hook sees the identity too: it keeps who was answered what.
  std::mutex mutex;
  std::vector<std::string> outcomes;
  geerpc::server_interceptor record{.after = [&](const geerpc::call_context& ctx, const geerpc::call_result& r) {
    std::lock_guard lock(mutex);
    outcomes.push_back(std::string(ctx.method()) + " " + ctx.identity().subject + " " +
                       (r.ok() ? std::string("ok") : r.error.message()));
  }};
  who_server<TestType> s(&settings, {policy(), std::move(record)});

  auto anonymous = dial<TestType>(s.address, as(pki, nullptr));
  auto refused = anonymous.template try_call<int>(geerpc::with_timeout(test::tls::call_limit), "Who.Admin", 1);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.code() == geerpc::errc::unauthenticated);
  CHECK(refused.message() == "rpc server: Who.Admin needs a verified client certificate");

  auto as_bob = dial<TestType>(s.address, as(pki, &bob));
  CHECK(ask(as_bob).subject == "CN=bob");  // a verified client may ask who it is
  auto denied = as_bob.template try_call<int>(geerpc::with_timeout(test::tls::call_limit), "Who.Admin", 1);
  REQUIRE_FALSE(denied.has_value());
  CHECK(denied.code() == geerpc::errc::permission_denied);
  CHECK(denied.message() == "rpc server: Who.Admin is not allowed for CN=bob");
  // The throwing call carries the same code and message.
  try {
    as_bob.template call<int>(geerpc::with_timeout(test::tls::call_limit), "Who.Admin", 1);
    FAIL("the call was let through");
  } catch (const geerpc::rpc_error& e) {
    CHECK(e.code() == geerpc::errc::permission_denied);
    CHECK(std::string(e.what()) == "rpc server: Who.Admin is not allowed for CN=bob");
  }

  auto as_alice = dial<TestType>(s.address, as(pki, &alice));
  auto admitted = as_alice.template try_call<int>(geerpc::with_timeout(test::tls::call_limit), "Who.Admin", 41);
  REQUIRE(admitted.has_value());
  CHECK(admitted.value() == 42);
  // In any order: a call's `after` may still run while the next call's does.
  std::vector<std::string> expected = {"Who.Admin  unauthenticated", "Who.Am CN=bob ok",
                                       "Who.Admin CN=bob permission denied", "Who.Admin CN=bob permission denied",
                                       "Who.Admin CN=alice ok"};
  // Each call's `after` runs once it was answered: wait for the last.
  CHECK(test::eventually([&] {
    std::lock_guard lock(mutex);
    return outcomes.size() == expected.size();
  }));
  std::lock_guard lock(mutex);
  std::sort(outcomes.begin(), outcomes.end());
  std::sort(expected.begin(), expected.end());
  CHECK(outcomes == expected);
}

TEST_CASE("hostile names: the subject comes out escaped and in UTF-8, the SANs as their bytes", "[tls][identity]") {
  test::tls::pki pki;
  test::tls::authority clients("client CA");
  // A TeletexString CN (Latin-1 to OpenSSL) with quotes, markup, control characters and bytes that
  // are no UTF-8; a URI SAN likewise (IA5String: nothing checks its bytes).
  const std::string hostile = "eve\"<b>\x01\n\xC3\x28,x";
  const std::string uri = "spiffe://x/\"<script>\x01\xFF";
  const auto eve = clients.issue({.common_name = hostile, .uris = {uri}, .raw_common_name = true});
  const auto settings = asking(pki, client_certificates::require, clients);
  who_server<geerpc::threaded> s(&settings);
  auto client = dial<geerpc::threaded>(s.address, as(pki, &eve));
  const Seen got = ask(client);
  CHECK(got.verified);
  // RFC 2253's escapes for '"' '<' '>' ',', \XX for control characters; Latin-1's C3 as UTF-8.
  CHECK(got.subject == "CN=eve\\\"\\<b\\>\\01\\0A\xC3\x83(\\,x");
  CHECK(got.uris == std::vector<std::string>{uri});
}

TEST_CASE("a subject in UTF-8 stays UTF-8", "[tls][identity]") {
  test::tls::pki pki;
  test::tls::authority clients("client CA");
  const auto jose = clients.issue({.common_name = "Jos\xC3\xA9"});
  const auto settings = asking(pki, client_certificates::require, clients);
  who_server<geerpc::threaded> s(&settings);
  auto client = dial<geerpc::threaded>(s.address, as(pki, &jose));
  CHECK(ask(client).subject == "CN=Jos\xC3\xA9");
}

}  // namespace tls_identity_test
