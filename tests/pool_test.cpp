// The threaded server's elastic handler pool: it grows while requests wait, every thread is busy
// and its handlers have stopped finishing, so handlers that wait on something slow never starve a
// quick call while a burst of quick ones keeps the threads it has; it shrinks back once the burst
// is over; and a thread the system refuses to start never ends the process.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace pool_test {

using namespace std::chrono_literals;
using test::Args;

TEMPLATE_TEST_CASE("with default options, 100 handlers blocked in a wait all run, and a fast call still gets through",
                   "[pool]", GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s;  // default options: 8 core handler threads
  auto slow = geerpc::dial<TestType>(s.address);
  std::vector<test::future<int, TestType>> blocked;
  for (int i = 0; i < 100; ++i) blocked.push_back(slow.template async_call<int>("Arith.Late", Args{i, 0}));
  // Every one of them is inside its handler at once: a fixed pool of 8 would start only 8.
  REQUIRE(s.arith.started.wait_for_at_least(100, 5s));
  auto fast = geerpc::dial<TestType>(s.address);
  CHECK(fast.template call<int>(geerpc::with_timeout(500ms), "Arith.Sum", Args{2, 3}) == 5);
  CHECK(s.server.thread_count() > 100);
  s.arith.release.set();
  for (int i = 0; i < 100; ++i) CHECK(blocked[static_cast<std::size_t>(i)].get() == i * 1000);
}

TEMPLATE_TEST_CASE("stop() with 50 callers in cooperative handlers starts all 50 and ends every call promptly",
                   "[pool][shutdown]", GEERPC_ASYNC_TRANSPORTS) {
  auto s = std::make_unique<test::arith_server<TestType>>();
  std::vector<geerpc::basic_client<TestType>> clients;
  for (int i = 0; i < 50; ++i) clients.push_back(geerpc::dial<TestType>(s->address));
  std::atomic<int> ended{0};
  std::vector<std::jthread> callers;
  for (auto& c : clients)
    callers.emplace_back([&] {
      const auto r = c.template try_call<int>("Arith.WaitForStop", Args{1, 2});
      (void)r;  // a reply or an error: either ends the call
      ended.fetch_add(1);
    });
  REQUIRE(s->arith.started.wait_for_at_least(50, 5s));
  const auto began = std::chrono::steady_clock::now();
  s->server.stop();
  const auto took = std::chrono::steady_clock::now() - began;
  CHECK(took < 1s);  // a bound that catches a hang, not a timing goal
  CHECK(s->arith.stops_seen.value() == 50);
  callers.clear();
  CHECK(ended.load() == 50);
}

TEMPLATE_TEST_CASE("after a burst the pool returns to its core size", "[pool][resources]", GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s({.threads = {.io_threads = 1, .handlers = 2, .idle_timeout = 100ms}}, "127.0.0.1:0",
                                 test::as_given);
  REQUIRE(s.server.thread_count() == 3);  // two to run handlers, one to lead
  auto client = geerpc::dial<TestType>(s.address);
  std::vector<test::future<int, TestType>> burst;
  for (int i = 0; i < 20; ++i) burst.push_back(client.template async_call<int>("Arith.Late", Args{i, 0}));
  REQUIRE(s.arith.started.wait_for_at_least(20, 5s));
  CHECK(s.server.thread_count() >= 21);
  s.arith.release.set();
  for (auto& f : burst) f.get();
  CHECK(test::eventually([&] { return s.server.thread_count() == 3; }, 3s));
  // And it grows again for the next burst.
  auto again = client.template async_call<int>("Arith.WaitForStop", Args{1, 1});
  auto quick = geerpc::dial<TestType>(s.address);
  CHECK(quick.template call<int>(geerpc::with_timeout(500ms), "Arith.Sum", Args{1, 1}) == 2);
  again.cancel();
}

// The growth rule is tuning::automatic's pool_grow (tuning::none's grows whenever requests wait
// and every thread is busy: server_strategies_test.cpp).
TEMPLATE_TEST_CASE("a burst of quick calls does not grow the pool while its handlers keep finishing",
                   "[pool][resources]", geerpc::threaded) {
  // Threads above the core stay long enough to be seen; the pool may grow only once no handler
  // has finished for 10 s, which quick handlers never let happen.
  test::arith_server<TestType> s({.threads = {.io_threads = 1, .handlers = 2, .growth_delay = 10s, .idle_timeout = 1h}},
                                 "127.0.0.1:0", test::as_given);
  REQUIRE(s.server.thread_count() == 3);
  std::vector<geerpc::basic_client<TestType>> clients;
  for (int c = 0; c < 8; ++c) clients.push_back(geerpc::dial<TestType>(s.address));
  for (int round = 0; round < 20; ++round) {
    std::vector<test::future<int, TestType>> burst;
    for (int i = 0; i < 256; ++i)
      burst.push_back(clients[static_cast<std::size_t>(i % 8)].template async_call<int>("Arith.Sum", Args{i, round}));
    for (int i = 0; i < 256; ++i) REQUIRE(burst[static_cast<std::size_t>(i)].get() == i + round);
  }
  // Growing whenever requests waited and every thread was busy, the pool took more threads here.
  CHECK(s.server.thread_count() == 3);
}

TEMPLATE_TEST_CASE("handlers stuck for pool_growth_delay make the pool grow for every request waiting", "[pool]",
                   geerpc::threaded) {
  test::arith_server<TestType> s({.threads = {.io_threads = 1, .handlers = 2, .growth_delay = 500ms}}, "127.0.0.1:0",
                                 test::as_given);
  struct release_at_end {  // Late ignores its stop token: a failed REQUIRE must not leave it blocked
    test::event& release;
    ~release_at_end() { release.set(); }
  } guard{s.arith.release};
  auto client = geerpc::dial<TestType>(s.address);
  std::vector<test::future<int, TestType>> calls;
  for (int i = 0; i < 6; ++i) calls.push_back(client.template async_call<int>("Arith.Late", Args{i, 0}));
  REQUIRE(s.arith.started.wait_for_at_least(2, 5s));
  // Both handler threads blocked: nothing else starts before they have been stuck for the delay...
  CHECK_FALSE(s.arith.started.wait_for_at_least(3, 100ms));
  // ...and then a thread starts for each waiting request, one right after another: not two per
  // delay (as many as were found stuck), nor one.
  REQUIRE(s.arith.started.wait_for_at_least(3, 5s));
  CHECK(s.arith.started.wait_for_at_least(6, 250ms));
  CHECK(s.server.thread_count() == 7);  // six in handlers, one to lead
  s.arith.release.set();
  for (int i = 0; i < 6; ++i) CHECK(calls[static_cast<std::size_t>(i)].get() == i * 1000);
}

TEMPLATE_TEST_CASE("max_handler_threads bounds the pool: requests beyond it wait for a thread", "[pool][limits]",
                   GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s({.threads = {.handlers = 1, .max_handlers = 3}});
  auto client = geerpc::dial<TestType>(s.address);
  std::vector<test::future<int, TestType>> calls;
  for (int i = 0; i < 6; ++i) calls.push_back(client.template async_call<int>("Arith.Late", Args{i, 0}));
  REQUIRE(s.arith.started.wait_for_at_least(3, 5s));
  // Three run, three wait; the pool holds three handler threads and one to lead.
  CHECK_FALSE(s.arith.started.wait_for_at_least(4, 100ms));
  CHECK(s.server.thread_count() == 4);
  s.arith.release.set();
  for (int i = 0; i < 6; ++i) CHECK(calls[static_cast<std::size_t>(i)].get() == i * 1000);
}

namespace {
// A handler that, once told to stop, stops the server itself.
template <class Transport>
struct stops_server {
  geerpc::basic_server<Transport>* server = nullptr;
  test::counter entered;
  int wait(const Args&, std::stop_token stop) {
    entered.add();
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait_for(lock, stop, 5s, [] { return false; });
    server->stop();  // from a pool thread, while the outside stop() joins the pool
    return 0;
  }
};
}  // namespace

TEMPLATE_TEST_CASE("a handler that calls stop() while stop() runs outside does not deadlock it", "[pool][shutdown]",
                   GEERPC_TRANSPORTS) {
  for (int round = 0; round < 5; ++round) {
    stops_server<TestType> impl;
    using api = geerpc::service<"S", geerpc::method<"Wait", &stops_server<TestType>::wait>>;
    geerpc::basic_server<TestType> server({.threads = {.handlers = 2}});
    impl.server = &server;
    server.template add<api>(impl);
    auto client = geerpc::dial<TestType>(server.listen("127.0.0.1:0"));
    std::jthread caller([&] { (void)client.template try_call<int>("S.Wait", Args{1, 2}); });
    REQUIRE(impl.entered.wait_for_at_least(1, 5s));
    server.stop();  // before the fix: joined the handler's thread while it waited to join too
    caller.join();
  }
}

// A pids limit, as containers set: RLIMIT_NPROC counts every thread of a user, and root is exempt,
// so a forked child takes an unused uid with a limit just above what it runs before the burst.
TEMPLATE_TEST_CASE("a thread the system refuses to start never ends the process: the pool keeps queueing",
                   "[pool][limits]", GEERPC_ASYNC_TRANSPORTS) {
#if defined(GEERPC_TEST_TSAN)
  WARN("not run under TSan: its runtime starts threads of its own, which the limit counts");
  return;
#endif
  if (::geteuid() != 0) {
    WARN("not run: needs root, to run the server as a user with a thread limit of its own");
    return;
  }
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    int code = 0;
    try {
      // main, the scheduler, three pool threads and the client's receiver: room for none more.
      const rlimit limit{6, 6};
      // A uid of its own: the limit counts every thread of the user, and tests run side by side.
      const auto uid = static_cast<uid_t>(40000 + ::getpid() % 20000);
      if (::setgid(uid) != 0 || ::setuid(uid) != 0 || ::setrlimit(RLIMIT_NPROC, &limit) != 0) ::_exit(10);
      test::arith_server<TestType> s({.threads = {.io_threads = 1, .handlers = 2}}, "127.0.0.1:0", test::as_given);
      auto client = geerpc::dial<TestType>(s.address);
      std::vector<test::future<int, TestType>> calls;
      for (int i = 0; i < 8; ++i) calls.push_back(client.template async_call<int>("Arith.Late", Args{i, 0}));
      if (!s.arith.started.wait_for_at_least(2, 5s)) code = 11;
      // The requests left waiting make the pool try to grow, which the limit refuses.
      if (!test::eventually([&] { return s.server.thread_start_failures() > 0; }, 2s)) code = 12;
      // Every handler thread is busy and no more can start, yet a thread still leads the I/O:
      // a new connection is accepted and its handshake answered (it takes no thread of its own;
      // nor does a blocking client, which this process could not start either).
      if (!geerpc::try_dial<geerpc::blocking>(s.address, {.timeouts = {.connect = 2s}})) code = 14;
      // A threaded client needs a thread: try_dial says so instead of throwing.
      if (geerpc::try_dial<TestType>(s.address).code() != geerpc::errc::connect_failed) code = 15;
      s.arith.release.set();
      for (int i = 0; i < 8; ++i) {
        const auto r = calls[static_cast<std::size_t>(i)].try_get();
        if (!r || r.value() != i * 1000) code = 13;
      }
    } catch (...) {
      code = 16;  // never back into Catch: the child would run the rest of the suite
    }
    std::fflush(nullptr);
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) ==
        0);  // 12: no failure was seen; 13: a call did not complete; 14: no leader; 15: dial threw; 16: threw
}

}  // namespace pool_test
