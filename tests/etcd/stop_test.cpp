// Stopping what talks to etcd while etcd accepts and never answers: a discovery destroyed, a
// registration withdrawn, a gateway call whose stop token fires. Each drops its request in flight
// at once instead of waiting for request_timeout, which is long here (30 s) so that one that
// waited fails the loose bound below (10 s) by far.
#include <chrono>
#include <geerpc/detail/base64.hpp>
#include <geerpc/etcd.hpp>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "../catch.hpp"
#include "etcd_process.hpp"
#include "fake_etcd.hpp"

using namespace std::chrono_literals;

namespace etcd_stop {

constexpr auto etcd_patience = 30s;  // request_timeout: what a stop must not wait for
constexpr auto at_once = 10s;        // the loose bound for "at once" on a loaded machine
constexpr auto connect_patience = 10s;

geerpc::etcd::options silent_options(const test::silent_etcd& silent) {
  return {.endpoints = {silent.endpoint()}, .request_timeout = etcd_patience};
}

template <class Action>
std::chrono::steady_clock::duration time_of(Action&& action) {
  const auto start = std::chrono::steady_clock::now();
  action();
  return std::chrono::steady_clock::now() - start;
}

TEST_CASE("a discovery destroyed while etcd is silent returns at once, not at its request_timeout",
          "[etcd][etcd_stop]") {
  // Without a user the request in flight is the range; with one, the authentication before it.
  const std::string user = GENERATE(std::string(), std::string("reader"));
  CAPTURE(user);
  const test::silent_etcd silent;
  auto options = silent_options(silent);
  options.user = user;
  options.password = user.empty() ? "" : "secret";
  auto discovery = std::make_unique<geerpc::etcd::discovery>("Who", geerpc::etcd::discovery_options{.etcd = options});
  REQUIRE(silent.wait_for_connection(connect_patience));
  CHECK(time_of([&] { discovery.reset(); }) < at_once);
}

TEST_CASE("a discovery destroyed while its watch waits on a silent etcd returns at once", "[etcd][etcd_stop]") {
  const std::string key = geerpc::detail::base64_encode("/geerpc/Who/127.0.0.1:1");
  const std::string value = geerpc::detail::base64_encode("127.0.0.1:1");
  // The range is answered; the watch after it is accepted and never answered.
  test::fake_etcd fake({test::http_200(R"({"header":{"revision":"7"},"kvs":[{"key":")" + key + R"(","value":")" +
                                       value + R"("}],"count":"1"})")});
  auto options = fake.options();
  options.request_timeout = etcd_patience;
  auto discovery = std::make_unique<geerpc::etcd::discovery>("Who", geerpc::etcd::discovery_options{.etcd = options});
  REQUIRE(discovery->wait_for_change(nullptr, connect_patience) != nullptr);
  CHECK(time_of([&] { discovery.reset(); }) < at_once);
}

TEST_CASE("a registration withdrawn while etcd is silent returns at once", "[etcd][etcd_stop]") {
  const test::silent_etcd silent;
  geerpc::etcd::registration entry("Who", "127.0.0.1:1", {.etcd = silent_options(silent)});
  REQUIRE(silent.wait_for_connection(connect_patience));  // its lease grant is on its way
  CHECK(time_of([&] { entry.withdraw(); }) < at_once);
  CHECK_FALSE(entry.wait_registered(0ms));
}

TEST_CASE("a gateway call ends when its stop token fires, and makes no request once it has", "[etcd][etcd_stop]") {
  const test::silent_etcd silent;
  geerpc::etcd::gateway gateway(silent_options(silent));
  std::stop_source stop;
  std::optional<std::string> failure;
  std::jthread caller([&] {
    try {
      gateway.range("/geerpc/", stop.get_token());
    } catch (const geerpc::etcd::error& e) {
      failure = e.what();
    }
  });
  REQUIRE(silent.wait_for_connection(connect_patience));
  CHECK(time_of([&] {
          stop.request_stop();
          caller.join();
        }) < at_once);
  REQUIRE(failure);
  CHECK_THAT(*failure, Catch::Contains("stopped before etcd answered") && Catch::Contains(silent.endpoint()));

  // Already stopped: fails at once, before any request.
  CHECK_THROWS_WITH(gateway.grant(10s, stop.get_token()), Catch::Contains("stopped before etcd answered"));
}

TEST_CASE("a registration withdrawn while it puts its keys leaves none of them in etcd", "[etcd][etcd_stop]") {
  // Many services, so that the withdraw lands between the grant and the last put: the keys put so
  // far are under a lease the registration has not yet called its own, which withdraw() revokes.
  test::etcd_process etcd;
  std::vector<std::string> services;
  for (int i = 0; i < 300; ++i) services.push_back("S" + std::to_string(i));
  geerpc::etcd::gateway look(etcd.options());
  geerpc::etcd::registration entry(services, "127.0.0.1:1", {.etcd = etcd.options(), .ttl = 60s});
  const auto give_up = std::chrono::steady_clock::now() + connect_patience;
  while (look.range("/geerpc/").kvs.empty() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  entry.withdraw();
  CHECK(look.range("/geerpc/").kvs.empty());  // not left listed until the 60 s TTL
  CHECK(entry.last_error().empty());          // the dropped put is no failure of etcd's
}

TEST_CASE("a watch stopped while it authenticates returns, as one stopped while it waits", "[etcd][etcd_stop]") {
  const test::silent_etcd silent;
  auto options = silent_options(silent);
  options.user = "reader";
  options.password = "secret";
  geerpc::etcd::gateway gateway(options);
  std::stop_source stop;
  bool returned = false;
  std::optional<std::string> failure;
  std::jthread watcher([&] {
    try {
      gateway.watch(
          "/geerpc/", 1, [](const std::vector<geerpc::etcd::watch_event>&) {}, stop.get_token());
      returned = true;
    } catch (const geerpc::etcd::error& e) {
      failure = e.what();
    }
  });
  REQUIRE(silent.wait_for_connection(connect_patience));  // the authentication is on its way
  stop.request_stop();
  watcher.join();
  CHECK(returned);
  CHECK_FALSE(failure);
}

}  // namespace etcd_stop
