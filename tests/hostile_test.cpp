// Hostile peers speaking raw bytes. For each: the error or close it earns, and a normal client on
// another connection served meanwhile. Limits are set small so that every case is quick.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#include "catch.hpp"
#include "hostile_limits.hpp"
#include "support.hpp"

namespace hostile_test {

using namespace std::chrono_literals;
using test::Args;
using test::hostile_limits;

namespace {

template <class Transport>
struct hostile_fixture {
  test::arith_server<Transport> s{hostile_limits()};

  // A well-behaved client on its own connection still gets its answer.
  bool others_served() {
    auto client = geerpc::try_dial<Transport>(s.address, {.timeouts = {.connect = 2s}});
    if (!client) return false;
    auto r = client->template try_call<int>(geerpc::with_timeout(2s), "Arith.Sum", Args{20, 22});
    return r && *r == 42;
  }

  // A raw peer past the handshake.
  std::unique_ptr<test::raw_peer> greeted() {
    auto peer = std::make_unique<test::raw_peer>(s.address);
    peer->send_hello();
    auto reply = peer->read_hello_reply();
    REQUIRE(reply);
    REQUIRE(reply->accepted);
    return peer;
  }
};

std::vector<std::byte> frame_with(std::uint8_t kind, std::uint8_t status, std::uint64_t seq, std::uint64_t budget,
                                  std::string_view text, std::size_t body_size = 0) {
  std::vector<std::byte> out;
  const std::size_t start =
      geerpc::wire::begin_frame(out, {static_cast<geerpc::wire::frame_kind>(kind), status, seq, budget}, text);
  out.resize(out.size() + body_size, std::byte{0x5a});
  geerpc::wire::finish_frame(out, start);
  return out;
}

std::vector<std::byte> hello_bytes(std::uint32_t magic, std::uint8_t version, std::uint8_t codec, std::uint16_t flags) {
  std::vector<std::byte> bytes(geerpc::wire::hello_size);
  geerpc::wire::encode_hello({version, codec, 0, 1u << 20},
                             std::span<std::byte, geerpc::wire::hello_size>(bytes.data(), bytes.size()));
  geerpc::detail::store_le<std::uint32_t>(bytes.data(), magic);
  geerpc::detail::store_le<std::uint16_t>(bytes.data() + 6, flags);
  return bytes;
}

std::vector<std::byte> length_prefix(std::uint32_t length) {
  std::vector<std::byte> out(4);
  geerpc::detail::store_le<std::uint32_t>(out.data(), length);
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------- handshake

TEMPLATE_TEST_CASE("hostile: a bad hello is refused with its reason, then closed", "[hostile][handshake]",
                   GEERPC_TRANSPORTS) {
  hostile_fixture<TestType> f;
  struct bad_hello {
    std::vector<std::byte> bytes;
    const char* reason;
  };
  constexpr std::uint8_t version = geerpc::wire::protocol_version;
  const std::vector<bad_hello> cases = {
      {hello_bytes(0xdeadbeef, version, 1, 0), "rpc server: invalid magic number"},
      {hello_bytes(geerpc::wire::magic, 1, 1, 0),
       "rpc server: the client speaks geerpc protocol version 1, this server 2: both sides need a geerpc of the "
       "same protocol version (docs/protocol.md 2.3)"},
      {hello_bytes(geerpc::wire::magic, version, 9, 0),
       "rpc server: unsupported codec 9: this server speaks binary (1)"},
      {hello_bytes(geerpc::wire::magic, version, 1, 4), "rpc server: unknown handshake flags"},
  };
  for (const auto& c : cases) {
    test::raw_peer peer(f.s.address);
    peer.send(c.bytes);
    auto reply = peer.read_hello_reply();
    REQUIRE(reply);
    CHECK_FALSE(reply->accepted);
    CHECK(reply->reason == c.reason);
    CHECK(peer.closed_by_peer());
  }
  CHECK(f.others_served());
}

TEMPLATE_TEST_CASE("hostile: a truncated hello followed by a close is cleaned up", "[hostile][handshake]",
                   GEERPC_TRANSPORTS) {
  hostile_fixture<TestType> f;
  {
    test::raw_peer peer(f.s.address);
    auto hello = hello_bytes(geerpc::wire::magic, geerpc::wire::protocol_version, 1, 0);
    peer.send(std::span(hello).first(7));
  }
  CHECK(test::eventually([&] { return f.s.server.connection_count() == 0; }));
  CHECK(f.others_served());
}

TEMPLATE_TEST_CASE("hostile: a slowloris hello is dropped at the handshake timeout", "[hostile][handshake]",
                   GEERPC_TRANSPORTS) {
  hostile_fixture<TestType> f;
  const auto start = std::chrono::steady_clock::now();  // before connecting: the clock starts at accept
  test::raw_peer peer(f.s.address);
  auto hello = hello_bytes(geerpc::wire::magic, geerpc::wire::protocol_version, 1, 0);
  peer.send(std::span(hello).first(1));
  CHECK(f.others_served());  // while the slow peer holds its connection
  // Trickle the rest, one byte at a time, too slowly to finish within the 200 ms limit.
  bool dropped = false;
  for (std::size_t i = 1; i < hello.size() && !dropped; ++i) {
    if (peer.closed_by_peer(50ms))
      dropped = true;
    else if (::send(peer.fd(), &hello[i], 1, MSG_NOSIGNAL) != 1)
      dropped = true;
  }
  CHECK((dropped || peer.closed_by_peer()));
  CHECK(std::chrono::steady_clock::now() - start >= 200ms);
  CHECK(f.others_served());
}

// ------------------------------------------------------------------------------ broken frames

TEMPLATE_TEST_CASE("hostile: frames that break the framing close that connection only", "[hostile][frame]",
                   GEERPC_TRANSPORTS) {
  hostile_fixture<TestType> f;
  struct bad_frame {
    const char* what;
    std::vector<std::byte> bytes;
  };
  auto lying_text = frame_with(1, 0, 1, 0, "Arith.Sum", 8);
  geerpc::detail::store_le<std::uint16_t>(lying_text.data() + 6, 60000);  // text longer than the frame
  auto lying_length = frame_with(1, 0, 1, 0, "Arith.Sum", 8);
  geerpc::detail::store_le<std::uint32_t>(lying_length.data(), 19);  // shorter than a header
  const std::vector<bad_frame> cases = {
      {"length prefix 0", length_prefix(0)},
      {"length prefix 0xFFFFFFFF", length_prefix(0xffffffff)},
      {"length just over the limit", length_prefix((64u << 10) + 1)},
      {"length shorter than a header", lying_length},
      {"text length beyond the frame", lying_text},
      {"unknown frame kind", frame_with(9, 0, 1, 0, "Arith.Sum", 8)},
      {"a response from the client", frame_with(2, 0, 1, 0, "", 4)},
      {"a request with unknown flags", frame_with(1, 6, 1, 0, "Arith.Sum", 8)},
      {"a request whose fingerprint is cut short", frame_with(1, 1, 1, 0, "Arith.Sum", 3)},
      {"a cancel with a payload", frame_with(3, 0, 1, 0, "x", 0)},
      {"a goaway from the client", frame_with(4, 0, 0, 0, "", 0)},
      {"a request whose metadata block's size field is cut short", frame_with(1, 2, 1, 0, "Arith.Sum", 3)},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    auto peer = f.greeted();
    peer->send(c.bytes);
    CHECK(peer->closed_by_peer());
  }
  CHECK(f.others_served());
}

TEMPLATE_TEST_CASE("hostile: a claimed 4 GiB frame allocates nothing and is refused at once", "[hostile][frame]",
                   GEERPC_TRANSPORTS) {
  hostile_fixture<TestType> f;
  auto peer = f.greeted();
  auto bytes = length_prefix(0xfffffff0);
  bytes.resize(bytes.size() + 1000, std::byte{1});
  const auto start = std::chrono::steady_clock::now();
  peer->send(bytes);
  CHECK(peer->closed_by_peer());
  CHECK(std::chrono::steady_clock::now() - start < 2s);  // judged on the prefix, not after reading
  CHECK(f.others_served());
}

TEMPLATE_TEST_CASE("hostile: garbage after a valid frame: the frame is answered, then the connection closed",
                   "[hostile][frame]", GEERPC_TRANSPORTS) {
  hostile_fixture<TestType> f;
  auto peer = f.greeted();
  auto bytes = test::request_frame(1, "Arith.Sum", Args{1, 2});
  const std::vector<std::byte> garbage(16, std::byte{0xff});
  bytes.insert(bytes.end(), garbage.begin(), garbage.end());
  peer->send(bytes);
  auto answer = peer->read_frame();
  // The answer and the close race: the server may close before writing it. Either the right answer
  // or nothing, never a wrong one.
  if (answer) CHECK(test::decode_body<int>(answer->body) == 3);
  CHECK(peer->closed_by_peer());
  CHECK(f.others_served());
}

TEMPLATE_TEST_CASE("hostile: a peer that closes mid-frame is cleaned up", "[hostile][frame]", GEERPC_TRANSPORTS) {
  hostile_fixture<TestType> f;
  {
    auto peer = f.greeted();
    auto bytes = test::request_frame(1, "Arith.Echo", std::string(10000, 'x'));
    peer->send(std::span(bytes).first(5000));
  }
  CHECK(test::eventually([&] { return f.s.server.connection_count() == 0; }));
  CHECK(f.others_served());
}

TEMPLATE_TEST_CASE("hostile: a slowloris frame is dropped at the frame timeout, trickling or not", "[hostile][frame]",
                   GEERPC_TRANSPORTS) {
  hostile_fixture<TestType> f;
  SECTION("half a frame, then silence") {
    auto peer = f.greeted();
    auto bytes = test::request_frame(1, "Arith.Sum", Args{1, 2});
    peer->send(std::span(bytes).first(bytes.size() / 2));
    CHECK(f.others_served());
    CHECK(peer->closed_by_peer());
  }
  SECTION("a byte every 20 ms: the clock is not reset by each byte") {
    auto peer = f.greeted();
    auto bytes = test::request_frame(1, "Arith.Echo", std::string(100, 'x'));
    const auto start = std::chrono::steady_clock::now();
    bool dropped = false;
    for (std::size_t i = 0; i < bytes.size() && !dropped; ++i) {
      if (peer->closed_by_peer(20ms))
        dropped = true;
      else if (::send(peer->fd(), &bytes[i], 1, MSG_NOSIGNAL) != 1)
        dropped = true;
    }
    CHECK((dropped || peer->closed_by_peer()));
    CHECK(std::chrono::steady_clock::now() - start < 2s);  // 100+ bytes at 20 ms would take 2.5 s
    CHECK(f.others_served());
  }
}

// -------------------------------------------------------------------------- wrong requests

TEMPLATE_TEST_CASE("hostile: requests that are wrong but well framed get an error, and the connection stays usable",
                   "[hostile][request]", GEERPC_TRANSPORTS) {
  hostile_fixture<TestType> f;
  auto peer = f.greeted();
  struct wrong_request {
    std::vector<std::byte> bytes;
    geerpc::errc expected;
  };
  const std::vector<wrong_request> cases = {
      {test::request_frame(1, "Arith.Sum", std::string("two")), geerpc::errc::bad_request},
      {frame_with(1, 0, 2, 0, "Arith.Sum", 4), geerpc::errc::bad_request},   // truncated body
      {frame_with(1, 0, 3, 0, "Arith.Sum", 12), geerpc::errc::bad_request},  // trailing bytes
      {frame_with(1, 0, 4, 0, "Arith.Sum", 0), geerpc::errc::bad_request},   // no body at all
      {test::request_frame(5, "Nope.Sum", Args{}), geerpc::errc::unknown_service},
      {test::request_frame(6, "Arith.Nope", Args{}), geerpc::errc::unknown_method},
      {test::request_frame(7, "", Args{}), geerpc::errc::bad_request},
      {test::request_frame(8, "Arith.", Args{}), geerpc::errc::unknown_method},
      {test::request_frame(9, ".Sum", Args{}), geerpc::errc::unknown_service},
      {frame_with(1, 0, 10, 0, "Arith.Echo", 3), geerpc::errc::bad_request},  // a string claiming 90 bytes
  };
  for (const auto& c : cases) {
    peer->send(c.bytes);
    auto answer = peer->read_frame();
    REQUIRE(answer);
    CHECK(answer->header.status == static_cast<std::uint8_t>(c.expected));
    CHECK(answer->body.empty());
  }
  peer->send(test::request_frame(11, "Arith.Sum", Args{2, 3}));
  auto fine = peer->read_frame();
  REQUIRE(fine);
  CHECK(fine->header.seq == 11);
  CHECK(test::decode_body<int>(fine->body) == 5);
  CHECK(f.others_served());
}

TEMPLATE_TEST_CASE("hostile: a cancel for an unknown call is ignored", "[hostile][request]", GEERPC_TRANSPORTS) {
  hostile_fixture<TestType> f;
  auto peer = f.greeted();
  const auto cancel = geerpc::detail::cancel_frame(12345);
  peer->send(cancel);
  peer->send(test::request_frame(1, "Arith.Sum", Args{1, 1}));
  auto answer = peer->read_frame();
  REQUIRE(answer);
  CHECK(answer->header.seq == 1);  // no response to the stray cancel came first
  CHECK(test::decode_body<int>(answer->body) == 2);
  CHECK(f.others_served());
}

TEMPLATE_TEST_CASE("hostile: a duplicate sequence number in flight closes the connection", "[hostile][request]",
                   GEERPC_TRANSPORTS) {
  hostile_fixture<TestType> f;
  auto peer = f.greeted();
  auto bytes = test::request_frame(7, "Arith.Late", Args{1, 0});
  auto again = test::request_frame(7, "Arith.Sum", Args{1, 2});
  bytes.insert(bytes.end(), again.begin(), again.end());
  peer->send(bytes);
  CHECK(peer->closed_by_peer());
  f.s.arith.release.set();  // the first request's handler may have started; let it finish
  CHECK(f.others_served());
}

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

TEMPLATE_TEST_CASE("a steady stream whose reads end mid-frame is not mistaken for a stalled frame", "[hostile][frame]",
                   GEERPC_TRANSPORTS) {
  hostile_fixture<TestType> f;  // frame_timeout = 200 ms
  auto peer = f.greeted();
  // 40 frames, sent as pieces that each finish one frame and start the next, every 20 ms: always a
  // frame pending, for about 800 ms in all, but no frame older than 20 ms.
  std::vector<std::byte> stream;
  for (std::uint64_t seq = 1; seq <= 40; ++seq) {
    auto frame = test::request_frame(seq, "Arith.Sum", Args{static_cast<int>(seq), 1});
    stream.insert(stream.end(), frame.begin(), frame.end());
  }
  const std::size_t frame_size = stream.size() / 40;
  std::size_t sent = 0;
  int answered = 0;
  for (std::size_t piece = frame_size / 2; sent < stream.size(); piece = frame_size) {
    const std::size_t n = std::min(piece, stream.size() - sent);
    peer->send(std::span(stream).subspan(sent, n));
    sent += n;
    while (auto answer = peer->read_frame(20ms)) answered += answer->header.status == 0 ? 1 : 0;
  }
  while (answered < 40) {
    auto answer = peer->read_frame();
    REQUIRE(answer);
    answered += answer->header.status == 0 ? 1 : 0;
  }
  CHECK(answered == 40);
  CHECK(f.others_served());
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

}  // namespace hostile_test
