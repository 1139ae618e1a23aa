// A server that misbehaves toward its client, played with raw bytes: a duplicate of a reply, junk
// after a good reply, a flood of replies for calls nobody made. A client takes exactly its own
// reply and leaves the bytes after it for what comes next; a call that got its reply succeeds,
// whatever follows it; and a call keeps its deadline and stop token however much it has to drop.
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace hostile_server_test {

using namespace std::chrono_literals;
using test::Args;

namespace {

using steady = std::chrono::steady_clock;

// A client connected to a raw peer that plays its server.
template <class Transport>
struct played_server {
  test::listener listener;
  std::unique_ptr<test::raw_peer> peer;
  geerpc::basic_client<Transport> client;

  played_server() {
    std::jthread accepting([&] { peer = test::accept_greeted(listener); });
    client = geerpc::dial<Transport>(listener.address(), {.timeouts = {.connect = 5s}});
    accepting.join();
    REQUIRE(peer);
  }

  // Reads the next request and returns its seq; 0 when none comes.
  std::uint64_t next_request_seq() {
    auto request = peer->read_frame();
    return request ? request->header.seq : 0;
  }
};

std::vector<std::byte> joined(std::initializer_list<std::vector<std::byte>> parts) {
  std::vector<std::byte> out;
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

// Sends `block` over and over without ever blocking, until `stop` is set or the bound on time or
// volume is reached; `started` is set once the first megabyte is out.
void flood(int fd, const std::vector<std::byte>& block, const std::atomic<bool>& stop, test::event& started,
           std::chrono::milliseconds time_bound = 3s, std::size_t byte_bound = std::size_t{8} << 30) {
  const auto until = steady::now() + time_bound;
  std::size_t sent = 0, at = 0;  // `at`: where in `block` the stream is (sends may be partial)
  bool told = false;
  while (!stop.load() && steady::now() < until && sent < byte_bound) {
    const ssize_t n = ::send(fd, block.data() + at, block.size() - at, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      at = (at + static_cast<std::size_t>(n)) % block.size();
      if (!told && sent >= (1u << 20)) {
        started.set();
        told = true;
      }
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) break;
    pollfd p{fd, POLLOUT, 0};
    ::poll(&p, 1, 10);
  }
  started.set();
}

// 64 KiB of replies for sequence numbers no call of the test uses.
std::vector<std::byte> unknown_replies() {
  std::vector<std::byte> block;
  for (std::uint64_t seq = 1'000'000; block.size() < (64u << 10); ++seq) {
    auto frame = test::response_frame(seq, 7);
    block.insert(block.end(), frame.begin(), frame.end());
  }
  return block;
}

}  // namespace

TEMPLATE_TEST_CASE("a duplicate of a reply in the same segment is neither taken by its call nor by the next",
                   "[hostile][client]", GEERPC_TRANSPORTS) {
  played_server<TestType> s;
  std::jthread server([&] {
    const auto first = s.next_request_seq();
    s.peer->send(joined({test::response_frame(first, 3), test::response_frame(first, 999)}));
    const auto second = s.next_request_seq();
    s.peer->send(test::response_frame(second, 7));
  });
  auto r1 = s.client.template try_call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{1, 2});
  REQUIRE(r1);
  CHECK(*r1 == 3);
  auto r2 = s.client.template try_call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{3, 4});
  REQUIRE(r2);
  CHECK(*r2 == 7);
  CHECK(s.client.is_open());
}

TEMPLATE_TEST_CASE("a stale reply left after a good one is dropped by the next call, in whatever piece it comes",
                   "[hostile][client]", GEERPC_TRANSPORTS) {
  played_server<TestType> s;
  std::jthread server([&] {
    const auto first = s.next_request_seq();
    const auto stale = test::response_frame(first, 999);
    // The good reply and the first half of a duplicate in one segment; the rest with the next reply.
    s.peer->send(joined({test::response_frame(first, 3), std::vector<std::byte>(stale.begin(), stale.begin() + 10)}));
    const auto second = s.next_request_seq();
    s.peer->send(joined({std::vector<std::byte>(stale.begin() + 10, stale.end()), test::response_frame(second, 7)}));
  });
  auto r1 = s.client.template try_call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{1, 2});
  REQUIRE(r1);
  CHECK(*r1 == 3);
  auto r2 = s.client.template try_call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{3, 4});
  REQUIRE(r2);
  CHECK(*r2 == 7);
}

TEMPLATE_TEST_CASE("junk after a good reply: the call succeeds, and the next one finds the connection broken",
                   "[hostile][client]", GEERPC_TRANSPORTS) {
  played_server<TestType> s;
  std::jthread server([&] {
    const auto first = s.next_request_seq();
    // A length prefix past any limit: the stream cannot be trusted after it.
    s.peer->send(joined({test::response_frame(first, 3), std::vector<std::byte>(8, std::byte{0xff})}));
  });
  auto r1 = s.client.template try_call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{1, 2});
  REQUIRE(r1);  // it got its reply: a caller must never retry a call that succeeded
  CHECK(*r1 == 3);
  server.join();
  auto r2 = s.client.template try_call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{3, 4});
  CHECK(r2.code() == geerpc::errc::connection_closed);
  CHECK_FALSE(s.client.is_open());
}

TEMPLATE_TEST_CASE("a flood of replies for unknown calls does not hold a call past its deadline",
                   "[hostile][client][timeout]", GEERPC_TRANSPORTS) {
  played_server<TestType> s;
  std::atomic<bool> stop{false};
  test::event flooding;
  const auto block = unknown_replies();
  std::jthread server([&] {
    if (s.next_request_seq() != 0) flood(s.peer->fd(), block, stop, flooding);
    flooding.set();
  });
  const auto start = steady::now();
  auto r = s.client.template try_call<int>(geerpc::with_timeout(300ms), "Arith.Sum", Args{1, 2});
  const auto took = steady::now() - start;
  stop = true;
  CHECK(r.code() == geerpc::errc::deadline_exceeded);
  CHECK(took >= 300ms);
  CHECK(took < 1500ms);  // the flood lasts 3 s: a call held by it would take that long
}

TEMPLATE_TEST_CASE("a flood of replies for unknown calls does not hold a call past its stop request",
                   "[hostile][client][cancel]", GEERPC_TRANSPORTS) {
  played_server<TestType> s;
  std::atomic<bool> stop{false};
  test::event flooding;
  const auto block = unknown_replies();
  std::jthread server([&] {
    if (s.next_request_seq() != 0) flood(s.peer->fd(), block, stop, flooding);
    flooding.set();
  });
  std::stop_source cancel;
  std::atomic<steady::rep> stopped_at{0};
  std::jthread canceller([&] {
    if (!flooding.wait()) return;
    stopped_at = steady::now().time_since_epoch().count();
    cancel.request_stop();
  });
  auto r = s.client.template try_call<int>(geerpc::with_stop_token(cancel.get_token()), "Arith.Sum", Args{1, 2});
  const auto returned = steady::now();
  stop = true;
  CHECK(r.code() == geerpc::errc::canceled);
  REQUIRE(stopped_at.load() != 0);
  // The flood lasts 3 s: a call held by it would return that long after the stop.
  CHECK(returned - steady::time_point(steady::duration(stopped_at.load())) < 1s);
}

}  // namespace hostile_server_test
