// The listening socket's life, over TCP and Unix sockets: stop() closes it at once, so a dial to a
// stopped server is refused (not left to its connect timeout) and a new server can take the same
// address right away; and malformed addresses get an error naming the accepted forms.
#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "catch.hpp"
#include "support.hpp"

namespace listen_test {

using namespace std::chrono_literals;
using test::Args;

namespace {

// Where a test server listens: loopback TCP on a free port, or a Unix socket in `dir`.
std::string listen_address(const std::string& kind, const test::temp_dir& dir) {
  return kind == "tcp" ? "127.0.0.1:0" : dir.socket();
}

}  // namespace

TEMPLATE_TEST_CASE("a dial to a stopped server is refused, not left to time out", "[listen][stop]", GEERPC_TRANSPORTS) {
  const std::string kind = GENERATE(as<std::string>{}, "tcp", "unix");
  test::temp_dir dir;
  test::arith_server<TestType> s({}, listen_address(kind, dir));
  REQUIRE(geerpc::dial<TestType>(s.address).template call<int>("Arith.Sum", Args{1, 2}) == 3);
  s.server.stop();
  // The server object lives on: only stop() can have closed its listening socket.
  auto refused = geerpc::try_dial<TestType>(s.address, {.timeouts = {.connect = 500ms}});
  REQUIRE_FALSE(refused);
  CHECK(refused.code() == geerpc::errc::connect_failed);
  // A TCP port nobody listens on refuses; a Unix socket's file is gone.
  CHECK_THAT(refused.message(), Catch::Contains(kind == "tcp" ? "Connection refused" : "No such file or directory"));
}

TEMPLATE_TEST_CASE("a new server listens on the address of one just stopped", "[listen][stop]", GEERPC_TRANSPORTS) {
  const std::string kind = GENERATE(as<std::string>{}, "tcp", "unix");
  test::temp_dir dir;
  test::arith_server<TestType> first({}, listen_address(kind, dir));
  first.server.stop();
  test::Arith arith;
  geerpc::basic_server<TestType> second;
  second.template add<test::ArithApi>(arith);
  REQUIRE(second.listen(first.address) == first.address);
  CHECK(geerpc::dial<TestType>(first.address).template call<int>("Arith.Sum", Args{2, 3}) == 5);
}

TEMPLATE_TEST_CASE("while stop() waits for a handler, new dials are refused", "[listen][stop]", GEERPC_TRANSPORTS) {
  const std::string kind = GENERATE(as<std::string>{}, "tcp", "unix");
  test::temp_dir dir;
  test::arith_server<TestType> s({}, listen_address(kind, dir));
  auto client = geerpc::dial<TestType>(s.address);
  std::jthread caller([&] { (void)client.template try_call<int>("Arith.Late", Args{1, 0}); });
  REQUIRE(s.arith.started.wait_for_at_least(1));
  std::jthread stopper([&] { s.server.stop(); });  // returns only once Late does
  // Until stop() begins, a dial may still succeed, or be accepted and then closed; from then on
  // every one is refused by the kernel (or finds no socket file: the blocking server closes its
  // listener before it waits for handlers).
  const auto refused = [&] {
    auto r = geerpc::try_dial<TestType>(s.address, {.timeouts = {.connect = 100ms}});
    return !r && r.code() == geerpc::errc::connect_failed &&
           (r.message().find("Connection refused") != std::string::npos ||
            r.message().find("No such file or directory") != std::string::npos);
  };
  CHECK(test::eventually(refused, 5s));
  CHECK(refused());
  s.arith.release.set();
}

namespace {

// A service whose handler stops the server it runs in.
template <class Transport>
struct stopper {
  geerpc::basic_server<Transport>* server = nullptr;
  std::atomic<int> calls{0};
  int stop(const Args&) {
    const int n = calls.fetch_add(1) + 1;  // before stop() closes the caller's connection
    server->stop();                        // from a handler, this only begins the stop
    return n;
  }
};
template <class Transport>
using stopper_api = geerpc::service<"Ctl", geerpc::method<"Stop", &stopper<Transport>::stop>>;

}  // namespace

TEMPLATE_TEST_CASE("after a handler calls stop(), new dials are refused", "[listen][stop]", GEERPC_TRANSPORTS) {
  const std::string kind = GENERATE(as<std::string>{}, "tcp", "unix");
  test::temp_dir dir;
  stopper<TestType> ctl;
  geerpc::basic_server<TestType> server;
  ctl.server = &server;
  server.template add<stopper_api<TestType>>(ctl);
  const std::string address = server.listen(listen_address(kind, dir));
  auto client = geerpc::dial<TestType>(address);
  // stop() closes this very connection: the reply may or may not come first.
  const auto stopped = client.template try_call<int>("Ctl.Stop", Args{});
  CHECK((stopped || stopped.code() == geerpc::errc::connection_closed));
  REQUIRE(ctl.calls.load() == 1);
  // The threads are joined (and the address freed) only by the next stop() from outside; the
  // listener refuses connections from the handler's stop() on.
  auto refused = geerpc::try_dial<TestType>(address, {.timeouts = {.connect = 500ms}});
  CHECK(refused.code() == geerpc::errc::connect_failed);
  CHECK_THAT(refused.message(), Catch::Contains("Connection refused"));
  server.stop();
  if (kind == "unix") CHECK_FALSE(test::file_exists(address.substr(5)));
}

TEST_CASE("a malformed address names the accepted forms, at dial and at listen", "[listen][address]") {
  const std::string forms =
      "use host:port, tcp@host:port, http@host:port, tls@host:port, jsonrpc@host:port, [v6]:port or unix@/path";
  auto unix_mistake = geerpc::try_dial("unix:/x.sock", {.timeouts = {.connect = 1s}});
  CHECK(unix_mistake.code() == geerpc::errc::connect_failed);
  CHECK(unix_mistake.message() ==
        "rpc client: dial \"unix:/x.sock\": bad address: " + forms + " (did you mean unix@/x.sock?)");
  auto url = geerpc::try_dial<geerpc::blocking>("tcp://127.0.0.1:80", {.timeouts = {.connect = 1s}});
  CHECK(url.code() == geerpc::errc::connect_failed);
  CHECK(url.message() ==
        "rpc client: dial \"tcp://127.0.0.1:80\": bad address: " + forms + " (did you mean tcp@127.0.0.1:80?)");
  CHECK(geerpc::try_dial("127.0.0.1:99999").message() ==
        "rpc client: dial \"127.0.0.1:99999\": bad address: the port must be a number from 0 to 65535; " + forms);

  const auto listen_error = [](auto& server, const std::string& address) -> std::string {
    try {
      server.listen(address);
    } catch (const geerpc::rpc_error& e) {
      CHECK(e.code() == geerpc::errc::invalid_argument);
      return e.what();
    }
    return "(listened)";
  };
  geerpc::server threaded;
  CHECK(listen_error(threaded, "unix:/tmp/x.sock") ==
        "rpc server: listen \"unix:/tmp/x.sock\": bad address: " + forms + " (did you mean unix@/tmp/x.sock?)");
  geerpc::basic_server<geerpc::blocking> blocking;
  CHECK(listen_error(blocking, "tcp://127.0.0.1:0") ==
        "rpc server: listen \"tcp://127.0.0.1:0\": bad address: " + forms + " (did you mean tcp@127.0.0.1:0?)");
  geerpc::server v6;
  CHECK(listen_error(v6, "::1:0") == "rpc server: listen \"::1:0\": bad address: an IPv6 host must be in brackets; " +
                                         forms + " (did you mean [::1]:0?)");
}

}  // namespace listen_test
