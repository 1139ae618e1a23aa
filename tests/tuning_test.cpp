// The tuning seam's pieces, each against a fake or on its own: no TCP, no timing of this machine.
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <type_traits>

#include "catch.hpp"
#include "support.hpp"

namespace tuning_test {

using namespace std::chrono_literals;

TEST_CASE("a spin budget of 0 never spins, whatever the CPUs", "[tuning][spin]") {
  std::atomic<int> waiters{0};  // a runtime's count of waiting callers
  const geerpc::detail::reply_wait waiting(waiters, 0us, true);
  CHECK_FALSE(waiting.may_spin());
  int polls = 0;
  CHECK_FALSE(waiting.spin_until([&] {
    ++polls;
    return false;
  }));
  CHECK(polls == 1);
}

TEST_CASE("a lone waiter with a budget and spare CPUs spins: one told of a single CPU does not", "[tuning][spin]") {
  std::atomic<int> waiters{0};
  {
    const geerpc::detail::reply_wait waiting(waiters, 50us, true);
    CHECK(waiting.may_spin());
  }
  const geerpc::detail::reply_wait one_cpu(waiters, 50us, false);
  CHECK_FALSE(one_cpu.may_spin());
}

TEST_CASE("socket_watch: exactly one thread watches the socket while calls are pending", "[tuning][own_reply]") {
  geerpc::detail::socket_watch watch;
  bool wake = true;
  // Nobody watches: a caller that may read its own reply becomes the watcher; the receiver parks.
  CHECK(watch.call_added(true, wake));
  CHECK_FALSE(wake);
  CHECK_FALSE(watch.receiver_watches());
  // A second call while the caller watches: it neither watches nor wakes the receiver.
  CHECK_FALSE(watch.call_added(true, wake));
  CHECK_FALSE(watch.receiver_watches());
  // The watching caller is done with calls still pending: the receiver takes over, woken.
  CHECK(watch.caller_done(true));
  CHECK(watch.receiver_watches());
  // The receiver read the last reply: it leaves the socket to the next caller.
  watch.receiver_read(false);
  CHECK_FALSE(watch.receiver_watches());
  // A call that may not read its own reply (an async call) wakes the receiver to watch.
  CHECK_FALSE(watch.call_added(false, wake));
  CHECK(wake);
  CHECK(watch.receiver_watches());
  watch.receiver_read(true);  // calls pending: it keeps watching
  CHECK(watch.receiver_watches());
}

TEST_CASE("receive_timeout: a short step, at least the margin before the deadline", "[tuning][own_reply]") {
  using geerpc::detail::receive_timeout;
  using left = std::optional<std::chrono::steady_clock::duration>;
  CHECK(receive_timeout::step_for(std::nullopt) == 0ms);  // no deadline: no timeout
  CHECK(receive_timeout::step_for(left(40ms)) == 0ms);    // too close: poll instead
  CHECK(receive_timeout::step_for(left(41ms)) == 16ms);   // 16 ms usable
  CHECK(receive_timeout::step_for(left(56ms)) == 16ms);
  CHECK(receive_timeout::step_for(left(57ms)) == 32ms);
  // However long the wait: never a timeout the kernel would round past the margin.
  CHECK(receive_timeout::step_for(left(1049ms)) == 32ms);
  CHECK(receive_timeout::step_for(left(std::chrono::hours(10000))) == 32ms);
  CHECK(receive_timeout::step_for(left(-5s)) == 0ms);
  // Never longer than wanted; none only without a deadline.
  CHECK(receive_timeout::fits(32ms, 32ms, true));
  CHECK(receive_timeout::fits(16ms, 32ms, true));
  CHECK_FALSE(receive_timeout::fits(32ms, 16ms, true));
  CHECK_FALSE(receive_timeout::fits(0ms, 16ms, true));
  CHECK(receive_timeout::fits(0ms, 0ms, false));
  CHECK_FALSE(receive_timeout::fits(16ms, 0ms, false));
}

TEST_CASE("receive_timeout: the socket's SO_RCVTIMEO is set only when the one it has does not fit",
          "[tuning][own_reply]") {
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  // What the socket reports: the kernel keeps it in its timer ticks, rounded up (1 to 10 ms).
  const auto socket_timeout = [&] {
    timeval tv{};
    socklen_t size = sizeof tv;
    REQUIRE(::getsockopt(fds[0], SOL_SOCKET, SO_RCVTIMEO, &tv, &size) == 0);
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::seconds(tv.tv_sec) +
                                                                 std::chrono::microseconds(tv.tv_usec));
  };
  const auto about = [](std::chrono::milliseconds actual, std::chrono::milliseconds set) {
    return actual >= set && actual <= set + 10ms;
  };
  using left = std::optional<std::chrono::steady_clock::duration>;
  geerpc::detail::receive_timeout timeout;
  CHECK(timeout.arm(fds[0], left(1s)));
  CHECK(about(socket_timeout(), 32ms));
  // Set behind its back: a call with a like deadline must not set it again.
  REQUIRE(geerpc::net::set_receive_timeout(fds[0], 100ms));
  CHECK(timeout.arm(fds[0], left(900ms)));
  CHECK(about(socket_timeout(), 100ms));
  CHECK(timeout.current() == 32ms);
  CHECK(timeout.arm(fds[0], left(50ms)));  // nearer: 16 ms
  CHECK(about(socket_timeout(), 16ms));
  CHECK_FALSE(timeout.arm(fds[0], left(30ms)));  // the last stretch is the poll's
  CHECK(about(socket_timeout(), 16ms));
  CHECK(timeout.arm(fds[0], std::nullopt));  // no deadline: no timeout
  CHECK(socket_timeout() == 0ms);
  // A recv under the timeout it set ends at it, not never.
  CHECK(timeout.arm(fds[0], left(60ms)));
  char byte = 0;
  errno = 0;
  CHECK(::recv(fds[0], &byte, 1, 0) == -1);
  CHECK((errno == EAGAIN || errno == EWOULDBLOCK));
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST_CASE("unled_runs: the watchdog asks for a leader only after a whole period unled", "[tuning][unled]") {
  auto scheduler = std::make_shared<geerpc::detail::deadline_scheduler>();
  geerpc::detail::unled_runs runs(
      *scheduler, true, [](void*) { return false; }, nullptr);
  CHECK(runs.may_run_unled());  // no handler found blocked yet
  runs.lead_round_began();
  runs.run_began();
  CHECK_FALSE(runs.look(true));  // a lead round and a run since the last look: not overdue
  CHECK(runs.may_run_unled());
  runs.run_began();
  CHECK(runs.look(true));  // unled, nobody led since: wake one; a run began, so nobody is blocked
  CHECK(runs.may_run_unled());
  CHECK(runs.look(true));  // still unled, no run began either: a handler is blocked
  CHECK_FALSE(runs.may_run_unled());
  CHECK_FALSE(runs.look(false));  // led again
}

TEST_CASE("unled_runs: off on several CPUs, and a handler found blocked turns it off for a while", "[tuning][unled]") {
  auto scheduler = std::make_shared<geerpc::detail::deadline_scheduler>();
  geerpc::detail::unled_runs off(
      *scheduler, false, [](void*) { return false; }, nullptr);
  CHECK_FALSE(off.may_run_unled());
  geerpc::detail::unled_runs on(
      *scheduler, true, [](void*) { return false; }, nullptr);
  on.found_blocked();
  CHECK_FALSE(on.may_run_unled());
}

TEST_CASE("tuning::none's server_schedule holds nothing and watches nothing: the plain core", "[tuning]") {
  using schedule = geerpc::tuning::none::server_schedule;
  auto scheduler = std::make_shared<geerpc::detail::deadline_scheduler>();
  geerpc::tuning::settings knobs;
  schedule server(geerpc::tuning::server_setup{*scheduler, 4, knobs, 1, [](void*) { return false; }, nullptr});
  auto mine = server.thread_begins(0);
  geerpc::detail::server_request request;
  CHECK_FALSE(server.hold_reply(mine, request, true));
  CHECK_FALSE(server.may_run_unled());
  CHECK(server.held(mine) == nullptr);
  static_assert(!geerpc::tuning::none::client_wait::callers_read);
  static_assert(std::is_empty_v<schedule>);
}

}  // namespace tuning_test
