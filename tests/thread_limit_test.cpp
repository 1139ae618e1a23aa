// A server that cannot start a thread (a pids limit, as containers set) must not terminate the
// process. The blocking server needs a thread per connection: it refuses that connection with the
// reason, counts it, and keeps serving the others.
//
// The limit is real: a forked child drops to an unprivileged user when it runs as root (root
// ignores RLIMIT_NPROC), sets RLIMIT_NPROC to 0 so that no thread can start, and reports by its
// exit status. Nothing in the child uses Catch: it only exits.
#include <grp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

#include "catch.hpp"
#include "support.hpp"

namespace thread_limit_test {

using namespace std::chrono_literals;
using test::Args;

namespace {

constexpr int cannot_limit = 77;  // the child could not set up the limit: nothing was tested

// The child's steps; a nonzero exit status names the step that failed.
int refused_then_served() {
  try {
    if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0))
      return cannot_limit;
    test::arith_server<geerpc::blocking> s;
    auto first = geerpc::try_dial<geerpc::blocking>(s.address, {.timeouts = {.connect = 5s}});
    if (!first || first->try_call<int>("Arith.Sum", Args{1, 2}).value() != 3) return 10;

    rlimit old{};
    if (::getrlimit(RLIMIT_NPROC, &old) != 0) return cannot_limit;
    const rlimit none{0, old.rlim_max};
    if (::setrlimit(RLIMIT_NPROC, &none) != 0) return cannot_limit;
    // The connection is accepted but its thread cannot start: the server says why and closes it.
    auto refused = geerpc::try_dial<geerpc::blocking>(s.address, {.timeouts = {.connect = 5s}});
    if (::setrlimit(RLIMIT_NPROC, &old) != 0) return 11;
    if (refused) return 12;
    if (refused.code() != geerpc::errc::handshake_rejected) return 13;
    if (refused.message() !=
        "rpc client: handshake rejected: rpc server: cannot start a thread for this connection: Resource temporarily "
        "unavailable")
      return 14;
    if (s.server.refused_connections() != 1) return 15;

    // The others are still served: the connection that had its thread, and a new one.
    if (first->try_call<int>("Arith.Sum", Args{3, 4}).value() != 7) return 16;
    auto later = geerpc::try_dial<geerpc::blocking>(s.address, {.timeouts = {.connect = 5s}});
    if (!later || later->try_call<int>("Arith.Sum", Args{5, 6}).value() != 11) return 17;
    return 0;
  } catch (...) {
    return 20;
  }
}

}  // namespace

TEST_CASE("a blocking server that cannot start a thread refuses that connection with the reason, and serves on",
          "[limits][resources]") {
#ifdef GEERPC_TEST_TSAN
  // TSan cannot follow a child that starts threads after a fork from several threads.
  if (test::thread_count() > 1) {
    WARN("skipped under TSan in a process that already has threads: run this test alone");
    return;
  }
#endif
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Catch's handlers would report a crash of the child as if it were the parent's.
    for (const int sig : {SIGABRT, SIGSEGV, SIGILL, SIGFPE, SIGBUS, SIGTERM}) std::signal(sig, SIG_DFL);
    ::_exit(refused_then_served());
  }

  int status = 0;
  const bool ended = test::eventually([&] { return ::waitpid(child, &status, WNOHANG) == child; }, 30s);
  if (!ended) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
  }
  REQUIRE(ended);
  INFO("child: exited " << WIFEXITED(status) << ", status " << WEXITSTATUS(status) << ", signal "
                        << (WIFSIGNALED(status) ? WTERMSIG(status) : 0));
  REQUIRE(WIFEXITED(status));
  if (WEXITSTATUS(status) == cannot_limit) {
    WARN("cannot set a thread limit here (no unprivileged user to switch to): nothing tested");
    return;
  }
  CHECK(WEXITSTATUS(status) == 0);
}

TEMPLATE_TEST_CASE("refused_connections counts the connections refused in the handshake", "[limits][connect]",
                   geerpc::blocking, geerpc::threaded) {
  test::arith_server<TestType> s({.limits = {.max_connections = 1}});
  CHECK(s.server.refused_connections() == 0);
  auto first = geerpc::dial<TestType>(s.address);
  CHECK(first.template call<int>("Arith.Sum", Args{1, 2}) == 3);
  auto second = geerpc::try_dial<TestType>(s.address);
  CHECK(second.code() == geerpc::errc::handshake_rejected);
  CHECK(s.server.refused_connections() == 1);
  first.close();
  CHECK(test::eventually([&] { return s.server.connection_count() == 0; }));
  // A bad hello is refused too.
  test::raw_peer peer(s.address);
  std::array<std::byte, geerpc::wire::hello_size> hello{};
  geerpc::wire::encode_hello({geerpc::wire::protocol_version, 99, 0, 1u << 20}, hello);
  peer.send(hello);
  auto reply = peer.read_hello_reply();
  REQUIRE(reply);
  CHECK_FALSE(reply->accepted);
  CHECK(s.server.refused_connections() == 2);
}

}  // namespace thread_limit_test
