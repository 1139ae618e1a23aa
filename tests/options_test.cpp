// The settings grouped by concern (options.hpp): the designated initializers its comment shows
// compile, each setting lands in its group, and a server and a client honour settings given so.
#include <chrono>
#include <string>

#include "catch.hpp"
#include "support.hpp"

namespace options_test {

using namespace std::chrono_literals;

TEST_CASE("options: a client's settings by group, in a designated initializer", "[options]") {
  const geerpc::options client{.timeouts = {.connect = 2s, .handle = 500ms}, .limits = {.max_frame_size = 4096}};
  CHECK(client.timeouts.connect == 2s);
  CHECK(client.timeouts.handle == 500ms);
  CHECK(client.limits.max_frame_size == 4096);
  CHECK(client.tuning.batching);  // a group left out keeps its defaults
  const geerpc::options defaults;
  CHECK(defaults.timeouts.connect == 10s);
  CHECK(defaults.timeouts.handle == 0ns);
}

TEST_CASE("options: a server's settings by group, in a designated initializer", "[options]") {
  const geerpc::server_options server{.threads = {.handlers = 4},
                                      .limits = {.max_inflight = 1000},
                                      .timeouts = {.frame = 5s},
                                      .observability = {.debug_page = false}};
  CHECK(server.threads.handlers == 4);
  CHECK(server.threads.max_handlers == 1024);
  CHECK(server.limits.max_inflight == 1000);
  CHECK(server.limits.max_inflight_per_connection == 1024);
  CHECK(server.timeouts.frame == 5s);
  CHECK(server.timeouts.handshake == 10s);
  CHECK(server.observability.debug_page.mode() == geerpc::debug_page_policy::kind::off);
  CHECK(server.observability.statistics);
}

namespace {
struct echo_service {
  std::string echo(const std::string& s) { return s; }
};
}  // namespace

TEST_CASE("options: grouped settings reach the server and the client", "[options]") {
  echo_service service;
  geerpc::server server({.limits = {.max_frame_size = 1024}});
  server.add<geerpc::service<"Echo", geerpc::method<"Echo", &echo_service::echo>>>(service);
  const std::string address = server.listen("127.0.0.1:0");

  // The server's limit on a request frame, from its `limits` group, reaches the client in the
  // handshake: a larger request fails at the client, unsent.
  auto client = geerpc::dial(address, {.timeouts = {.connect = 5s}});
  CHECK(client.call<std::string>("Echo.Echo", std::string("short")) == "short");
  auto refused = client.try_call<std::string>("Echo.Echo", std::string(4096, 'x'));
  REQUIRE_FALSE(refused);
  CHECK(refused.code() == geerpc::errc::invalid_argument);
  CHECK(client.call<std::string>("Echo.Echo", std::string("again")) == "again");

  // The client's own limit on a reply, from its `limits` group, below the smallest frame: dial
  // refuses it before connecting.
  auto bad = geerpc::try_dial(address, {.limits = {.max_frame_size = 8}});
  REQUIRE_FALSE(bad);
  CHECK(bad.code() == geerpc::errc::invalid_argument);
}

}  // namespace options_test
