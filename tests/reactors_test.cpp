// The threaded server's reactors (server_options.threads.io_threads): connections are spread over
// them round-robin and served on each, threads.max_handlers is one budget they share (the core,
// threads.handlers, split between them), max_connections counts them all, what the
// server reports is summed over them, and stop() and shutdown() keep their guarantees with
// connections on every reactor. io_threads = 1 keeps one epoll set for the whole server.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace reactors_test {

using namespace std::chrono_literals;
using test::Args;

template <class Transport>
using clients = std::vector<geerpc::basic_client<Transport>>;

template <class Transport>
clients<Transport> dial_many(const std::string& address, std::size_t count) {
  clients<Transport> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(geerpc::dial<Transport>(address));
  return out;
}

inline geerpc::server_options with_reactors(std::size_t io_threads, std::size_t handlers = 8) {
  geerpc::server_options options;
  options.threads.io_threads = io_threads;
  options.threads.handlers = handlers;
  return options;
}

// Lets Arith.Late's blocked handlers go as the test ends, a failed REQUIRE's included (Late
// ignores its stop token).
struct release_at_end {
  test::event& release;
  ~release_at_end() { release.set(); }
};

// Sends `count` calls of Arith.Late (blocked until released) on `peer`.
// A number the debug page's JSON shows under `key` (the first after `section`); -1 if absent.
inline long long stats_number(const std::string& address, std::string_view section, std::string_view key) {
  const std::string body = test::http_get(address, "/debug/geerpc/stats.json");
  const auto from = body.find("\"" + std::string(section) + "\":");
  const auto at = from == std::string::npos ? from : body.find("\"" + std::string(key) + "\":", from);
  if (at == std::string::npos) return -1;
  return std::stoll(body.substr(at + key.size() + 3));
}

template <class Transport>
std::vector<test::future<int, Transport>> late_calls(geerpc::basic_client<Transport>& peer, int count) {
  std::vector<test::future<int, Transport>> calls;
  for (int i = 0; i < count; ++i) calls.push_back(peer.template async_call<int>("Arith.Late", Args{i, 0}));
  return calls;
}

// A handler that stops its own server, on whichever reactor its connection is.
template <class Transport>
struct stopper {
  geerpc::basic_server<Transport>* server = nullptr;
  test::event stop_returned;
  int stop(const Args&) {
    server->stop();  // only begins the stop: it runs on one of the server's threads
    stop_returned.set();
    return 1;
  }
};

TEMPLATE_TEST_CASE("connections are spread over io_threads reactors in turn, and calls on every one succeed",
                   "[reactors]", GEERPC_ASYNC_TRANSPORTS) {
  const std::size_t reactors = GENERATE(2u, 4u);
  test::arith_server<TestType> s(with_reactors(reactors));
  // Eight handler threads shared out, and a leader for each reactor.
  CHECK(s.server.thread_count() == 8 + reactors);
  auto peers = dial_many<TestType>(s.address, 2 * reactors);
  // Each dial's handshake was answered, so its connection has been admitted to a reactor.
  CHECK(s.server.reactor_connections() == std::vector<std::size_t>(reactors, 2));
  for (std::size_t i = 0; i < peers.size(); ++i) {
    const int n = static_cast<int>(i);
    CHECK(peers[i].template call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{n, 1}) == n + 1);
  }
  CHECK(s.server.connection_count() == 2 * reactors);
}

TEMPLATE_TEST_CASE("io_threads = 1 keeps one epoll set: every connection on it, handlers + 1 threads", "[reactors]",
                   GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s(with_reactors(1, 2), "127.0.0.1:0", test::as_given);
  CHECK(s.server.thread_count() == 3);
  auto peers = dial_many<TestType>(s.address, 4);
  CHECK(s.server.reactor_connections() == std::vector<std::size_t>{4});
  for (auto& peer : peers) CHECK(peer.template call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{2, 3}) == 5);
}

TEMPLATE_TEST_CASE("no more reactors than handler threads: each runs at least one", "[reactors]",
                   GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s(with_reactors(4, 2));
  CHECK(s.server.reactor_connections().size() == 2);
  CHECK(s.server.thread_count() == 4);  // one handler thread and one leader on each
}

TEST_CASE("io_threads = 0 takes its count from the runtime's CPU budget", "[reactors]") {
  CHECK(geerpc::server_options{}.threads.io_threads == 1);  // the default: one reactor, as before
  CHECK(geerpc::detail::default_io_threads(1) == 1);
  CHECK(geerpc::detail::default_io_threads(2) == 1);
  CHECK(geerpc::detail::default_io_threads(4) == 2);
  CHECK(geerpc::detail::default_io_threads(64) == 8);
  auto rt = std::make_shared<geerpc::runtime>(geerpc::runtime_options{.cpus = 8});
  geerpc::server_options options;
  options.runtime = rt;
  options.threads.io_threads = 0;
  test::arith_server<geerpc::threaded> s(options);
  CHECK(s.server.reactor_connections().size() == 4);
}

TEST_CASE("the core is split evenly, and each reactor may hold the budget less the others' cores", "[reactors]") {
  const geerpc::server_threads all{.handlers = 5, .max_handlers = 11};
  std::size_t handlers = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const auto share = geerpc::detail::reactor_share(all, i, 3);
    CHECK(share.handlers == (i < 2 ? 2u : 1u));  // the remainder to the first reactors
    CHECK(share.max_handlers == 11 - (5 - share.handlers));
    handlers += share.handlers;
  }
  CHECK(handlers == 5);
  // max_handlers below handlers means handlers: each reactor holds its core and no more.
  CHECK(geerpc::detail::reactor_share({.handlers = 4, .max_handlers = 1}, 1, 2).max_handlers == 2);
}

TEMPLATE_TEST_CASE("one busy connection grows its reactor's pool past an even share, to the server's max_handlers",
                   "[reactors][pool]", GEERPC_ASYNC_TRANSPORTS) {
  // Two reactors, a core of one thread each, six handler threads for the whole server. Split
  // evenly, reactor 0 would stop at three.
  auto options = with_reactors(2, 2);
  options.threads.max_handlers = 6;
  options.threads.growth_delay = 0ns;  // grow as soon as requests wait
  test::arith_server<TestType> s(options);
  release_at_end guard{s.arith.release};
  auto busy = geerpc::dial<TestType>(s.address);  // reactor 0
  auto idle = geerpc::dial<TestType>(s.address);  // reactor 1
  REQUIRE(s.server.reactor_connections() == std::vector<std::size_t>{1, 1});
  auto blocked = late_calls(busy, 7);
  // All but reactor 1's core thread: five handlers on reactor 0.
  REQUIRE(s.arith.started.wait_for_at_least(5, 10s));
  CHECK(s.server.thread_count() == 5 + 1 + 2);                        // and a leader; reactor 1: its core and a leader
  CHECK(test::eventually([&] { return s.server.inflight() == 7; }));  // two wait: the budget is spent
  // Reactor 1 still runs calls on its core.
  CHECK(idle.template call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{2, 3}) == 5);
  CHECK(s.server.thread_count() == 8);
  s.arith.release.set();
  for (int i = 0; i < 7; ++i) CHECK(blocked[static_cast<std::size_t>(i)].get() == i * 1000);
  CHECK(s.arith.started.value() == 7);
}

TEMPLATE_TEST_CASE("threads a reactor retires go back to the budget, and another reactor's pool grows with them",
                   "[reactors][pool]", GEERPC_ASYNC_TRANSPORTS) {
  auto options = with_reactors(2, 2);
  options.threads.max_handlers = 4;
  options.threads.growth_delay = 0ns;
  options.threads.idle_timeout = 1ms;  // surplus threads retire as soon as they idle
  test::arith_server<TestType> s(options);
  release_at_end guard{s.arith.release};
  auto first = geerpc::dial<TestType>(s.address);   // reactor 0
  auto second = geerpc::dial<TestType>(s.address);  // reactor 1
  REQUIRE(s.server.reactor_connections() == std::vector<std::size_t>{1, 1});
  auto early = late_calls(first, 3);
  REQUIRE(s.arith.started.wait_for_at_least(3, 10s));  // reactor 0 holds the budget less reactor 1's core
  s.arith.release.set();
  for (auto& call : early) CHECK(call.get() >= 0);
  REQUIRE(test::eventually([&] { return s.server.thread_count() == 4; }));  // back to the cores and leaders
  std::vector<test::future<int, TestType>> waiting;                         // handlers that return as the server stops
  for (int i = 0; i < 3; ++i) waiting.push_back(second.template async_call<int>("Arith.WaitForStop", Args{}));
  CHECK(s.arith.started.wait_for_at_least(3 + 3, 10s));  // reactor 1 now grows to three
  s.server.stop();
  CHECK(s.arith.stops_seen.value() == 3);
}

TEMPLATE_TEST_CASE("a reactor refused a thread for want of budget starts one when another reactor gives it back",
                   "[reactors][pool]", GEERPC_ASYNC_TRANSPORTS) {
  // Reactor 0 holds the whole budget with three blocked handlers; reactor 1's core thread blocks,
  // and its next request finds the budget spent. Once reactor 0's handlers return and its surplus
  // threads retire, that request runs: with tuning::none too, where no growth look comes back to
  // it (the pool's own retry does).
  auto options = with_reactors(2, 2);
  options.threads.max_handlers = 4;
  options.threads.growth_delay = 0ns;
  options.threads.idle_timeout = 1ms;  // surplus threads retire as soon as they idle
  test::arith_server<TestType> s(options);
  release_at_end guard{s.arith.release};
  auto first = geerpc::dial<TestType>(s.address);   // reactor 0
  auto second = geerpc::dial<TestType>(s.address);  // reactor 1
  REQUIRE(s.server.reactor_connections() == std::vector<std::size_t>{1, 1});
  auto early = late_calls(first, 3);
  REQUIRE(s.arith.started.wait_for_at_least(3, 10s));  // the budget is spent
  auto blocker = second.template async_call<int>("Arith.WaitForStop", Args{});
  REQUIRE(s.arith.started.wait_for_at_least(4, 10s));  // reactor 1's core thread is busy
  auto quick = second.template async_call<int>("Arith.Sum", Args{2, 3});
  REQUIRE(test::eventually([&] { return s.server.inflight() == 5; }));  // it waits for a thread
  // The refusal is shown on the debug page (the system refused nothing).
  CHECK(test::eventually([&] { return stats_number(s.address, "pool", "budget_refusals") >= 1; }));
  CHECK(stats_number(s.address, "pool", "start_failures") == 0);
  s.arith.release.set();
  for (auto& call : early) CHECK(call.get() >= 0);
  // Well before WaitForStop gives up on its own (10 s), which would free reactor 1's core thread.
  REQUIRE(quick.wait_for(5s));
  CHECK(quick.get() == 5);
  s.server.stop();
  CHECK(s.arith.stops_seen.value() == 1);
}

TEMPLATE_TEST_CASE("io_threads = 1: one connection's handlers reach max_handlers, and no more", "[reactors][pool]",
                   GEERPC_ASYNC_TRANSPORTS) {
  auto options = with_reactors(1, 2);
  options.threads.max_handlers = 4;
  options.threads.growth_delay = 0ns;
  test::arith_server<TestType> s(options, "127.0.0.1:0", test::as_given);
  release_at_end guard{s.arith.release};
  auto peer = geerpc::dial<TestType>(s.address);
  auto blocked = late_calls(peer, 6);
  REQUIRE(s.arith.started.wait_for_at_least(4, 10s));
  CHECK(s.server.thread_count() == 4 + 1);
  s.arith.release.set();
  for (int i = 0; i < 6; ++i) CHECK(blocked[static_cast<std::size_t>(i)].get() == i * 1000);
}

TEMPLATE_TEST_CASE("max_connections counts the connections of every reactor", "[reactors][limits]",
                   GEERPC_ASYNC_TRANSPORTS) {
  auto options = with_reactors(2);
  options.limits.max_connections = 3;
  test::arith_server<TestType> s(options);
  auto peers = dial_many<TestType>(s.address, 3);  // reactors 0, 1, 0
  REQUIRE(s.server.reactor_connections() == std::vector<std::size_t>{2, 1});
  // The next two would go to reactor 1, then 0: both refused, though neither reactor holds three.
  for (int i = 0; i < 2; ++i) {
    auto refused = geerpc::try_dial<TestType>(s.address, {.timeouts = {.connect = 5s}});
    CHECK(refused.code() == geerpc::errc::handshake_rejected);
  }
  CHECK(s.server.refused_connections() == 2);
  CHECK(s.server.connection_count() == 3);
  peers.pop_back();  // one leaves reactor 0: room for one more, wherever it goes
  REQUIRE(test::eventually([&] { return s.server.connection_count() == 2; }));
  auto again = geerpc::dial<TestType>(s.address);
  CHECK(again.template call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{1, 2}) == 3);
}

TEMPLATE_TEST_CASE("shutdown() drains calls in flight on a reactor other than 0", "[reactors][shutdown]",
                   GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s(with_reactors(2));
  release_at_end guard{s.arith.release};
  auto quiet = geerpc::dial<TestType>(s.address);  // reactor 0: nothing in flight
  auto busy = geerpc::dial<TestType>(s.address);   // reactor 1
  REQUIRE(s.server.reactor_connections() == std::vector<std::size_t>{1, 1});
  auto calls = late_calls(busy, 3);
  REQUIRE(s.arith.started.wait_for_at_least(3, 10s));
  std::jthread stopping([&] { s.server.shutdown(30s); });
  CHECK(test::eventually([&] { return !geerpc::try_dial<TestType>(s.address, {.timeouts = {.connect = 1s}}); }));
  CHECK(s.arith.finished.value() == 0);  // the drain waits for them
  s.arith.release.set();
  for (int i = 0; i < 3; ++i) CHECK(calls[static_cast<std::size_t>(i)].get() == i * 1000);  // answered, not cut
  stopping.join();
  CHECK(s.server.connection_count() == 0);
}

TEMPLATE_TEST_CASE("many callers on connections over every reactor all get their own replies", "[reactors]",
                   GEERPC_ASYNC_TRANSPORTS) {
  const std::size_t reactors = GENERATE(2u, 4u);
  test::arith_server<TestType> s(with_reactors(reactors));
  auto peers = dial_many<TestType>(s.address, 8);
  std::atomic<int> wrong{0};
  {
    std::vector<std::jthread> callers;
    for (std::size_t c = 0; c < peers.size(); ++c)
      for (int t = 0; t < 4; ++t)
        callers.emplace_back([&, c, t] {
          for (int i = 0; i < 200; ++i) {
            const int a = static_cast<int>(c) * 100000 + t * 1000;
            const auto r = peers[c].template try_call<int>(geerpc::with_timeout(10s), "Arith.Sum", Args{a, i});
            if (!r || r.value() != a + i) wrong.fetch_add(1);
          }
        });
  }
  CHECK(wrong.load() == 0);
  // The reply leaves before its request is counted out: the count follows at once.
  CHECK(test::eventually([&] { return s.server.inflight() == 0; }));
  for (const std::size_t n : s.server.reactor_connections()) CHECK(n == 8 / reactors);
}

TEMPLATE_TEST_CASE("handlers blocked on one reactor grow its pool, and a quick call on another still gets through",
                   "[reactors][pool]", GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s(with_reactors(2, 2));
  release_at_end guard{s.arith.release};
  auto slow = geerpc::dial<TestType>(s.address);   // reactor 0
  auto quick = geerpc::dial<TestType>(s.address);  // reactor 1
  REQUIRE(s.server.reactor_connections() == std::vector<std::size_t>{1, 1});
  std::vector<test::future<int, TestType>> blocked;
  for (int i = 0; i < 6; ++i) blocked.push_back(slow.template async_call<int>("Arith.Late", Args{i, 0}));
  // Reactor 0 has one handler thread of its own; it grows one for each request waiting.
  REQUIRE(s.arith.started.wait_for_at_least(6, 10s));
  CHECK(quick.template call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{2, 3}) == 5);
  CHECK(s.server.thread_count() >= 2 + 6 + 1);  // six in handlers and a leader on reactor 0, two on 1
  s.arith.release.set();
  for (int i = 0; i < 6; ++i) CHECK(blocked[static_cast<std::size_t>(i)].get() == i * 1000);
}

TEMPLATE_TEST_CASE("stop() with handlers running on every reactor stops them all and ends every call",
                   "[reactors][shutdown]", GEERPC_ASYNC_TRANSPORTS) {
  const std::size_t reactors = GENERATE(2u, 4u);
  auto s = std::make_unique<test::arith_server<TestType>>(with_reactors(reactors));
  auto peers = dial_many<TestType>(s->address, 3 * reactors);
  std::atomic<int> ended{0};
  std::vector<std::jthread> callers;
  for (auto& peer : peers)
    callers.emplace_back([&] {
      (void)peer.template try_call<int>("Arith.WaitForStop", Args{1, 2});  // a reply or an error
      ended.fetch_add(1);
    });
  const int calls = static_cast<int>(peers.size());
  REQUIRE(s->arith.started.wait_for_at_least(calls, 10s));
  s->server.stop();
  CHECK(s->arith.stops_seen.value() == calls);
  CHECK(s->arith.finished.value() == calls);  // stop() returned after every handler had
  callers.clear();
  CHECK(ended.load() == calls);
  CHECK(s->server.reactor_connections() == std::vector<std::size_t>(reactors, 0));
}

TEMPLATE_TEST_CASE("two threads stopping a server with connections on every reactor both return once it has stopped",
                   "[reactors][shutdown]", GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s(with_reactors(4));
  auto peers = dial_many<TestType>(s.address, 4);
  std::vector<std::jthread> callers;
  for (auto& peer : peers)
    callers.emplace_back([&] { (void)peer.template try_call<int>("Arith.WaitForStop", Args{}); });
  REQUIRE(s.arith.started.wait_for_at_least(4, 10s));
  std::atomic<int> finished_when_returned{0};
  {
    std::vector<std::jthread> stoppers;
    for (int i = 0; i < 2; ++i)
      stoppers.emplace_back([&] {
        s.server.stop();
        finished_when_returned.fetch_add(s.arith.finished.value());
      });
  }
  CHECK(finished_when_returned.load() == 8);  // each stop() returned after all four handlers had
}

TEMPLATE_TEST_CASE("a handler on the last reactor may stop its own server", "[reactors][shutdown]",
                   GEERPC_ASYNC_TRANSPORTS) {
  stopper<TestType> impl;
  using api = geerpc::service<"Admin", geerpc::method<"Stop", &stopper<TestType>::stop>>;
  auto server = std::make_unique<geerpc::basic_server<TestType>>(with_reactors(2));
  impl.server = server.get();
  server->template add<api>(impl);
  const std::string address = server->listen("127.0.0.1:0");
  auto first = geerpc::dial<TestType>(address);   // reactor 0
  auto second = geerpc::dial<TestType>(address);  // reactor 1
  REQUIRE(server->reactor_connections() == std::vector<std::size_t>{1, 1});
  const auto r = second.template try_call<int>("Admin.Stop", Args{});
  CHECK(impl.stop_returned.wait());
  CHECK((r.has_value() || r.code() == geerpc::errc::connection_closed));
  server->stop();  // from outside: joins every thread of both reactors, the one that asked among them
  server.reset();
  CHECK(first.template try_call<int>("Admin.Stop", Args{}).code() == geerpc::errc::connection_closed);
}

TEMPLATE_TEST_CASE("shutdown() drains calls in flight on every reactor, then stops", "[reactors][shutdown]",
                   GEERPC_ASYNC_TRANSPORTS) {
  const std::size_t reactors = GENERATE(2u, 4u);
  test::arith_server<TestType> s(with_reactors(reactors));
  release_at_end guard{s.arith.release};
  auto peers = dial_many<TestType>(s.address, 2 * reactors);
  std::vector<test::future<int, TestType>> calls;
  for (std::size_t i = 0; i < peers.size(); ++i)
    calls.push_back(peers[i].template async_call<int>("Arith.Late", Args{static_cast<int>(i), 0}));
  const int count = static_cast<int>(calls.size());
  REQUIRE(s.arith.started.wait_for_at_least(count, 10s));
  std::jthread stopping([&] { s.server.shutdown(30s); });
  // Once the listener is shut, the drain has begun: dials are refused.
  CHECK(test::eventually([&] { return !geerpc::try_dial<TestType>(s.address, {.timeouts = {.connect = 1s}}); }));
  s.arith.release.set();
  for (int i = 0; i < count; ++i) CHECK(calls[static_cast<std::size_t>(i)].get() == i * 1000);
  stopping.join();
  CHECK(s.server.connection_count() == 0);
}

TEST_CASE("the debug page shows the reactors and the connections of each", "[reactors][debug_page]") {
  test::arith_server<geerpc::threaded> s(with_reactors(2));
  auto peers = dial_many<geerpc::threaded>(s.address, 3);  // 2 on reactor 0, 1 on reactor 1
  // The page's own connection is the fourth: reactor 1's second.
  const std::string json = test::http_get(s.address, "/debug/geerpc/stats.json");
  CHECK(json.find("\"reactors\":2") != std::string::npos);
  CHECK(json.find("\"busiest_reactor_connections\":2") != std::string::npos);
  CHECK(json.find("\"threads\":10") != std::string::npos);  // 8 handler threads and 2 leaders
  CHECK(test::http_get(s.address, "/debug/geerpc").find("connections per reactor") != std::string::npos);
}

}  // namespace reactors_test
