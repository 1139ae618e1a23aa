// Who may open the debug page (debug_page_policy.hpp, server_options.observability.debug_page):
// the locality of an address text, the policy's answers, then a server's HTTP door with real
// peers: loopback, a Unix socket, and a predicate that sees the peer (tests carry traffic on
// loopback and Unix sockets only, so a non-local peer is the predicate's refusal and the locality
// function's texts). A refused peer gets the 404 of a path that does not exist; CONNECT is unaffected.
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace debug_policy_test {

using namespace std::chrono_literals;
using geerpc::debug_page_policy;
using geerpc::debug_peer;
using test::Args;

namespace {

std::string status_line(const std::string& response) { return response.substr(0, response.find("\r\n")); }

}  // namespace

// ------------------------------------------------------------------------------ the pure parts

TEST_CASE("debug page policy: locality is read from the peer's address text", "[debug_policy]") {
  struct row {
    std::string_view address;
    bool loopback;
    bool unix_socket;
  };
  const row rows[] = {
      {"127.0.0.1:53124", true, false},
      {"127.255.255.254:1", true, false},
      {"127.1.2.3:80", true, false},
      {"[::1]:53124", true, false},
      {"[::ffff:127.0.0.1]:53124", true, false},
      {"[::ffff:127.9.8.7]:1", true, false},
      {"unix@/run/app.sock", false, true},
      {"unix@@abstract-name", false, true},
      {"unix@", false, true},  // an unnamed client socket
      {"10.0.0.1:53124", false, false},
      {"192.0.2.2:53124", false, false},
      {"128.0.0.1:1", false, false},
      {"126.255.255.255:1", false, false},
      {"0.0.0.0:1", false, false},
      {"[::]:1", false, false},
      {"[::2]:1", false, false},
      {"[2001:db8::1]:1", false, false},
      {"[::ffff:10.0.0.1]:1", false, false},
      {"[::ffff:128.0.0.1]:1", false, false},
      {"[::127.0.0.1]:1", false, false},  // IPv4-compatible, not mapped: not loopback
      {"[fe80::1%lo]:1", false, false},   // a scope is no loopback address
      {"[::1:1", false, false},
      {"127.0.0.1", false, false},  // no port: not an endpoint text
      {"localhost:80", false, false},
      {"127.0.0.1.evil.example:80", false, false},
      {"", false, false},
  };
  for (const row& r : rows) {
    INFO(r.address);
    const debug_peer peer = geerpc::detail::debug_peer_of(r.address);
    CHECK(peer.address == r.address);
    CHECK(peer.loopback == r.loopback);
    CHECK(peer.unix_socket == r.unix_socket);
    CHECK(peer.local() == (r.loopback || r.unix_socket));
  }
}

TEST_CASE("debug page policy: local by default, true is local, false is off, any and a predicate", "[debug_policy]") {
  const debug_peer loopback = geerpc::detail::debug_peer_of("127.0.0.1:1");
  const debug_peer unix_peer = geerpc::detail::debug_peer_of("unix@/x.sock");
  const debug_peer remote = geerpc::detail::debug_peer_of("10.1.2.3:4");

  const debug_page_policy by_default = geerpc::server_options{}.observability.debug_page;
  CHECK(by_default.mode() == debug_page_policy::kind::local);
  CHECK(by_default.allows(loopback));
  CHECK(by_default.allows(unix_peer));
  CHECK_FALSE(by_default.allows(remote));

  const geerpc::server_observability on{.debug_page = true}, off{.debug_page = false};
  CHECK(on.debug_page.mode() == debug_page_policy::kind::local);
  CHECK_FALSE(on.debug_page.allows(remote));
  CHECK(off.debug_page.mode() == debug_page_policy::kind::off);
  CHECK_FALSE(off.debug_page.allows(loopback));
  CHECK_FALSE(off.debug_page.allows(unix_peer));

  CHECK(debug_page_policy::any().allows(remote));
  CHECK(debug_page_policy::any().allows(loopback));
  CHECK_FALSE(debug_page_policy::local().allows(remote));

  const auto only_ten = debug_page_policy::allow_if([](const debug_peer& p) { return p.address.starts_with("10."); });
  CHECK(only_ten.mode() == debug_page_policy::kind::predicate);
  CHECK(only_ten.allows(remote));
  CHECK_FALSE(only_ten.allows(loopback));  // the predicate decides alone: local is not added
  const auto throws = debug_page_policy::allow_if([](const debug_peer&) -> bool { throw std::runtime_error("no"); });
  CHECK_FALSE(throws.allows(loopback));  // an exception refuses
  const auto empty = debug_page_policy::allow_if(std::function<bool(const debug_peer&)>{});
  CHECK_FALSE(empty.allows(loopback));
}

// ------------------------------------------------------------------------------ the door

TEMPLATE_TEST_CASE("debug page policy: the default serves a loopback peer and a Unix-socket peer", "[debug_policy]",
                   GEERPC_TRANSPORTS) {
  test::arith_server<TestType> tcp(test::with_debug_page({}));
  CHECK(status_line(test::http_exchange(tcp.address, "GET /debug/geerpc HTTP/1.0\r\n\r\n")) == "HTTP/1.0 200 OK");
  CHECK(status_line(test::http_exchange(tcp.address, "GET /debug/geerpc/stats.json HTTP/1.0\r\n\r\n")) ==
        "HTTP/1.0 200 OK");

  test::temp_dir dir;
  test::arith_server<TestType> unix_server(test::with_debug_page({}), dir.socket());
  CHECK(status_line(test::http_exchange(unix_server.address, "GET /debug/geerpc HTTP/1.0\r\n\r\n")) ==
        "HTTP/1.0 200 OK");
  CHECK(status_line(test::http_exchange(unix_server.address, "HEAD /debug/geerpc/stats.json HTTP/1.0\r\n\r\n")) ==
        "HTTP/1.0 200 OK");
}

TEMPLATE_TEST_CASE("debug page policy: a predicate sees the real peer and decides: refused, it is a plain 404",
                   "[debug_policy]", GEERPC_TRANSPORTS) {
  struct asked {
    std::string address;
    bool loopback;
    bool unix_socket;
  };
  std::mutex mutex;
  std::vector<asked> seen;  // what the predicate was asked about (checked here, not on the server's threads)
  bool allow = false;
  const auto policy = debug_page_policy::allow_if([&](const debug_peer& p) {
    std::lock_guard lock(mutex);
    seen.push_back({std::string(p.address), p.loopback, p.unix_socket});
    return allow;
  });
  test::arith_server<TestType> s(test::with_debug_page(policy));

  // Refused, the page and its JSON answer as a path that does not exist does (one of the same
  // length, so that the answers differ in its name alone), whatever the method: no 405, no Allow.
  for (const std::string method : {"GET", "HEAD", "POST", "DELETE"}) {
    for (const std::string path : {"/debug/geerpc", "/debug/geerpc/stats.json"}) {
      INFO(method << " " << path);
      std::string missing_path = path;
      missing_path.back() = '~';
      const std::string refused = test::http_exchange(s.address, method + " " + path + " HTTP/1.0\r\n\r\n");
      std::string missing = test::http_exchange(s.address, method + " " + missing_path + " HTTP/1.0\r\n\r\n");
      CHECK(status_line(refused) == "HTTP/1.0 404 Not Found");
      CHECK(refused.find("Allow:") == std::string::npos);
      if (const auto at = missing.find(missing_path); at != std::string::npos) missing.replace(at, path.size(), path);
      CHECK(refused == missing);
    }
  }
  {
    std::lock_guard lock(mutex);
    CHECK(seen.size() == 8);  // asked once per request for the page, never for another path
    allow = true;
  }

  // Allowed: served; the peer it saw is the connection's own, the address the client's socket has.
  test::raw_peer peer(s.address);
  sockaddr_storage local{};
  socklen_t size = sizeof local;
  REQUIRE(::getsockname(peer.fd(), reinterpret_cast<sockaddr*>(&local), &size) == 0);
  peer.send("GET /debug/geerpc HTTP/1.0\r\n\r\n");
  const auto served = peer.read_all();
  REQUIRE(served);
  CHECK(status_line(*served) == "HTTP/1.0 200 OK");
  std::lock_guard lock(mutex);
  REQUIRE(seen.size() == 9);
  CHECK(seen.back().address == geerpc::net::endpoint_text(local, size));
  for (const asked& a : seen) {
    CHECK(a.loopback);
    CHECK_FALSE(a.unix_socket);
  }
}

TEMPLATE_TEST_CASE("debug page policy: off or refusing, CONNECT still reaches RPC", "[debug_policy]",
                   GEERPC_TRANSPORTS) {
  for (const auto& policy :
       {debug_page_policy::off(), debug_page_policy::allow_if([](const debug_peer&) { return false; })}) {
    test::arith_server<TestType> s(test::with_debug_page(policy));
    CHECK(status_line(test::http_exchange(s.address, "GET /debug/geerpc HTTP/1.0\r\n\r\n")) ==
          "HTTP/1.0 404 Not Found");
    auto client = geerpc::dial<TestType>("http@" + s.address);
    CHECK(client.template call<int>("Arith.Sum", Args{1, 2}) == 3);
  }
}

}  // namespace debug_policy_test
