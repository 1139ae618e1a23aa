// A threaded client holds a new request while callers whose calls have just completed are still on
// their way back, so that callers woken by one batch of replies send their next requests together
// (detail/due_senders.hpp). Checked against a hand-written server that answers a round of
// requests in one send and counts the TCP segments in which the next round arrives.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

using namespace std::chrono_literals;
using test::Args;

namespace {

// Data segments a socket has received: the kernel's tcpi_data_segs_in (Linux 4.6 and later),
// which glibc's <netinet/tcp.h> does not declare (and the kernel's <linux/tcp.h> cannot be
// included beside it). Read from the kernel's struct tcp_info, whose layout only ever grows.
std::uint32_t data_segments_in(int fd) {
  constexpr std::size_t offset = 152;  // of tcpi_data_segs_in in the kernel's struct tcp_info
  std::array<unsigned char, 256> info{};
  socklen_t size = info.size();
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, info.data(), &size) != 0 || size < offset + sizeof(std::uint32_t))
    throw std::runtime_error("getsockopt(TCP_INFO) gave no segment counts");
  std::uint32_t segments = 0;
  std::memcpy(&segments, info.data() + offset, sizeof segments);
  return segments;
}

// The server's end of one client connection, its handshake done.
struct fake_server {
  test::listener listener;
  std::optional<test::raw_peer> peer;

  // Dials `listener` with a threaded client while this thread plays the server's side of the
  // handshake.
  geerpc::client connect() {
    std::jthread greeter([&] {
      peer.emplace(test::raw_peer::accepted, ::accept(listener.fd(), nullptr, nullptr));
      if (!peer->read(geerpc::wire::hello_size)) return;
      std::vector<std::byte> reply;
      geerpc::wire::encode_hello_reply({true, geerpc::wire::default_max_frame_size, {}}, reply);
      peer->send(reply);
    });
    return geerpc::dial(listener.address(), {.connect_timeout = 5s});
  }

  // Reads `count` Sum requests and returns their replies, to be sent together. Empty if the
  // requests did not come.
  std::vector<std::byte> read_requests(int count) {
    std::vector<std::byte> replies;
    for (int i = 0; i < count; ++i) {
      auto frame = peer->read_frame();
      if (!frame) return {};
      const auto args = test::decode_body<Args>(frame->body);
      const auto reply = test::response_frame(frame->header.seq, args.num1 + args.num2);
      replies.insert(replies.end(), reply.begin(), reply.end());
    }
    return replies;
  }

  // Reads `count` Sum requests and answers them all with one send. Returns false if they did not
  // come.
  bool answer_together(int count) {
    const auto replies = read_requests(count);
    if (replies.empty()) return false;
    peer->send(replies);
    return true;
  }

  // Data segments received on the connection so far: with TCP_NODELAY on the client, one per send.
  std::uint32_t segments_in() const { return data_segments_in(peer->fd()); }

  // Sends `replies` and sleeps until `bytes` have come back, without waking before (SO_RCVLOWAT):
  // a wake-up would take the CPU from a client thread in the middle of its send, and other
  // threads' requests would queue behind that send. Returns false if they did not come.
  bool send_and_sleep_until(const std::vector<std::byte>& replies, int bytes) {
    set_low_water(bytes);
    peer->send(replies);
    pollfd ready{peer->fd(), POLLIN, 0};
    const bool came = ::poll(&ready, 1, 5000) == 1;
    set_low_water(1);
    return came;
  }
  void set_low_water(int bytes) {
    if (::setsockopt(peer->fd(), SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof bytes) != 0)
      throw std::runtime_error("setsockopt(SO_RCVLOWAT) failed");
  }
};

// Keeps this thread, and the threads it starts meanwhile, on one CPU: there the woken callers run
// one after another, as they would on a busy machine, and the count of segments says what the
// client did rather than how the scheduler spread its threads over the CPUs.
class on_one_cpu {
 public:
  on_one_cpu() {
    if (::sched_getaffinity(0, sizeof before_, &before_) != 0) throw std::runtime_error("sched_getaffinity failed");
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &before_)) {
        CPU_SET(cpu, &one);
        break;
      }
    if (::sched_setaffinity(0, sizeof one, &one) != 0) throw std::runtime_error("sched_setaffinity failed");
  }
  ~on_one_cpu() { ::sched_setaffinity(0, sizeof before_, &before_); }
  on_one_cpu(const on_one_cpu&) = delete;
  on_one_cpu& operator=(const on_one_cpu&) = delete;

 private:
  cpu_set_t before_;
};

}  // namespace

TEST_CASE("callers woken by one batch of replies send their next requests together", "[batching]") {
  const on_one_cpu pinned;  // before the client exists: its receiving thread inherits the CPU
  fake_server server;
  auto client = server.connect();
  constexpr int callers = 16;
  constexpr int rounds = 4;  // the first is not counted: its requests come as the threads start
  std::atomic<int> right{0};
  std::vector<std::jthread> threads;
  for (int i = 0; i < callers; ++i)
    threads.emplace_back([&, i] {
      for (int round = 0; round < rounds; ++round)
        if (auto sum = client.try_call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{i, round});
            sum && *sum == i + round)
          ++right;
    });
  auto replies = server.read_requests(callers);
  const int round_bytes = static_cast<int>(test::request_frame(0, "Arith.Sum", Args{}).size()) * callers;
  std::vector<std::uint32_t> segments;  // of each counted round
  for (int round = 1; round < rounds; ++round) {
    REQUIRE_FALSE(replies.empty());
    const std::uint32_t before = server.segments_in();           // this round's requests are all in; no next one can be
    REQUIRE(server.send_and_sleep_until(replies, round_bytes));  // one batch wakes every caller
    replies = server.read_requests(callers);
    segments.push_back(server.segments_in() - before);
  }
  REQUIRE_FALSE(replies.empty());
  server.peer->send(replies);
  for (auto& thread : threads) thread.join();
  CHECK(right == rounds * callers);
  // Without holding, one segment per request: sixteen, at least in the first round (later ones
  // may see the kernel or a preempted sender merge some). With it, the last caller due sends the
  // fifteen held for it as it returns, then its own: two, or one or two more when a busy machine
  // delays a caller past the others or makes a round outlast the watchdog's period. Never one:
  // that would mean the held requests waited for the last caller's next request instead of
  // going out as it returned.
  INFO("segments per round of 16 requests: " << segments[0] << ", " << segments[1] << ", " << segments[2]);
  CHECK(segments[0] <= 4);
  CHECK(*std::min_element(segments.begin(), segments.end()) >= 2);
}

TEST_CASE("a held request goes out when the last caller due returns without calling again", "[batching]") {
  const on_one_cpu pinned;  // so that the repeated call surely comes while the other caller is due
  fake_server server;
  auto client = server.connect();
  geerpc::result<int> again = 0;
  std::jthread twice([&] {
    if (auto first = client.try_call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{1, 1}); first && *first == 2)
      again = client.try_call<int>(geerpc::with_timeout(2s), "Arith.Sum", Args{2, 2});
  });
  std::jthread once([&] { (void)client.try_call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{3, 3}); });
  REQUIRE(server.answer_together(2));
  // The repeated call's request is held while the other caller is due; that caller returns and
  // makes no call, so its return must send the request (or, 1 to 2 ms later, the watchdog).
  REQUIRE(server.answer_together(1));
  twice.join();
  REQUIRE(again.has_value());
  CHECK(*again == 4);
}

// The counting alone, step by step: who sends what is held.
TEST_CASE("due_senders: the last thread due to leave, or a holder that finds none due, sends", "[batching]") {
  geerpc::detail::due_senders due;
  CHECK_FALSE(due.any());
  due.arrive();
  CHECK(due.any());
  CHECK_FALSE(due.leave());  // the last one left, but nothing was held
  CHECK_FALSE(due.any());
  CHECK(due.held());  // held after everyone left: the holder itself must send
  CHECK(due.holding());
  due.sent();
  CHECK_FALSE(due.holding());

  due.arrive();
  due.arrive();
  CHECK_FALSE(due.held());  // two due: they send
  CHECK(due.holding());
  CHECK_FALSE(due.leave());  // one is still due
  CHECK(due.leave());        // the last one owes the send
  CHECK(due.holding());      // until it is done
  due.arrive();              // meanwhile another thread became due:
  due.sent();
  CHECK(due.holding());  // the hold goes on, and its last one sends again
  CHECK(due.leave());
  due.sent();
  CHECK_FALSE(due.holding());
  CHECK_FALSE(due.any());
}

// The watchdog sends a request held across two of its looks, unless a hold ended in between.
TEST_CASE("due_senders: a hold that outlasts a whole look period is stale", "[batching]") {
  geerpc::detail::due_senders due;
  geerpc::detail::due_senders::look seen;
  CHECK_FALSE(due.held_since_last_look(seen));  // nothing held
  due.arrive();
  CHECK_FALSE(due.held());
  CHECK_FALSE(due.held_since_last_look(seen));  // held since the last look, perhaps just now
  CHECK(due.held_since_last_look(seen));        // still the same hold a period later
  CHECK(due.leave());                           // the last one due sends it at last
  CHECK(due.held_since_last_look(seen));        // as long as that send is not done, it is owed
  due.sent();
  CHECK_FALSE(due.held_since_last_look(seen));

  due.arrive();
  CHECK_FALSE(due.held());
  CHECK_FALSE(due.held_since_last_look(seen));
  CHECK(due.leave());  // this hold ends between two looks,
  due.sent();
  due.arrive();
  CHECK_FALSE(due.held());                      // and a new one begins:
  CHECK_FALSE(due.held_since_last_look(seen));  // not stale yet
  CHECK(due.held_since_last_look(seen));
  CHECK(due.leave());
  due.sent();
}
