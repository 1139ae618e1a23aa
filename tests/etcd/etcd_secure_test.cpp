// geerpc::etcd against an etcd that requires TLS with client certificates and, once turned on, v3
// authentication (secure_etcd.hpp; certificates made here through OpenSSL's API): registration,
// discovery and the watch over it; every misconfiguration of TLS and of auth gives an error that
// names it and no secret; a token etcd revoked or let expire is replaced once, for requests and
// for the watch, by one thread for all. Waits are on events; bounds are generous.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <geerpc/etcd.hpp>
#include <geerpc/geerpc.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../catch.hpp"
#include "secure_etcd.hpp"

using namespace std::chrono_literals;

namespace {

struct Echo {
  std::string who(const std::string& name) { return name; }
};
using EchoApi = geerpc::service<"Echo", geerpc::method<"Who", &Echo::who>>;

struct served {
  Echo echo;
  geerpc::server server;
  std::string address;
  std::unique_ptr<geerpc::etcd::registration> entry;

  explicit served(const geerpc::etcd::options& etcd) {
    server.add<EchoApi>(echo);
    address = server.listen("127.0.0.1:0");
    entry = std::make_unique<geerpc::etcd::registration>("Echo", address,
                                                         geerpc::etcd::registration_options{.etcd = etcd, .ttl = 10s});
  }
};

// The message of what `call` throws as etcd::error; empty when it throws nothing.
template <class Call>
std::string failure_of(Call&& call) {
  try {
    call();
  } catch (const geerpc::etcd::error& e) {
    return e.what();
  }
  return {};
}

using list = std::vector<std::string>;

}  // namespace

TEST_CASE("over TLS and with auth, servers register, are discovered, and a new one arrives through the watch",
          "[etcd][etcd_tls]") {
  test::secure_etcd etcd;
  geerpc::etcd::gateway plain_tls(etcd.options());  // TLS alone, before auth is on
  plain_tls.put("/geerpc/probe", "tls");
  REQUIRE(plain_tls.range("/geerpc/").kvs.size() == 1);
  etcd.enable_auth();

  // The lease calls a registration makes, with the token: grant, keep alive, revoke.
  geerpc::etcd::gateway app(etcd.app());
  const auto lease = app.grant(30s);
  app.put("/geerpc/leased", "x", lease);
  CHECK(app.keep_alive(lease) > 0);
  app.revoke(lease);
  CHECK(app.range("/geerpc/leased").kvs.empty());
  CHECK(app.authentications() == 1);

  served first(etcd.app());
  REQUIRE(first.entry->wait_registered(20s));
  auto source = std::make_shared<geerpc::etcd::discovery>("Echo", geerpc::etcd::discovery_options{.etcd = etcd.app()});
  auto seen = source->servers();
  REQUIRE(seen);
  CHECK(**seen == list{first.address});
  REQUIRE(source->wait_watching(true, 20s));

  served second(etcd.app());
  REQUIRE(second.entry->wait_registered(20s));
  auto both = list{first.address, second.address};
  std::sort(both.begin(), both.end());
  auto now = source->wait_for_change(*seen, 20s);
  REQUIRE(now);
  CHECK(*now == both);

  geerpc::balanced_client client(source, {.mode = geerpc::select_mode::round_robin});
  CHECK(client.call<std::string>("Echo.Who", std::string("tls")) == "tls");
  second.entry->withdraw();
  CHECK(*source->wait_for_change(now, 20s) == list{first.address});
}

TEST_CASE("each TLS misconfiguration gives an error that names it", "[etcd][etcd_tls]") {
  test::secure_etcd etcd;
  const test::tls::authority other("another CA");
  const auto port = std::to_string(etcd.process().client_port());

  auto wrong_ca = etcd.options();
  wrong_ca.tls.ca = geerpc::etcd::pem::in_memory(other.certificate());
  const auto untrusted = failure_of([&] { geerpc::etcd::gateway(wrong_ca).range("/geerpc/"); });
  CHECK_THAT(untrusted, Catch::Contains("not trusted") && Catch::Contains("wrong CA"));

  auto by_name = etcd.options();  // the certificate names 127.0.0.1 only
  by_name.endpoints = {"https://localhost:" + port};
  CHECK_THAT(failure_of([&] { geerpc::etcd::gateway(by_name).range("/geerpc/"); }),
             Catch::Contains("host name mismatch"));

  auto anonymous = etcd.options();
  anonymous.tls.certificate = {};
  anonymous.tls.key = {};
  // Under TLS 1.3 etcd's refusal comes after the handshake, as an alert or as a bare reset: the
  // message names the certificate either way, and hedges for the reset.
  CHECK_THAT(failure_of([&] { geerpc::etcd::gateway(anonymous).range("/geerpc/"); }),
             Catch::Contains("a client certificate") && Catch::Contains("none is set in tls"));

  auto stranger = etcd.options();
  const auto outsider = other.issue({.common_name = "", .dns = {"outsider.test"}});
  stranger.tls.certificate = geerpc::etcd::pem::in_memory(outsider.certificate);
  stranger.tls.key = geerpc::etcd::pem::in_memory(outsider.key);
  CHECK_THAT(failure_of([&] { geerpc::etcd::gateway(stranger).range("/geerpc/"); }),
             Catch::Contains("refused the client certificate"));

  auto plaintext = etcd.options();
  plaintext.endpoints = {"http://127.0.0.1:" + port};
  CHECK_THAT(failure_of([&] { geerpc::etcd::gateway(plaintext).range("/geerpc/"); }),
             Catch::Contains("use an https:// endpoint"));

  // The watch is a connection of its own, with the same settings and the same words.
  CHECK_THAT(failure_of([&] { geerpc::etcd::gateway(wrong_ca).watch("/geerpc/", 1, [](const auto&) {}, {}); }),
             Catch::Contains("not trusted"));

  // Turning verification off takes the option that says so; the client certificate still goes.
  auto insecure = wrong_ca;
  insecure.endpoints = by_name.endpoints;
  insecure.tls.insecure_skip_verification = true;
  CHECK(failure_of([&] { geerpc::etcd::gateway(insecure).range("/geerpc/"); }).empty());
}

TEST_CASE("auth failures name their cause, and no message holds the password", "[etcd][etcd_tls]") {
  test::secure_etcd etcd;
  etcd.enable_auth();
  std::vector<std::string> messages;

  auto wrong = etcd.options(test::app_user, "not-the-password");
  messages.push_back(failure_of([&] { geerpc::etcd::gateway(wrong).range("/geerpc/"); }));
  CHECK_THAT(messages.back(), Catch::Contains("authentication of user 'app' failed: wrong user name or password"));

  geerpc::etcd::gateway app(etcd.app());
  CHECK(failure_of([&] { app.put("/geerpc/mine", "x"); }).empty());
  messages.push_back(failure_of([&] { app.put("/private/theirs", "x"); }));
  CHECK_THAT(messages.back(), Catch::Contains("permission denied: user 'app'"));
  messages.push_back(failure_of([&] { app.watch("/private/", 1, [](const auto&) {}, {}); }));
  CHECK_THAT(messages.back(), Catch::Contains("permission denied: user 'app'"));

  messages.push_back(failure_of([&] { geerpc::etcd::gateway(etcd.options()).range("/geerpc/"); }));
  CHECK_THAT(messages.back(), Catch::Contains("set options::user and options::password"));

  // Discovery outside the role's prefix reports it too.
  geerpc::etcd::discovery elsewhere("Echo", {.etcd = etcd.app(), .prefix = "/private"});
  const auto listed = elsewhere.servers();
  REQUIRE(!listed);
  messages.push_back(listed.message());
  CHECK_THAT(messages.back(), Catch::Contains("permission denied"));

  for (const auto& message : messages) {
    CHECK_THAT(message, !Catch::Contains(test::app_password) && !Catch::Contains("not-the-password"));
  }
}

TEST_CASE("a token etcd revoked is replaced once, by one thread for all, for requests and for the watch",
          "[etcd][etcd_tls]") {
  test::secure_etcd etcd;
  etcd.enable_auth();
  geerpc::etcd::gateway app(etcd.app());
  const auto start = app.range("/geerpc/").revision + 1;
  CHECK(app.authentications() == 1);

  etcd.revoke_app_tokens();
  std::vector<std::jthread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      try {
        app.put("/geerpc/thread/" + std::to_string(i), "x");
      } catch (const geerpc::etcd::error&) {
        ++failures;
      }
    });
  }
  threads.clear();  // joined
  CHECK(failures == 0);
  CHECK(app.authentications() == 2);

  // The watch is opened with the revoked token, rejected, and opened again with a new one.
  etcd.revoke_app_tokens();
  std::promise<std::string> first_key;
  std::stop_source stop;
  std::jthread watcher([&] {
    try {
      app.watch(
          "/geerpc/", start,
          [&](const std::vector<geerpc::etcd::watch_event>& events) {
            first_key.set_value(events.front().key);
            stop.request_stop();
          },
          stop.get_token());
    } catch (...) {
      first_key.set_exception(std::current_exception());
    }
  });
  auto key = first_key.get_future();
  REQUIRE(key.wait_for(30s) == std::future_status::ready);
  CHECK(key.get().rfind("/geerpc/thread/", 0) == 0);
  CHECK(app.authentications() == 3);
}

TEST_CASE("a token that expired (etcd's --auth-token-ttl) is replaced on the next request", "[etcd][etcd_tls]") {
  test::secure_etcd etcd(1s);
  etcd.enable_auth();
  geerpc::etcd::gateway app(etcd.app());
  app.range("/geerpc/");
  REQUIRE(app.authentications() == 1);

  // A token got after app's last request expires no sooner than app's: wait until etcd rejects
  // it. Each check (a use, which renews a live simple token) is more than the TTL apart.
  auto probe = etcd.app();
  const std::string later = etcd.token(test::app_user, test::app_password);
  bool expired = false;
  for (int check = 0; check < 20 && !expired; ++check) {
    std::this_thread::sleep_for(1500ms);  // longer than the 1 s TTL: a renewed token can expire
    try {
      test::admin_post(probe, "/v3/kv/range", {{"key", geerpc::detail::base64_encode("/geerpc/")}}, later);
    } catch (const std::runtime_error& e) {
      expired = std::string(e.what()).find("invalid auth token") != std::string::npos;
      if (!expired) throw;
    }
  }
  REQUIRE(expired);
  CHECK(failure_of([&] { app.put("/geerpc/after", "x"); }).empty());
  CHECK(app.authentications() == 2);
}
