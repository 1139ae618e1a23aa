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
#include "hostile_fixture.hpp"
#include "support.hpp"

namespace hostile_test {

using namespace std::chrono_literals;
using test::Args;
using test::hostile_fixture;

namespace {

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

}  // namespace hostile_test
