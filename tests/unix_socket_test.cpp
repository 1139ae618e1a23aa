// Unix domain sockets, over both transports: calls work as over TCP; the socket file is removed on
// stop(); a stale file (its server died) is replaced, a live server's is not taken; paths too long
// for a socket address are a clear error; a full backlog waits within the connect timeout.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace unix_socket_test {

using namespace std::chrono_literals;
using test::Args;

namespace {

// A Unix socket bound at `path` with nothing accepting on it: listening with `backlog`, or, with
// `listening` false, closed at once, leaving its file behind as a crashed server does.
int raw_unix_socket(const std::string& path, bool listening, int backlog = 16) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.data(), path.size());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    throw std::runtime_error("bind failed: " + path);
  if (listening) {
    if (::listen(fd, backlog) != 0) throw std::runtime_error("listen failed");
    return fd;
  }
  ::close(fd);
  return -1;
}

std::string path_of(const std::string& address) { return address.substr(5); }  // after "unix@"

}  // namespace

TEMPLATE_TEST_CASE("calls over a Unix socket: sync, with a deadline, large, and failing", "[unix]", GEERPC_TRANSPORTS) {
  test::temp_dir dir;
  test::arith_server<TestType> s({}, dir.socket());
  CHECK(s.address == dir.socket());  // listen() returns the address as given
  auto client = geerpc::dial<TestType>(s.address, {.timeouts = {.connect = 1s}});
  CHECK(client.template call<int>("Arith.Sum", Args{1, 2}) == 3);
  CHECK(client.template call<int>(geerpc::with_timeout(1s), "Arith.Sum", Args{3, 4}) == 7);
  const std::string big(3u << 20, 'x');  // more than a socket buffer: partial sends and writability
  CHECK(client.template call<std::string>("Arith.Echo", big) == big);
  CHECK(client.template try_call<int>("Arith.Fail", Args{}).code() == geerpc::errc::remote_error);
  auto late = geerpc::dial<TestType>(s.address, {.timeouts = {.handle = 50ms}});
  CHECK(late.template try_call<int>("Arith.WaitForStop", Args{}).code() == geerpc::errc::handle_timeout);
  CHECK(client.template try_call<int>(geerpc::with_timeout(50ms), "Arith.WaitForStop", Args{}).code() ==
        geerpc::errc::deadline_exceeded);
  CHECK(client.template call<int>("Arith.Sum", Args{5, 6}) == 11);
}

TEMPLATE_TEST_CASE("async calls over a Unix socket", "[unix][async]", GEERPC_ASYNC_TRANSPORTS) {
  test::temp_dir dir;
  test::arith_server<TestType> s({}, dir.socket());
  auto client = geerpc::dial<TestType>(s.address);
  std::vector<decltype(client.template async_call<int>("Arith.Sum", Args{}))> calls;
  for (int i = 0; i < 50; ++i) calls.push_back(client.template async_call<int>("Arith.Sum", Args{i, i}));
  for (int i = 0; i < 50; ++i) CHECK(calls[static_cast<std::size_t>(i)].get() == 2 * i);
}

TEMPLATE_TEST_CASE("a Linux abstract Unix socket needs no file", "[unix]", GEERPC_TRANSPORTS) {
  const std::string address = "unix@@geerpc-test-" + std::to_string(::getpid()) + "-" + std::to_string(rand());
  test::arith_server<TestType> s({}, address);
  CHECK(s.address == address);
  CHECK(geerpc::dial<TestType>(address).template call<int>("Arith.Sum", Args{1, 1}) == 2);
  // Taken while it lives, free once stopped: the kernel frees the name with the socket.
  geerpc::basic_server<TestType> rival;
  CHECK_THROWS_AS(rival.listen(address), std::system_error);
  s.server.stop();
  geerpc::basic_server<TestType> next;
  CHECK(next.listen(address) == address);
}

TEMPLATE_TEST_CASE("the socket file is removed by stop(), and by the destructor", "[unix][stop]", GEERPC_TRANSPORTS) {
  test::temp_dir dir;
  {
    test::arith_server<TestType> s({}, dir.socket("a.sock"));
    CHECK(test::file_exists(path_of(s.address)));
    s.server.stop();
    CHECK_FALSE(test::file_exists(path_of(s.address)));
  }
  {
    auto s = std::make_unique<test::arith_server<TestType>>(geerpc::server_options{}, dir.socket("b.sock"));
    CHECK(test::file_exists(path_of(s->address)));
    s.reset();
    CHECK_FALSE(test::file_exists(dir.path() + "/b.sock"));
  }
}

TEMPLATE_TEST_CASE("stop() leaves alone a socket file that another server has put in its place", "[unix][stop]",
                   GEERPC_TRANSPORTS) {
  test::temp_dir dir;
  test::arith_server<TestType> first({}, dir.socket());
  REQUIRE(::unlink(path_of(first.address).c_str()) == 0);  // someone cleans up too eagerly
  test::arith_server<TestType> second({}, dir.socket());
  first.server.stop();
  CHECK(test::file_exists(path_of(second.address)));
  CHECK(geerpc::dial<TestType>(second.address).template call<int>("Arith.Sum", Args{1, 2}) == 3);
}

TEMPLATE_TEST_CASE("a relative socket path is removed even after the directory changes", "[unix][stop]",
                   GEERPC_TRANSPORTS) {
  test::temp_dir dir;
  char before[4096];
  REQUIRE(::getcwd(before, sizeof before) != nullptr);
  REQUIRE(::chdir(dir.path().c_str()) == 0);
  struct restore_cwd {
    const char* path;
    ~restore_cwd() { (void)::chdir(path); }
  } restore{before};
  test::arith_server<TestType> s({}, "unix@rel.sock");
  CHECK(s.address == "unix@rel.sock");
  CHECK(geerpc::dial<TestType>(s.address).template call<int>("Arith.Sum", Args{2, 2}) == 4);
  REQUIRE(::chdir(before) == 0);
  CHECK(test::file_exists(dir.path() + "/rel.sock"));
  s.server.stop();
  CHECK_FALSE(test::file_exists(dir.path() + "/rel.sock"));
}

TEMPLATE_TEST_CASE("a stale socket file, left by a server that died, is replaced", "[unix]", GEERPC_TRANSPORTS) {
  test::temp_dir dir;
  const std::string address = dir.socket();
  raw_unix_socket(path_of(address), false);
  REQUIRE(test::file_exists(path_of(address)));
  REQUIRE(geerpc::try_dial<TestType>(address).code() == geerpc::errc::connect_failed);  // refused
  test::arith_server<TestType> s({}, address);
  CHECK(geerpc::dial<TestType>(address).template call<int>("Arith.Sum", Args{1, 2}) == 3);
}

TEMPLATE_TEST_CASE("a live server's socket is not taken, nor a file that is not a socket", "[unix]",
                   GEERPC_TRANSPORTS) {
  test::temp_dir dir;
  test::arith_server<TestType> live({}, dir.socket());
  geerpc::basic_server<TestType> rival;
  try {
    rival.listen(live.address);
    FAIL("a second server took a live server's socket");
  } catch (const std::system_error& e) {
    CHECK(e.code() == std::errc::address_in_use);
    CHECK_THAT(e.what(), Catch::Contains("another server listens there"));
  }
  CHECK(geerpc::dial<TestType>(live.address).template call<int>("Arith.Sum", Args{1, 2}) == 3);
  live.server.stop();  // and the rival did not remove the file that the live server removes now
  CHECK_FALSE(test::file_exists(path_of(live.address)));

  const std::string precious = dir.path() + "/data.txt";
  std::ofstream(precious) << "keep me";
  geerpc::basic_server<TestType> other;
  try {
    other.listen("unix@" + precious);
    FAIL("listen() took a regular file's path");
  } catch (const std::system_error& e) {
    CHECK(e.code() == std::errc::address_in_use);
    CHECK_THAT(e.what(), Catch::Contains("the file exists and is not a socket"));
  }
  std::string kept;
  std::getline(std::ifstream(precious), kept);
  CHECK(kept == "keep me");
}

TEST_CASE("a socket path too long for a socket address is a clear error", "[unix]") {
  const std::string address = "unix@/tmp/" + std::string(200, 'x') + ".sock";
  geerpc::server server;
  try {
    server.listen(address);
    FAIL("listened on a path longer than sun_path");
  } catch (const geerpc::rpc_error& e) {
    CHECK(e.code() == geerpc::errc::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("the socket path is too long (at most 107 bytes)"));
  }
  auto dialed = geerpc::try_dial(address);
  CHECK(dialed.code() == geerpc::errc::connect_failed);
  CHECK_THAT(dialed.message(), Catch::Contains("the socket path is too long"));
}

TEMPLATE_TEST_CASE("a Unix listener that accepts nothing trips the connect timeout, also with its backlog full",
                   "[unix][timeout]", GEERPC_TRANSPORTS) {
  test::temp_dir dir;
  const std::string address = dir.socket();
  const int fd = raw_unix_socket(path_of(address), true, 0);
  // The first connection waits in the backlog for a handshake reply; the next ones find the
  // backlog full and wait in connect() itself. Both are bounded by connect_timeout.
  for (int i = 0; i < 3; ++i) {
    INFO(i);
    const auto start = std::chrono::steady_clock::now();
    auto r = geerpc::try_dial<TestType>(address, {.timeouts = {.connect = 200ms}});
    CHECK(r.code() == geerpc::errc::connect_timeout);
    CHECK(std::chrono::steady_clock::now() - start >= 200ms);
  }
  ::close(fd);
}

TEMPLATE_TEST_CASE("close() while a call waits over a Unix socket fails that call", "[unix][shutdown]",
                   GEERPC_TRANSPORTS) {
  test::temp_dir dir;
  test::arith_server<TestType> s({}, dir.socket());
  auto client = geerpc::dial<TestType>(s.address);
  // No deadline: the threaded client's caller then sleeps in recv() itself, which close() must end.
  auto call =
      std::async(std::launch::async, [&] { return client.template try_call<int>("Arith.WaitForStop", Args{}).code(); });
  REQUIRE(s.arith.started.wait_for_at_least(1));
  client.close();
  CHECK(call.get() == geerpc::errc::connection_closed);
}

TEMPLATE_TEST_CASE("a server stopped while clients call over a Unix socket ends every call", "[unix][stop]",
                   GEERPC_TRANSPORTS) {
  test::temp_dir dir;
  auto s = std::make_unique<test::arith_server<TestType>>(geerpc::server_options{}, dir.socket());
  std::vector<geerpc::basic_client<TestType>> clients;
  for (int i = 0; i < 4; ++i) clients.push_back(geerpc::dial<TestType>(s->address));
  std::vector<std::future<std::error_code>> calls;
  for (auto& c : clients)
    calls.push_back(
        std::async(std::launch::async, [&c] { return c.template try_call<int>("Arith.WaitForStop", Args{}).code(); }));
  REQUIRE(s->arith.started.wait_for_at_least(4));
  s->server.stop();
  for (auto& call : calls) {
    const auto code = call.get();
    CHECK((code == geerpc::errc::connection_closed || !code));  // closed, or answered as its handler stopped
  }
}

}  // namespace unix_socket_test
