// Peers that stop reading their replies: what they cost the server while they stall (no more than
// max_pending_output), and the write timeout that drops them, by the server's runtime clock. A
// normal client on another connection is served meanwhile.
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace stalled_reader_test {

using namespace std::chrono_literals;
using test::Args;

namespace {

geerpc::server_options stall_limits() {
  geerpc::server_options opts;
  opts.limits.max_frame_size = 64u << 10;
  opts.limits.max_inflight_per_connection = 4;
  opts.timeouts.handshake = 200ms;
  opts.timeouts.frame = 200ms;
  opts.limits.max_pending_output = 1u << 20;
  return opts;
}

}  // namespace

// ------------------------------------------------------------------------ memory held for output

namespace {

// Sends all of `bytes` without ever reading; false once the server has dropped the connection
// (or the socket stays full for `patience`).
bool send_unread(test::raw_peer& peer, std::span<const std::byte> bytes, std::chrono::milliseconds patience = 2s) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    pollfd p{peer.fd(), POLLOUT, 0};
    if (::poll(&p, 1, static_cast<int>(patience.count())) <= 0 || (p.revents & (POLLERR | POLLHUP))) return false;
    const ssize_t n = ::send(peer.fd(), bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno != EAGAIN) return false;
    if (n > 0) sent += static_cast<std::size_t>(n);
  }
  return true;
}

std::vector<std::byte> echo_request(std::uint64_t seq, std::size_t size) {
  return test::request_frame(seq, "Arith.Echo", std::string(size, 'x'));
}

// A peer past the handshake that takes little into its receive buffer, so that replies pile up in
// the server soon. The buffer is set before connecting: shrinking it later makes the kernel drop
// what the server was already allowed to send, and retransmissions then crawl.
std::unique_ptr<test::raw_peer> small_window_peer(const std::string& address) {
  std::string why;
  const auto endpoint = geerpc::net::resolve(address, why);
  REQUIRE(endpoint);
  const int fd = ::socket(endpoint->address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  auto peer = std::make_unique<test::raw_peer>(test::raw_peer::accepted, fd);
  REQUIRE(::connect(fd, reinterpret_cast<const sockaddr*>(&endpoint->address), endpoint->size) == 0);
  peer->send_hello();
  REQUIRE(peer->read_hello_reply());
  return peer;
}

}  // namespace

TEMPLATE_TEST_CASE("hostile: a peer that never reads holds at most max_pending_output, counted by capacity",
                   "[hostile][limits]", GEERPC_TRANSPORTS) {
  auto opts = stall_limits();  // max_pending_output = 1 MiB
  opts.timeouts.write = 0s;    // only the output limit drops it here
  test::arith_server<TestType> s(opts);
  auto peer = small_window_peer(s.address);
  // Replies of sizes that do not add up to the limit: buffers grown by doubling would pass it.
  bool dropped = false;
  for (std::uint64_t seq = 1; seq <= 1000 && !dropped; ++seq)
    dropped = !send_unread(*peer, echo_request(seq, 20000 + (seq * 7919) % 12000));
  CHECK(dropped);
  CHECK(s.server.pending_output_peak() > opts.limits.max_pending_output / 2);  // replies did pile up in the server
  CHECK(s.server.pending_output_peak() <= opts.limits.max_pending_output);
  CHECK(test::eventually([&] { return s.server.connection_count() == 0; }));
  CHECK(test::eventually([&] { return s.server.pending_output_bytes() == 0; }));
}

// ------------------------------------------------------------------------------ write timeout

namespace {

// How many replies of `size` bytes overflow what the kernel can hold for a peer that reads nothing
// (the server's send buffer grows up to tcp_wmem's maximum; the small window adds little): the
// rest must wait in the server, for as long as the peer does not read.
std::uint64_t replies_to_stall(std::size_t size) {
  unsigned long low = 0, initial = 0, most = 4ul << 20;
  if (std::FILE* f = std::fopen("/proc/sys/net/ipv4/tcp_wmem", "r")) {
    if (std::fscanf(f, "%lu %lu %lu", &low, &initial, &most) != 3) most = 4ul << 20;
    std::fclose(f);
  }
  return (most + (2ul << 20)) / size + 1;
}

// Sends `count` Echo requests of `size` bytes from `seq` + 1 on, reading nothing.
void send_echoes(test::raw_peer& peer, std::uint64_t& seq, std::uint64_t count, std::size_t size) {
  for (const std::uint64_t last = seq + count; seq < last;) REQUIRE(send_unread(peer, echo_request(++seq, size)));
}

}  // namespace

TEMPLATE_TEST_CASE("hostile: a peer that stops reading is dropped after write_timeout, others are served",
                   "[hostile][limits]", GEERPC_TRANSPORTS) {
  auto opts = stall_limits();
  opts.limits.max_pending_output = 64u << 20;  // never reached here: the timeout drops the peer
  opts.limits.max_inflight_per_connection = 1024;
  opts.timeouts.write = 200ms;
  test::arith_server<TestType> s(opts);
  auto peer = small_window_peer(s.address);
  // More replies than the kernel holds for it, then silence.
  std::uint64_t seq = 0;
  send_echoes(*peer, seq, replies_to_stall(60000), 60000);
  auto client = geerpc::dial<TestType>(s.address, {.timeouts = {.connect = 2s}});
  CHECK(client.template call<int>(geerpc::with_timeout(2s), "Arith.Sum", Args{20, 22}) == 42);
  // The peer's connection goes (the well-behaved client's stays), and its replies with it.
  CHECK(test::eventually([&] { return s.server.connection_count() == 1; }));
  CHECK(test::eventually([&] { return s.server.pending_output_bytes() == 0; }));
  CHECK(peer->closed_by_peer());  // it reads what it was sent, then the end
  CHECK(client.template call<int>(geerpc::with_timeout(2s), "Arith.Sum", Args{1, 2}) == 3);
}

TEMPLATE_TEST_CASE("hostile: a stalled peer that reads again keeps its connection, and stalling again is dropped",
                   "[hostile][limits]", GEERPC_TRANSPORTS) {
  auto opts = stall_limits();
  opts.limits.max_pending_output = 64u << 20;
  opts.timeouts.write = 1s;  // long enough for this test to read in time on a loaded machine
  opts.limits.max_inflight_per_connection = 1024;
  test::arith_server<TestType> s(opts);
  auto peer = small_window_peer(s.address);
  std::uint64_t seq = 0;
  const std::uint64_t count = replies_to_stall(60000);
  send_echoes(*peer, seq, count, 60000);       // replies wait in the server
  for (std::uint64_t i = 0; i < count; ++i) {  // until the peer reads every one: the queue drains
    auto answer = peer->read_frame();
    REQUIRE(answer);
    CHECK(answer->header.status == 0);
  }
  peer->send(test::request_frame(++seq, "Arith.Sum", Args{2, 3}));
  auto fine = peer->read_frame();
  REQUIRE(fine);
  CHECK(test::decode_body<int>(fine->body) == 5);
  send_echoes(*peer, seq, count, 60000);  // and now it never reads again
  CHECK(test::eventually([&] { return s.server.connection_count() == 0; }));
  CHECK(peer->closed_by_peer());
}

TEMPLATE_TEST_CASE("hostile: a write_timeout of nanoseconds::max() means no limit, not an overflow",
                   "[hostile][limits]", GEERPC_TRANSPORTS) {
  auto opts = stall_limits();
  opts.limits.max_pending_output = 64u << 20;
  opts.limits.max_inflight_per_connection = 1024;
  opts.timeouts.write = std::chrono::nanoseconds::max();
  test::arith_server<TestType> s(opts);
  auto peer = small_window_peer(s.address);
  std::uint64_t seq = 0;
  send_echoes(*peer, seq, replies_to_stall(60000), 60000);  // the write timer is armed, at the end of time
  auto client = geerpc::dial<TestType>(s.address, {.timeouts = {.connect = 2s}});
  CHECK(client.template call<int>(geerpc::with_timeout(2s), "Arith.Sum", Args{20, 22}) == 42);
  CHECK(test::eventually([&] { return s.server.pending_output_bytes() > (1u << 20); }));  // still waiting
  CHECK(s.server.connection_count() == 2);
}

TEMPLATE_TEST_CASE("a stalled peer's write timeout runs by the server's runtime clock", "[hostile][limits][runtime]",
                   GEERPC_TRANSPORTS) {
  auto rt = std::make_shared<geerpc::runtime>(geerpc::runtime_options{.manual_clock = true});
  auto opts = stall_limits();
  opts.limits.max_pending_output = 64u << 20;
  opts.limits.max_inflight_per_connection = 1024;
  opts.timeouts.write = 1h;      // no test waits that long: only the manual clock gets there
  opts.timeouts.handshake = 0s;  // the server's other timers off (0: no limit), so that only the
  opts.timeouts.frame = 0s;      // write timeout can close the peer's connection
  opts.runtime = rt;
  test::arith_server<TestType> s(opts);
  auto peer = small_window_peer(s.address);
  std::uint64_t seq = 0;
  send_echoes(*peer, seq, replies_to_stall(60000), 60000);
  REQUIRE(test::eventually([&] { return s.server.pending_output_bytes() > (1u << 20); }));  // replies wait
  rt->advance(59min);  // the stall is not yet an hour old by the runtime's clock
  CHECK(s.server.connection_count() == 1);
  // Past the hour (again on each look, should the timer be armed only after the first move).
  CHECK(test::eventually([&] {
    rt->advance(2h);
    return s.server.connection_count() == 0;
  }));
  CHECK(peer->closed_by_peer());
}

}  // namespace stalled_reader_test
