// Hostile peers against the server's limits: a flood past the in-flight limits, a peer that never
// reads its responses, and request bytes waiting for a handler, per connection and per server. Each
// earns busy answers or a close, and a normal client on another connection is served meanwhile.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#include "catch.hpp"
#include "hostile_fixture.hpp"
#include "support.hpp"

namespace hostile_limits_test {

using namespace std::chrono_literals;
using test::Args;
using test::hostile_fixture;

TEST_CASE("hostile: a flood past the in-flight limit gets busy answers, not a stall", "[hostile][limits]") {
  hostile_fixture<geerpc::threaded> f;
  auto peer = f.greeted();
  std::vector<std::byte> flood;
  for (std::uint64_t seq = 1; seq <= 14; ++seq) {
    auto request = test::request_frame(seq, "Arith.Late", Args{static_cast<int>(seq), 0});
    flood.insert(flood.end(), request.begin(), request.end());
  }
  peer->send(flood);
  int busy = 0;
  for (int i = 0; i < 10; ++i) {  // the 4 admitted ones are blocked until released
    auto answer = peer->read_frame();
    REQUIRE(answer);
    if (answer->header.status == static_cast<std::uint8_t>(geerpc::errc::busy)) ++busy;
  }
  CHECK(busy == 10);
  CHECK(f.others_served());
  f.s.arith.release.set();
  for (int i = 0; i < 4; ++i) {
    auto answer = peer->read_frame();
    REQUIRE(answer);
    CHECK(answer->header.status == 0);
  }
}

TEST_CASE("hostile: a server-wide in-flight limit answers busy across connections", "[hostile][limits]") {
  geerpc::server_options opts;
  opts.limits.max_inflight = 2;
  test::arith_server<geerpc::threaded> s(opts);
  auto a = geerpc::dial(s.address);
  auto b = geerpc::dial(s.address);
  auto first = a.async_call<int>("Arith.Late", Args{1, 0});
  auto second = b.async_call<int>("Arith.Late", Args{2, 0});
  REQUIRE(s.arith.started.wait_for_at_least(2));
  auto third = geerpc::dial(s.address).try_call<int>("Arith.Sum", Args{1, 1});
  CHECK(third.code() == geerpc::errc::busy);
  CHECK(third.message() == "rpc server: too many requests in flight");
  s.arith.release.set();
  CHECK(first.get() == 1000);
  CHECK(second.get() == 2000);
}

TEST_CASE("hostile: a peer that never reads its responses blocks nobody and is dropped past the output limit",
          "[hostile][limits]") {
  hostile_fixture<geerpc::threaded> f;
  auto peer = f.greeted();
  int shrink = 4096;
  ::setsockopt(peer->fd(), SOL_SOCKET, SO_RCVBUF, &shrink, sizeof shrink);
  const auto request = test::request_frame(1, "Arith.Echo", std::string(32u << 10, 'x'));
  // Keep sending and never read: replies pile up in the server until it gives up on this peer.
  bool dropped = false;
  for (std::uint64_t seq = 1; seq <= 400 && !dropped; ++seq) {
    auto r = request;
    geerpc::detail::store_le<std::uint64_t>(r.data() + geerpc::wire::offset::seq, seq);
    std::size_t sent = 0;
    while (sent < r.size()) {
      pollfd p{peer->fd(), POLLOUT, 0};
      if (::poll(&p, 1, 2000) <= 0 || (p.revents & (POLLERR | POLLHUP))) {
        dropped = true;
        break;
      }
      const ssize_t n = ::send(peer->fd(), r.data() + sent, r.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno != EAGAIN) {
        dropped = true;
        break;
      }
      if (n > 0) sent += static_cast<std::size_t>(n);
    }
    if (seq % 20 == 0) CHECK(f.others_served());  // served while the bad peer's replies pile up
  }
  CHECK(f.others_served());
  CHECK(test::eventually([&] { return f.s.server.connection_count() <= 1; }));
}

// ------------------------------------------------------------- request bytes waiting for a handler

namespace {

std::vector<std::byte> echo_request(std::uint64_t seq, std::size_t size) {
  return test::request_frame(seq, "Arith.Echo", std::string(size, 'x'));
}

std::size_t encoded_size(const std::string& value) {
  std::vector<std::byte> out;
  geerpc::binary_codec::encode(value, out);
  return out.size();
}

// Sends from another thread, which the send may block (a server that reads nothing): however the
// test ends, the handlers are let go and the thread is joined.
class background_send {
 public:
  background_send(test::Arith& arith, test::raw_peer& peer, std::vector<std::byte> bytes)
      : arith_(arith), peer_(peer), thread_([this, bytes = std::move(bytes)] {
          try {
            peer_.send(bytes);
          } catch (const std::exception&) {  // the test gave up on the peer
          }
        }) {}
  ~background_send() {
    arith_.release.set();
    if (!done_) ::shutdown(peer_.fd(), SHUT_RDWR);
    thread_.join();
  }
  void join() {
    thread_.join();
    thread_ = std::thread([] {});
    done_ = true;
  }

 private:
  test::Arith& arith_;
  test::raw_peer& peer_;
  std::thread thread_;
  bool done_ = false;
};

}  // namespace

TEMPLATE_TEST_CASE("hostile: request bytes waiting for a handler are bounded per connection: beyond: busy",
                   "[hostile][limits]", GEERPC_TRANSPORTS) {
  geerpc::server_options opts;
  opts.threads.handlers = 1;
  opts.threads.max_handlers = 1;  // so that requests wait
  opts.limits.max_frame_size = 2u << 20;
  opts.limits.max_queued_request_bytes_per_connection = (4u << 20) + (512u << 10);  // four 1 MiB requests
  test::arith_server<TestType> s(opts);
  test::raw_peer peer(s.address);
  peer.send_hello();
  REQUIRE(peer.read_hello_reply());
  // One request that holds the only handler thread, then eight of 1 MiB behind it.
  std::vector<std::byte> burst = test::request_frame(1, "Arith.Late", Args{1, 0});
  for (std::uint64_t seq = 2; seq <= 9; ++seq) {
    const auto big = echo_request(seq, 1u << 20);
    burst.insert(burst.end(), big.begin(), big.end());
  }
  background_send sender(s.arith, peer, std::move(burst));  // blocks while the server reads nothing (blocking)
  REQUIRE(s.arith.started.wait_for_at_least(1));
  constexpr bool queues = !std::is_same_v<TestType, geerpc::blocking>;
  if (queues) {  // the last four do not fit: busy at once, their bodies not kept
    for (std::uint64_t seq = 6; seq <= 9; ++seq) {
      auto answer = peer.read_frame();
      REQUIRE(answer);
      CHECK(answer->header.seq == seq);
      CHECK(answer->header.status == static_cast<std::uint8_t>(geerpc::errc::busy));
      CHECK(answer->text == "rpc server: too many request bytes waiting");
    }
    CHECK(s.server.queued_request_bytes() >= (4u << 20));
  }
  // The blocking server reads nothing while its thread runs a handler: nothing waits in it.
  CHECK(s.server.queued_request_bytes() <= opts.limits.max_queued_request_bytes_per_connection);
  s.arith.release.set();
  auto late = peer.read_frame();
  REQUIRE(late);
  CHECK(late->header.seq == 1);
  CHECK(test::decode_body<int>(late->body) == 1000);
  for (std::uint64_t seq = 2; seq <= (queues ? 5u : 9u); ++seq) {
    auto answer = peer.read_frame();
    REQUIRE(answer);
    CHECK(answer->header.seq == seq);
    CHECK(answer->header.status == 0);
    CHECK(answer->body.size() == encoded_size(std::string(1u << 20, 'x')));
  }
  sender.join();
  CHECK(test::eventually([&] { return s.server.queued_request_bytes() == 0; }));
}

TEMPLATE_TEST_CASE("hostile: request bytes waiting for a handler are bounded per server: beyond: busy",
                   "[hostile][limits]", GEERPC_TRANSPORTS) {
  geerpc::server_options opts;
  opts.threads.handlers = 1;
  opts.threads.max_handlers = 1;
  opts.limits.max_frame_size = 2u << 20;
  opts.limits.max_queued_request_bytes = (2u << 20) + (512u << 10);  // two 1 MiB requests
  test::arith_server<TestType> s(opts);
  test::raw_peer a(s.address), b(s.address);
  for (auto* peer : {&a, &b}) {
    peer->send_hello();
    REQUIRE(peer->read_hello_reply());
  }
  // `a` holds the handler thread and queues two big requests behind it.
  std::vector<std::byte> burst = test::request_frame(1, "Arith.Late", Args{1, 0});
  for (std::uint64_t seq = 2; seq <= 3; ++seq) {
    const auto big = echo_request(seq, 1u << 20);
    burst.insert(burst.end(), big.begin(), big.end());
  }
  background_send sender(s.arith, a, std::move(burst));
  REQUIRE(s.arith.started.wait_for_at_least(1));
  constexpr bool queues = !std::is_same_v<TestType, geerpc::blocking>;
  if (queues) REQUIRE(test::eventually([&] { return s.server.queued_request_bytes() >= (2u << 20); }));
  // `b`'s big requests: the server has no room left for them (the blocking server runs them on
  // b's own thread, so nothing of theirs waits).
  for (std::uint64_t seq = 1; seq <= 2; ++seq) {
    b.send(echo_request(seq, 1u << 20));
    auto answer = b.read_frame();
    REQUIRE(answer);
    CHECK(answer->header.seq == seq);
    if (queues) {
      CHECK(answer->header.status == static_cast<std::uint8_t>(geerpc::errc::busy));
      CHECK(answer->text == "rpc server: too many request bytes waiting");
    } else {
      CHECK(answer->header.status == 0);
    }
  }
  CHECK(s.server.queued_request_bytes() <= opts.limits.max_queued_request_bytes);
  s.arith.release.set();
  for (std::uint64_t seq = 1; seq <= 3; ++seq) {
    auto answer = a.read_frame();
    REQUIRE(answer);
    CHECK(answer->header.seq == seq);
    CHECK(answer->header.status == 0);
  }
  sender.join();
  CHECK(test::eventually([&] { return s.server.queued_request_bytes() == 0; }));
}

}  // namespace hostile_limits_test
