// A threaded client holds a new request while callers whose calls have just completed are still on
// their way back, so that callers woken by one batch of replies send their next requests together
// (tuning/request_batching.hpp). Checked against a hand-written server that answers a round of
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
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace batched_requests_test {

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
    return geerpc::dial(listener.address(), {.timeouts = {.connect = 5s}});
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

// Puts the calling thread at SCHED_IDLE: it then takes the CPU only once every other thread there
// waits. Returns false if the system refused.
bool run_only_when_idle() {
  sched_param none{};
  return ::sched_setscheduler(0, SCHED_IDLE, &none) == 0;
}

// Whether this system lets a thread do that (a container's seccomp policy may not).
bool idle_priority_allowed() {
  bool allowed = false;
  std::thread([&] { allowed = run_only_when_idle(); }).join();
  return allowed;
}

// Plays the server for `callers` threads that each make `rounds` calls in a row: answers each round
// of requests with one send and returns the TCP segments in which each next round arrived.
std::vector<std::uint32_t> segments_per_round(int callers, int rounds) {
  const on_one_cpu pinned;  // before the client exists: its receiving thread inherits the CPU
  fake_server server;
  auto client = server.connect();
  std::atomic<int> right{0};
  std::vector<std::uint32_t> segments;
  bool served = false;
  std::vector<std::jthread> threads;
  for (int i = 0; i < callers; ++i)
    threads.emplace_back([&, i] {
      for (int round = 0; round < rounds; ++round)
        if (auto sum = client.try_call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{i, round});
            sum && *sum == i + round)
          ++right;
    });
  // The server's side runs at SCHED_IDLE, so that it takes the CPU only once every client thread
  // waits: woken by a round's last send, a server of normal priority would take the CPU from the
  // sender in the middle of its send, and the next round's requests would queue behind that send.
  threads.emplace_back([&] {
    if (!run_only_when_idle()) return;
    try {
      auto replies = server.read_requests(callers);  // the first round comes as the threads start
      const int round_bytes = static_cast<int>(test::request_frame(0, "Arith.Sum", Args{}).size()) * callers;
      for (int round = 1; round < rounds; ++round) {
        if (replies.empty()) return;
        const std::uint32_t before = server.segments_in();  // this round's requests are all in; no next one can be
        if (!server.send_and_sleep_until(replies, round_bytes)) return;  // one batch wakes every caller
        replies = server.read_requests(callers);
        segments.push_back(server.segments_in() - before);
      }
      if (replies.empty()) return;
      server.peer->send(replies);
      served = true;
    } catch (const std::exception&) {  // reported below, on the test's thread
    }
  });
  for (auto& thread : threads) thread.join();
  REQUIRE(served);
  CHECK(right == rounds * callers);
  return segments;
}

}  // namespace

TEST_CASE("callers woken by one batch of replies send their next requests together", "[batching]") {
  // Rounds 2 to 5 come before any caller has a streak of quick returns (due_senders::quick_streak
  // is 4); from round 6 on, the last caller due may take the held requests along with its own.
  static_assert(geerpc::detail::due_senders::quick_streak == 4);
  constexpr int streak_rounds = 4;
  if (!idle_priority_allowed()) {
    WARN("not checked: this system refuses SCHED_IDLE, which the test's server needs");
    return;
  }
  const auto segments = segments_per_round(16, 12);
  std::string seen;
  for (const auto count : segments) seen += std::to_string(count) + " ";
  INFO("segments per round of 16 requests, from the second round: " << seen);
  // Without holding, one segment per request: sixteen, at least in the first counted round (later
  // ones may see the kernel or a preempted sender merge some). With it, before the streaks, the
  // last caller due sends the fifteen held for it as it returns, then its own: two, or one or two
  // more when a busy machine delays a caller past the others or makes a round outlast the
  // watchdog's period; never one, which would mean that a caller not yet known to come straight
  // back kept the held requests waiting for its next call.
  // Under TSan every wake-up is slow enough for a round to outlast the watchdog's period: seen in
  // CI's TSan pass (15 segments in the first counted round), so there it is only reported.
#if defined(GEERPC_TEST_TSAN)
  if (segments[0] > 4) WARN("under TSan the first counted round went out in " << segments[0] << " segments");
#else
  CHECK(segments[0] <= 4);
#endif
  CHECK(*std::min_element(segments.begin(), segments.begin() + streak_rounds) >= 2);
  // Once the callers have come straight back four times, a round goes out in one segment, unless a
  // caller was kept off the CPU between its return and its next call in every later round: which
  // TSan's slowdown can do on one CPU (seen once in CI's pinned TSan pass), so there it is only
  // reported. This is the heuristic's effect; the bench's W5 measures what it buys.
#if defined(GEERPC_TEST_TSAN)
  if (*std::min_element(segments.begin() + streak_rounds, segments.end()) != 1)
    WARN("under TSan no later round went out in one segment");
#else
  CHECK(*std::min_element(segments.begin() + streak_rounds, segments.end()) == 1);
#endif
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

TEST_CASE("a held request goes out when a caller that kept coming straight back stops calling", "[batching]") {
  if (!idle_priority_allowed()) {
    WARN("not checked: this system refuses SCHED_IDLE, which the test's server needs");
    return;
  }
  const on_one_cpu pinned;  // so that one caller's next call surely comes while the other is due
  fake_server server;
  auto client = server.connect();
  constexpr int rounds = 8;  // past due_senders::quick_streak: both callers keep coming straight back
  std::atomic<int> right{0};
  const auto caller = [&](int id, int calls) {
    for (int round = 0; round < calls; ++round)
      if (auto sum = client.try_call<int>(geerpc::with_timeout(2s), "Arith.Sum", Args{id, round});
          sum && *sum == id + round)
        ++right;
  };
  bool served = false;
  {
    std::jthread stays([&] { caller(0, rounds + 1); });
    std::jthread stops([&] { caller(1, rounds); });
    // Each round is answered in one send, `stays`'s reply first, by a server that runs only while
    // both callers wait: `stays` is woken first and calls again while `stops` is still due. In the
    // last round `stops` is then the last one due, with a streak: it keeps the held request for a
    // next call it never makes, and only the watchdog can send it.
    std::jthread server_side([&] {
      if (!run_only_when_idle()) return;
      try {
        for (int round = 0; round < rounds; ++round) {
          std::vector<std::byte> replies[2];
          for (int i = 0; i < 2; ++i) {
            auto frame = server.peer->read_frame();
            if (!frame) return;
            const auto args = test::decode_body<Args>(frame->body);
            replies[args.num1 == 0 ? 0 : 1] = test::response_frame(frame->header.seq, args.num1 + args.num2);
          }
          replies[0].insert(replies[0].end(), replies[1].begin(), replies[1].end());
          server.peer->send(replies[0]);
        }
        served = server.answer_together(1);
      } catch (const std::exception&) {  // reported below, on the test's thread
      }
    });
  }
  CHECK(served);
  CHECK(right == 2 * rounds + 1);
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

  due.arrive();
  CHECK_FALSE(due.held());
  CHECK(due.leave());      // the last one, a caller expected back, keeps the hold for its next request:
  CHECK_FALSE(due.any());  // so that request is sent at once, and takes the held one along
  CHECK(due.holding());
  due.sent();
  CHECK_FALSE(due.holding());
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

}  // namespace batched_requests_test
