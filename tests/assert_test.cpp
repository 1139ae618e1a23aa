// GEERPC_ASSERT (detail/assert.hpp): on in geerpc's own builds, whatever the build type; a failed
// check prints where it is, what it checked and why, and aborts. Each failure runs in a child
// process, whose exit status and stderr the test reads. The checks placed in the library are
// live: breaking an invariant on purpose trips them. And the umbrella header, included last,
// takes the macro away from users.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <geerpc/detail/assert.hpp>
#include <geerpc/detail/seq_map.hpp>
#include <geerpc/scheduler/deadline_scheduler.hpp>
#include <geerpc/transport/threaded/client.hpp>
#include <geerpc/tuning/none.hpp>
#include <geerpc/tuning/own_reply.hpp>
#include <string>

#include "catch.hpp"

namespace {

struct child_outcome {
  int status = 0;
  std::string stderr_text;

  bool aborted() const { return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT; }
  bool exited_cleanly() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }
};

// Runs `body` in a forked child with its stderr captured; the child exits 0 if `body` returns.
template <class Body>
child_outcome run_in_child(Body body) {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(pipe_fds[0]);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    // Catch's own SIGABRT handler would report the abort as this test's failure; and no core file.
    ::signal(SIGABRT, SIG_DFL);
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    body();
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  child_outcome outcome;
  char buffer[512];
  for (;;) {
    const ssize_t got = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    outcome.stderr_text.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(pipe_fds[0]);
  while (::waitpid(pid, &outcome.status, 0) < 0 && errno == EINTR) {
  }
  return outcome;
}

constexpr int failing_line = __LINE__ + 3;
void fail_the_answer() {
  volatile int answer = 41;
  GEERPC_ASSERT(answer == 42, "the answer is 42");
}

}  // namespace

TEST_CASE("GEERPC_ASSERT is on in geerpc's own test build", "[assert]") {
  // Set by the geerpc_warnings target for every program of this project, Release builds too.
  STATIC_REQUIRE(GEERPC_ENABLE_ASSERTS == 1);
}

TEST_CASE("a check that holds evaluates its condition once and does nothing else", "[assert]") {
  int evaluated = 0;
  GEERPC_ASSERT(++evaluated == 1, "evaluated once");
  CHECK(evaluated == 1);
  const child_outcome outcome = run_in_child([] { GEERPC_ASSERT(1 + 1 == 2, "arithmetic holds"); });
  CHECK(outcome.exited_cleanly());
  CHECK(outcome.stderr_text.empty());
}

TEST_CASE("a failed check prints file:line, the condition and the message, and aborts", "[assert]") {
  const child_outcome outcome = run_in_child(fail_the_answer);
  INFO("stderr: " << outcome.stderr_text);
  CHECK(outcome.aborted());
  CHECK(outcome.stderr_text.find("assert_test.cpp:" + std::to_string(failing_line) + ":") != std::string::npos);
  CHECK(outcome.stderr_text.find("answer == 42") != std::string::npos);
  CHECK(outcome.stderr_text.find("the answer is 42") != std::string::npos);
}

TEST_CASE("the library's own checks are live: a broken invariant aborts", "[assert]") {
  SECTION("seq_map: a null value would read as a free slot") {
    const child_outcome outcome = run_in_child([] {
      geerpc::detail::seq_map<int> map;
      map.insert(7, nullptr);
    });
    INFO("stderr: " << outcome.stderr_text);
    CHECK(outcome.aborted());
    CHECK(outcome.stderr_text.find("seq_map: a null value") != std::string::npos);
  }
  SECTION("deadline_scheduler: a timer cancelled on a scheduler that does not hold it") {
    const child_outcome outcome = run_in_child([] {
      geerpc::detail::deadline_scheduler one, other;
      geerpc::detail::deadline_scheduler::timer timer;
      one.schedule(
          timer, std::chrono::steady_clock::now() + std::chrono::hours(1), [](void*) {}, nullptr);
      other.cancel(timer);
    });
    INFO("stderr: " << outcome.stderr_text);
    CHECK(outcome.aborted());
    CHECK(outcome.stderr_text.find("deadline_scheduler: a timer queued on another scheduler") != std::string::npos);
  }
  SECTION("threaded client: a synchronous call completed twice") {
    const child_outcome outcome = run_in_child([] {
      geerpc::detail::blocking_wait_call<geerpc::detail::threaded_client_engine<geerpc::tuning::none>> call;
      call.complete();
      call.complete();
    });
    INFO("stderr: " << outcome.stderr_text);
    CHECK(outcome.aborted());
    CHECK(outcome.stderr_text.find("threaded client: a call completed twice") != std::string::npos);
  }
  SECTION("threaded client: an asynchronous call completed twice") {
    const child_outcome outcome = run_in_child([] {
      geerpc::detail::async_call<geerpc::detail::threaded_client_engine<geerpc::tuning::none>> call(nullptr);
      call.complete();
      call.complete();
    });
    INFO("stderr: " << outcome.stderr_text);
    CHECK(outcome.aborted());
    CHECK(outcome.stderr_text.find("threaded client: a call completed twice") != std::string::npos);
  }
  SECTION("socket_watch: the watch handed on by a caller that does not hold it") {
    const child_outcome outcome = run_in_child([] {
      geerpc::detail::socket_watch watch;
      bool wake_receiver = false;
      watch.call_added(false, wake_receiver);  // the receiving thread watches
      watch.caller_done(true);
    });
    INFO("stderr: " << outcome.stderr_text);
    CHECK(outcome.aborted());
    CHECK(outcome.stderr_text.find("socket_watch: a caller that does not watch") != std::string::npos);
  }
  SECTION("socket_watch: the watch handed on by the caller that holds it does not fire") {
    const child_outcome outcome = run_in_child([] {
      geerpc::detail::socket_watch watch;
      bool wake_receiver = false;
      watch.call_added(true, wake_receiver);  // the caller watches
      watch.caller_done(true);
      watch.receiver_read(false);
    });
    CHECK(outcome.exited_cleanly());
  }
}

// Users never see the macro: the umbrella header, an entry header, ends its scope
// (detail/macro_unscope.hpp), here after headers that defined it, and with
// GEERPC_SEPARATE_COMPILATION as this suite is built (a header first included later defines it
// again). tests/headers/instantiate.cpp, a header-only user's program, and headers.order check the same.
#include <geerpc/geerpc.hpp>
#if defined(GEERPC_ASSERT)
#error "geerpc/geerpc.hpp must #undef GEERPC_ASSERT"
#endif
