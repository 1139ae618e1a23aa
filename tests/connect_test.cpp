// dial(): the connect timeout (TCP connect plus handshake), refusals and bad addresses.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "catch.hpp"
#include "support.hpp"

namespace connect_test {

using namespace std::chrono_literals;

TEMPLATE_TEST_CASE("a server that never answers the handshake trips the connect timeout", "[connect][timeout]",
                   geerpc::blocking, geerpc::threaded) {
  test::listener stalled;
  const auto start = std::chrono::steady_clock::now();
  auto client = geerpc::try_dial<TestType>(stalled.address(), {.timeouts = {.connect = 300ms}});
  CHECK(std::chrono::steady_clock::now() - start >= 300ms);
  REQUIRE_FALSE(client);
  CHECK(client.code() == geerpc::errc::connect_timeout);
  CHECK(client.message() == "rpc client: connect timeout: expect within 300ms");
  CHECK_THROWS_AS(geerpc::dial<TestType>(stalled.address(), {.timeouts = {.connect = 100ms}}), geerpc::rpc_error);
}

TEST_CASE("connect_timeout 0 waits for a slow handshake as long as it takes", "[connect][timeout]") {
  test::listener slow;
  // The server answers only after the client has waited well past any short limit.
  std::jthread server([&] {
    const int peer = ::accept(slow.fd(), nullptr, nullptr);
    std::byte hello[geerpc::wire::hello_size];
    [[maybe_unused]] auto n = ::recv(peer, hello, sizeof hello, MSG_WAITALL);
    std::this_thread::sleep_for(400ms);
    std::vector<std::byte> reply;
    geerpc::wire::encode_hello_reply({true, geerpc::wire::default_max_frame_size, {}}, reply);
    [[maybe_unused]] auto m = ::send(peer, reply.data(), reply.size(), MSG_NOSIGNAL);
    ::close(peer);
  });
  auto client = geerpc::try_dial(slow.address(), {.timeouts = {.connect = 0s}});
  CHECK(client.has_value());
}

TEST_CASE("dialing a closed port or a bad address fails at once with connect_failed", "[connect]") {
  std::string closed_address;
  {
    test::listener gone;
    closed_address = gone.address();
  }
  auto refused = geerpc::try_dial(closed_address, {.timeouts = {.connect = 1s}});
  CHECK(refused.code() == geerpc::errc::connect_failed);
  CHECK(refused.message().find("rpc client: dial " + closed_address) == 0);

  for (const char* bad : {"127.0.0.1", "127.0.0.1:", "127.0.0.1:99999", "[::1:80", ":80", "::1:80", "127.0.0.1:x"}) {
    auto r = geerpc::try_dial(bad, {.timeouts = {.connect = 1s}});
    INFO(bad);
    CHECK(r.code() == geerpc::errc::connect_failed);
  }
}

TEST_CASE("a server listens on IPv6 loopback too", "[connect]") {
  test::Arith arith;
  geerpc::server server;
  server.add<test::ArithApi>(arith);
  std::string address;
  try {
    address = server.listen("[::1]:0");
  } catch (const std::system_error&) {
    WARN("no IPv6 loopback on this machine");
    return;
  }
  CHECK(address.rfind("[::1]:", 0) == 0);
  auto client = geerpc::dial(address);
  CHECK(client.call<int>("Arith.Sum", test::Args{1, 2}) == 3);
}

TEST_CASE("the handshake refuses a wrong magic, version or codec with a reason", "[connect][handshake]") {
  test::arith_server<geerpc::threaded> s;
  struct variant {
    std::uint32_t magic;
    std::uint8_t version;
    std::uint8_t codec;
    const char* reason;
  };
  constexpr std::uint8_t version = geerpc::wire::protocol_version;
  for (const variant& v :
       {variant{0x12345678, version, 1, "rpc server: invalid magic number"},
        variant{geerpc::wire::magic, 9, 1,
                "rpc server: the client speaks geerpc protocol version 9, this server 2: both sides need a geerpc "
                "of the same protocol version (docs/protocol.md 2.3)"},
        variant{geerpc::wire::magic, version, 7, "rpc server: unsupported codec 7: this server speaks binary (1)"}}) {
    test::raw_peer peer(s.address);
    std::array<std::byte, geerpc::wire::hello_size> hello{};
    geerpc::wire::encode_hello({v.version, v.codec, 0, 1u << 20}, hello);
    geerpc::detail::store_le<std::uint32_t>(hello.data(), v.magic);
    peer.send(hello);
    auto reply = peer.read_hello_reply();
    REQUIRE(reply);
    CHECK_FALSE(reply->accepted);
    CHECK(reply->reason == v.reason);
    CHECK(peer.closed_by_peer());
  }
  auto client = geerpc::dial(s.address);  // and the server still serves
  CHECK(client.call<int>("Arith.Sum", test::Args{1, 2}) == 3);
}

TEST_CASE("connections beyond max_connections are refused in the handshake", "[connect][limits]") {
  test::arith_server<geerpc::threaded> s({.limits = {.max_connections = 2}});
  auto first = geerpc::dial(s.address);
  auto second = geerpc::dial(s.address);
  REQUIRE(first.call<int>("Arith.Sum", test::Args{1, 1}) == 2);
  REQUIRE(test::eventually([&] { return s.server.connection_count() == 2; }));
  auto third = geerpc::try_dial(s.address, {.timeouts = {.connect = 1s}});
  CHECK(third.code() == geerpc::errc::handshake_rejected);
  CHECK(third.message() == "rpc client: handshake rejected: rpc server: too many connections (limit 2)");
  CHECK(second.call<int>("Arith.Sum", test::Args{2, 2}) == 4);
}

TEST_CASE("a server of another protocol version is named with both versions, and an accept from one is refused",
          "[connect][handshake]") {
  test::listener older;
  std::thread server([&] {
    for (const bool accept : {false, true}) {
      auto peer = test::accept_raw(older);
      if (!peer || !peer->read(geerpc::wire::hello_size)) return;
      std::vector<std::byte> reply;
      geerpc::wire::encode_hello_reply(
          {accept, accept ? 4096u : 0u, accept ? "" : "rpc server: unsupported protocol version 2", 1}, reply);
      peer->send(reply);
      peer->closed_by_peer();  // until the client hangs up
    }
  });
  auto rejected = geerpc::try_dial(older.address(), {.timeouts = {.connect = 5s}});
  CHECK(rejected.code() == geerpc::errc::handshake_rejected);
  CHECK(rejected.message() ==
        "rpc client: handshake rejected: the server speaks geerpc protocol version 1, this client 2 (its reason: "
        "rpc server: unsupported protocol version 2)");
  auto accepted = geerpc::try_dial(older.address(), {.timeouts = {.connect = 5s}});
  CHECK(accepted.code() == geerpc::errc::protocol_error);
  CHECK_THAT(accepted.message(), Catch::Matchers::EndsWith("unsupported protocol version in the handshake reply"));
  server.join();
}

}  // namespace connect_test
