// The call context and metadata (issue 16, point 4): what a handler learns about its call, and the
// metadata a caller attaches and its limits, over every transport. Interceptors: interceptor_test.cpp.
#include <sys/socket.h>

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "context_support.hpp"
#include "support.hpp"

namespace context_test {

using namespace std::chrono_literals;
using test::context::Kv;
using test::context::KvApi;
using test::context::seen;

namespace {

// The address a client's socket has: what the server sees as its peer.
std::string local_address_of(int fd) {
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  return geerpc::net::endpoint_text(address, size);
}

}  // namespace

TEMPLATE_TEST_CASE("a handler sees its call's peer, method, deadline, connection and metadata", "[context]",
                   GEERPC_TRANSPORTS) {
  Kv kv;
  geerpc::basic_server<TestType> server;
  server.template add<KvApi>(kv);
  const std::string address = server.listen("127.0.0.1:0");
  auto client = geerpc::dial<TestType>(address);
  auto other = geerpc::dial<TestType>(address);

  const auto ctx = geerpc::with_timeout(5s)
                       .with_metadata("authorization", "Bearer abc")
                       .with_metadata("trace-id", "1")
                       .with_metadata("empty", "")
                       .with_metadata("binary", std::string("a\0b\xff", 4))
                       .with_metadata("trace-id", "2");  // replaces the first
  CHECK(client.template call<std::string>(ctx, "Kv.Get", std::string("k")) == "value of k");
  CHECK(client.template call<std::string>("Kv.Get", std::string("k2")) == "value of k2");
  CHECK(other.template call<std::string>("Kv.Get", std::string("k3")) == "value of k3");
  CHECK(client.template call<int>("Kv.StopThenContext", 1) == 2);
  CHECK(client.template call<int>(geerpc::with_metadata("x", "y"), "Kv.ContextThenStop", 1) == 3);

  std::lock_guard lock(kv.mutex);
  REQUIRE(kv.calls.size() == 3);
  const seen& first = kv.calls[0];
  CHECK(first.method == "Kv.Get");
  CHECK(first.peer.rfind("127.0.0.1:", 0) == 0);
  CHECK(first.peer != address);  // the client's end, not the server's
  CHECK(first.authorization == "Bearer abc");
  CHECK(first.has_deadline);
  CHECK_FALSE(first.has_missing);
  CHECK(first.metadata ==
        std::vector<std::pair<std::string, std::string>>{
            {"authorization", "Bearer abc"}, {"trace-id", "2"}, {"empty", ""}, {"binary", std::string("a\0b\xff", 4)}});
  const seen& second = kv.calls[1];
  CHECK(second.authorization == "(none)");
  CHECK_FALSE(second.has_deadline);
  CHECK(second.metadata.empty());
  CHECK(second.connection == first.connection);  // one client, one connection
  CHECK(second.peer == first.peer);
  CHECK(kv.calls[2].connection != first.connection);
  CHECK(kv.calls[2].peer != first.peer);
}

TEST_CASE("the peer a handler sees is the client's own address", "[context]") {
  // Checked against the client's socket, through a raw connection the test controls.
  Kv kv;
  geerpc::server server;
  server.add<KvApi>(kv);
  const std::string address = server.listen("127.0.0.1:0");
  test::raw_peer peer(address);
  peer.send_hello();
  REQUIRE(peer.read_hello_reply());
  peer.send(test::request_frame(1, "Kv.Get", std::string("k")));
  const auto reply = peer.read_frame();
  REQUIRE(reply);
  CHECK(reply->header.status == 0);
  std::lock_guard lock(kv.mutex);
  REQUIRE(kv.calls.size() == 1);
  CHECK(kv.calls[0].peer == local_address_of(peer.fd()));
}

TEMPLATE_TEST_CASE("metadata the client cannot send fails the call before anything is sent", "[context]",
                   GEERPC_TRANSPORTS) {
  Kv kv;
  geerpc::basic_server<TestType> server;
  server.template add<KvApi>(kv);
  auto client = geerpc::dial<TestType>(server.listen("127.0.0.1:0"));
  for (const std::string& key : {std::string(), std::string("with space"), std::string(256, 'k'),
                                 std::string("tab\tkey"), std::string("\x7f")}) {
    auto r = client.template try_call<int>(geerpc::with_metadata(key, "v"), "Kv.Count");
    CHECK(r.code() == geerpc::errc::invalid_argument);
    CHECK(r.message().find("metadata key") != std::string::npos);
  }
  auto big = client.template try_call<int>(geerpc::with_metadata("k", std::string(65536, 'v')), "Kv.Count");
  CHECK(big.code() == geerpc::errc::invalid_argument);
  CHECK(big.message() == "rpc client: metadata value of \"k\" has 65536 bytes, more than 65535");
  CHECK(kv.runs == 0);
  // The longest key and value the format holds go through (under a server limit that allows them).
  CHECK(client.template try_call<int>(geerpc::with_metadata(std::string(255, 'k'), "v"), "Kv.Count").value() == 1);
}

TEMPLATE_TEST_CASE("metadata over the server's limit is refused with bad_request, and the connection serves on",
                   "[context]", GEERPC_TRANSPORTS) {
  Kv kv;
  geerpc::server_options opts;
  opts.limits.max_metadata_bytes = 64;
  geerpc::basic_server<TestType> server(opts);
  server.template add<KvApi>(kv);
  auto client = geerpc::dial<TestType>(server.listen("127.0.0.1:0"));
  // 4 (size) + 1 (version) + 1 + 1 + 2 + n: 64 bytes exactly at n = 55.
  CHECK(client.template try_call<int>(geerpc::with_metadata("k", std::string(55, 'v')), "Kv.Count").value() == 1);
  auto over = client.template try_call<int>(geerpc::with_metadata("k", std::string(56, 'v')), "Kv.Count");
  CHECK(over.code() == geerpc::errc::bad_request);
  CHECK(over.message() == "rpc server: request metadata of 65 bytes exceeds the limit of 64");
  CHECK(kv.runs == 1);
  CHECK(client.template call<int>("Kv.Count") == 2);
}

namespace {
// A request frame with flags 0x02 and `block` (everything after the size field) as its metadata.
std::vector<std::byte> request_with_block(std::uint64_t seq, std::string_view method,
                                          const std::vector<std::byte>& block, std::uint32_t claimed_size) {
  std::vector<std::byte> out;
  const std::size_t start = geerpc::wire::begin_frame(
      out, {geerpc::wire::frame_kind::request, geerpc::wire::request_flag::metadata, seq, 0}, method);
  for (int i = 0; i < 4; ++i) out.push_back(std::byte{static_cast<std::uint8_t>(claimed_size >> (8 * i))});
  out.insert(out.end(), block.begin(), block.end());
  geerpc::wire::finish_frame(out, start);
  return out;
}
std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(std::byte{static_cast<std::uint8_t>(v)});
  return out;
}
}  // namespace

TEST_CASE("a malformed metadata block is a bad_request: one that overruns its frame closes the connection",
          "[context][hostile]") {
  Kv kv;
  geerpc::server server;
  server.add<KvApi>(kv);
  const std::string address = server.listen("127.0.0.1:0");
  test::raw_peer peer(address);
  peer.send_hello();
  REQUIRE(peer.read_hello_reply());

  const std::vector<std::pair<std::vector<std::byte>, std::string>> bad = {
      {bytes_of({}), "rpc server: request metadata without a version"},
      {bytes_of({2}), "rpc server: request metadata of an unknown version"},
      {bytes_of({1, 0, 0, 0}), "rpc server: request metadata key empty or not printable ASCII"},
      {bytes_of({1, 1, ' ', 0, 0}), "rpc server: request metadata key empty or not printable ASCII"},
      {bytes_of({1, 3, 'a', 'b'}), "rpc server: request metadata entry exceeds its block"},
      {bytes_of({1, 1, 'a', 5, 0, 'x'}), "rpc server: request metadata value exceeds its block"},
  };
  std::uint64_t seq = 1;
  for (const auto& [block, message] : bad) {
    peer.send(request_with_block(seq, "Kv.Count", block, static_cast<std::uint32_t>(block.size())));
    const auto reply = peer.read_frame();
    REQUIRE(reply);
    CHECK(reply->header.seq == seq);
    CHECK(reply->header.status == static_cast<std::uint8_t>(geerpc::errc::bad_request));
    CHECK(reply->text == message);
    ++seq;
  }
  // A well-formed block goes through, and the handler reads it.
  peer.send(request_with_block(seq, "Kv.Get", bytes_of({1,   13,  'a', 'u', 't', 'h', 'o', 'r', 'i', 'z', 'a',
                                                        't', 'i', 'o', 'n', 2,   0,   'o', 'k', 1,   'k'}),
                               19));  // the block's 19 bytes, then the argument: the string "k"
  const auto good = peer.read_frame();
  REQUIRE(good);
  CHECK(good->header.status == 0);
  CHECK(kv.runs == 1);
  {
    std::lock_guard lock(kv.mutex);
    CHECK(kv.calls.at(0).authorization == "ok");
  }
  // A size field claiming more than the frame holds breaks the framing: the server hangs up.
  peer.send(request_with_block(seq + 1, "Kv.Count", bytes_of({1}), 2));
  CHECK(peer.closed_by_peer());
  CHECK(kv.runs == 1);
}

}  // namespace context_test
