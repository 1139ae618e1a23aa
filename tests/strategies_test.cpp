// The threaded client's two strategies (tuning/none.hpp): how requests are sent (client_send) and
// how a reply is awaited (client_wait). Their heuristics' decisions are driven here by a fake
// clock (a runtime's manual clock, or a clock handed to the function), never by this machine's
// timing; and tuning::none's strategies are shown to run none of them.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <thread>
#include <type_traits>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

using namespace std::chrono_literals;

namespace strategies_test {

// A client's end of a socket pair with the writer and request batching of a threaded client on a
// runtime with a manual clock; the other end counts the bytes that left.
struct batching_rig {
  std::shared_ptr<geerpc::runtime> rt =
      std::make_shared<geerpc::runtime>(geerpc::runtime_options{.manual_clock = true});
  int peer = -1;
  geerpc::net::stream stream;
  std::optional<geerpc::net::frame_writer> writer;
  std::optional<geerpc::detail::request_batching> batching;
  const std::vector<std::byte> frame = std::vector<std::byte>(100, std::byte{7});

  batching_rig() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) throw std::runtime_error("socketpair");
    stream = geerpc::net::stream(geerpc::net::unique_fd(fds[0]));
    peer = fds[1];
    writer.emplace(stream, std::size_t{1} << 20, nullptr, nullptr, nullptr, &rt->chunk_pool());
    batching.emplace(
        *writer, rt->scheduler(), true, [](void*) {}, nullptr);
  }
  ~batching_rig() {
    batching.reset();  // its watchdog first
    ::close(peer);
  }

  // Bytes that reached the peer since the last look.
  std::size_t arrived() const {
    std::byte buffer[4096];
    std::size_t total = 0;
    for (long got; (got = ::recv(peer, buffer, sizeof buffer, MSG_DONTWAIT)) > 0;)
      total += static_cast<std::size_t>(got);
    return total;
  }
  bool holds() const { return writer->holds_unsent(); }
};

// tuning::none's two client strategies.
using none_send = geerpc::tuning::none::client_send;
using none_wait = geerpc::tuning::none::client_wait;

}  // namespace strategies_test

TEST_CASE(
    "request batching: the last caller due sends what is held as it returns, unless it keeps coming "
    "straight back",
    "[strategies][batching]") {
  strategies_test::batching_rig rig;
  auto& batching = *rig.batching;
  using geerpc::detail::due_senders;
  auto t = rig.rt->now();
  // One round of this caller: it begins a call (at t), its call completes, another caller's
  // request is held meanwhile, and it returns `gap` after it began. Returns whether the held
  // request went out as it returned.
  const auto round = [&](std::chrono::microseconds gap) {
    batching.caller_may_hold(t);  // notes how quickly this caller came back
    batching.arrive();            // its call completes: due until it returns
    REQUIRE(batching.send_request(rig.frame, true) == geerpc::net::frame_writer::status::done);
    REQUIRE(rig.holds());  // held while this caller is due
    batching.caller_returns(t + 1us);
    t += gap;
    return !rig.holds();
  };
  // The first call on this thread is not back from this client: the streak starts at the second.
  // Until a streak of quick_streak quick returns, each return sends the lot.
  for (unsigned i = 0; i <= due_senders::quick_streak - 1; ++i) {
    INFO("round " << i);
    CHECK(round(5us));
    CHECK(rig.arrived() == rig.frame.size());
  }
  // Its quick_streak-th quick return in a row: it keeps the lot for its next request.
  CHECK_FALSE(round(5us));
  CHECK(rig.arrived() == 0);
  // Its next request takes the lot along, in one send, though it comes back slowly.
  t += due_senders::quick_return;
  CHECK(batching.caller_may_hold(t));
  CHECK(batching.send_request(rig.frame, true) == geerpc::net::frame_writer::status::done);
  CHECK_FALSE(rig.holds());
  CHECK(rig.arrived() == 2 * rig.frame.size());
  // That slow return (more than quick_return after its return) ended the streak: the next return
  // sends the lot again.
  batching.arrive();
  batching.caller_returns(t + 1us);
  t += 5us;
  CHECK(round(5us));
  CHECK(rig.arrived() == rig.frame.size());
}

TEST_CASE("request batching: a request held by a reader that never leaves goes out at the watchdog's second look",
          "[strategies][batching]") {
  strategies_test::batching_rig rig;
  auto& batching = *rig.batching;
  using geerpc::detail::due_senders;
  batching.arrive();  // a reader handing out replies
  REQUIRE(batching.send_request(rig.frame, true) == geerpc::net::frame_writer::status::done);
  REQUIRE(rig.holds());
  rig.rt->advance(due_senders::max_hold - 1us);  // the first look is not due yet
  CHECK(rig.holds());
  rig.rt->advance(1us);  // the first look: held since the request, but not for a whole period
  CHECK(rig.holds());
  CHECK(rig.arrived() == 0);
  rig.rt->advance(due_senders::max_hold);  // the second look: held across a whole period
  CHECK_FALSE(rig.holds());
  CHECK(rig.arrived() == rig.frame.size());
  batching.reader_leaves();  // nothing left to send
  CHECK(rig.arrived() == 0);
}

TEST_CASE("request batching: a request sent while nobody is due goes out at once", "[strategies][batching]") {
  strategies_test::batching_rig rig;
  // A caller that has not returned from this client yet may not hold its request.
  CHECK_FALSE(rig.batching->caller_may_hold(rig.rt->now()));
  CHECK(rig.batching->send_request(rig.frame, true) == geerpc::net::frame_writer::status::done);
  CHECK_FALSE(rig.holds());
  CHECK(rig.arrived() == rig.frame.size());
}

TEST_CASE("the spin's decision: a lone waiter spins for its budget by the clock it is given", "[strategies][spin]") {
  std::atomic<int> waiters{0};
  auto t = std::chrono::steady_clock::time_point{};
  const auto now = [&] { return t; };
  int polls = 0;
  // Each poll takes 10 µs of the fake clock.
  const auto nothing_yet = [&] {
    ++polls;
    t += 10us;
    return false;
  };
  {
    const geerpc::detail::reply_wait lone(waiters, 50us, true);
    CHECK_FALSE(lone.spin_until(nothing_yet, now));
    CHECK(polls == 6);  // polls at 0, 10, ... 40 µs; at 50 µs the budget is spent, and one last poll
    polls = 0;
    CHECK(lone.spin_until([&] { return ++polls == 3; }, now));
    CHECK(polls == 3);
    polls = 0;
    const geerpc::detail::reply_wait other(waiters, 50us, true);  // a second waiter: nobody spins
    CHECK_FALSE(lone.spin_until(nothing_yet, now));
    CHECK(polls == 1);
  }
  polls = 0;
  const geerpc::detail::reply_wait one_cpu(waiters, 50us, false);
  CHECK_FALSE(one_cpu.spin_until(nothing_yet, now));
  CHECK(polls == 1);
  polls = 0;
  const geerpc::detail::reply_wait no_budget(waiters, 0us, false);
  CHECK_FALSE(no_budget.spin_until(nothing_yet, now));
  CHECK(polls == 1);
}

TEST_CASE(
    "own reply: a watching caller sleeps in recv() under the receive timeout, then polls the last stretch, "
    "then expires, by the clock it is given",
    "[strategies][own_reply]") {
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  geerpc::net::stream stream{geerpc::net::unique_fd(fds[0])};
  const char byte = 1;
  REQUIRE(::send(fds[1], &byte, 1, 0) == 1);  // readable: the last stretch's poll returns at once
  std::atomic<int> waiters{0};
  const geerpc::detail::reply_wait no_spin(waiters, 0us, true);
  geerpc::detail::receive_timeout timeout;
  auto t = std::chrono::steady_clock::now();
  const auto deadline = t + 100ms;
  std::vector<bool> reads;  // each read_once: whether it was let wait for data
  int expired = 0;
  const bool open = geerpc::detail::read_own_reply(
      stream, deadline, no_spin, timeout, [] { return false; },
      [&](bool wait_for_data) {
        reads.push_back(wait_for_data);
        t += 40ms;  // each read takes 40 ms of the fake clock
        return true;
      },
      [&] { ++expired; }, [&] { return t; });
  CHECK(open);
  // 100 ms left: recv under a 32 ms timeout; 60 ms left: again; 20 ms left: within the margin, so
  // poll (the socket is readable) and read without waiting; then past the deadline: expired.
  CHECK(reads == std::vector<bool>{true, true, false});
  CHECK(expired == 1);
  CHECK(timeout.current() == geerpc::detail::receive_timeout::long_step);
  ::close(fds[1]);
}

TEST_CASE("own reply: the watch goes from caller to receiving thread and back, one watcher while calls are pending",
          "[strategies][own_reply]") {
  geerpc::detail::socket_watch watch;
  bool wake = false;
  CHECK(watch.call_added(true, wake));  // a lone synchronous caller reads its own reply
  CHECK_FALSE(wake);
  CHECK_FALSE(watch.call_added(false, wake));  // an async call meanwhile: the caller still watches
  CHECK_FALSE(wake);
  CHECK(watch.caller_done(true));  // it leaves with a call pending: the receiving thread is woken
  CHECK(watch.receiver_watches());
  CHECK_FALSE(watch.call_added(true, wake));  // a caller now finds the receiving thread watching
  watch.receiver_read(true);
  CHECK(watch.receiver_watches());
  watch.receiver_read(false);  // nothing pending: the socket is left to the next caller
  CHECK_FALSE(watch.receiver_watches());
  CHECK(watch.call_added(true, wake));
  CHECK_FALSE(watch.caller_done(false));  // nothing pending: nobody watches
  CHECK_FALSE(watch.receiver_watches());
}

// tuning::none's strategies are types with nothing in them to decide with: no batching state, no
// socket watch, no count of waiters, no spin. What the engine compiles with them is the core.
static_assert(sizeof(strategies_test::none_send) == sizeof(void*),
              "tuning::none's client_send holds only the writer it sends with");
static_assert(std::is_empty_v<strategies_test::none_wait>, "tuning::none's client_wait has no state");
static_assert(std::is_empty_v<strategies_test::none_wait::waiter>, "tuning::none's waiter counts no waiting callers");
static_assert(std::is_empty_v<strategies_test::none_send::reader_turn>, "tuning::none's reader marks nothing");
static_assert(!strategies_test::none_wait::callers_read, "under tuning::none the receiving thread reads every reply");
static_assert(!strategies_test::none_wait::waiter::may_spin(), "under tuning::none a caller never spins");
static_assert(!std::is_empty_v<geerpc::tuning::automatic::client_wait>);

TEMPLATE_TEST_CASE("a waiting caller joins its runtime's count of waiting callers only when its tuning may spin",
                   "[strategies][spin]", test::plain_threaded, geerpc::threaded, test::plain_blocking,
                   geerpc::blocking) {
  auto rt = std::make_shared<geerpc::runtime>();
  test::arith_server<TestType> s({.runtime = rt});
  auto client = geerpc::dial<TestType>(s.address, {.runtime = rt});
  std::jthread caller([&] { CHECK(client.template call<int>("Arith.Late", test::Args{2, 0}) == 2000); });
  REQUIRE(s.arith.started.wait_for_at_least(1));  // the caller's request is in; it waits for its reply
  constexpr bool counts = std::is_same_v<typename TestType::tuning_type, geerpc::tuning::automatic>;
  // The count is the caller's own: it joins before it sends, so it is in by the time the handler runs.
  CHECK(rt->waiting_callers().load() == (counts ? 1 : 0));
  s.arith.release.set();
  caller.join();
  CHECK(rt->waiting_callers().load() == 0);
}
