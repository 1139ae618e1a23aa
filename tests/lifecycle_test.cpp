// Starting and stopping: clients closed while in use, servers stopped twice at once or from inside
// a handler, handshake timeouts racing the peer. These are regression tests for races found in
// review; they prove most under ASan and TSan, which CI runs them with.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace lifecycle_test {

using namespace std::chrono_literals;
using test::Args;

TEMPLATE_TEST_CASE("close() while another thread is in a call fails that call and frees nothing under it",
                   "[lifecycle][shutdown]", GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s;
  for (int round = 0; round < 20; ++round) {
    auto client = geerpc::dial<TestType>(s.address);
    std::atomic<int> closed{0};
    std::jthread caller([&] {
      if (client.template try_call<int>("Arith.WaitForStop", Args{}).code() == geerpc::errc::connection_closed)
        closed.fetch_add(1);
    });
    REQUIRE(s.arith.started.wait_for_at_least(round + 1));
    client.close();
    caller.join();
    CHECK(closed.load() == 1);
    CHECK(client.template try_call<int>("Arith.Sum", Args{}).code() == geerpc::errc::connection_closed);
  }
}

TEMPLATE_TEST_CASE("handshake timeouts racing the transport's own close leave the server serving",
                   "[lifecycle][handshake]", GEERPC_TRANSPORTS) {
  geerpc::server_options opts;
  opts.timeouts.handshake = 1ms;
  test::arith_server<TestType> s(opts);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::unique_ptr<test::raw_peer>> silent;
    for (int i = 0; i < 10; ++i) silent.push_back(std::make_unique<test::raw_peer>(s.address));
    for (auto& peer : silent) CHECK(peer->closed_by_peer());
  }
  // A peer that does say hello in time is served. 1 ms is short, so send the hello straight away.
  test::raw_peer prompt(s.address);
  prompt.send_hello();
  auto reply = prompt.read_hello_reply();
  if (reply) CHECK(reply->accepted);  // on a loaded machine even this one may be too slow for 1 ms
}

TEMPLATE_TEST_CASE("two threads stopping a server at once both return only when it has stopped", "[lifecycle]",
                   GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  std::jthread caller([&] { (void)client.template try_call<int>("Arith.WaitForStop", Args{}); });
  REQUIRE(s.arith.started.wait_for_at_least(1));

  std::atomic<int> finished_when_returned{0};
  {
    std::vector<std::jthread> stoppers;
    for (int i = 0; i < 2; ++i)
      stoppers.emplace_back([&] {
        s.server.stop();
        finished_when_returned.fetch_add(s.arith.finished.value());
      });
  }
  CHECK(finished_when_returned.load() == 2);  // each stop() returned after the handler had returned
}

namespace {
// Records which threads ran its quick calls; `late` ignores its stop_token until released.
struct PoolProbe {
  std::mutex mutex;
  std::vector<std::thread::id> quick_ran_on;
  std::thread::id late_ran_on;
  test::counter late_started;
  test::event release;
  int quick(const Args&) {
    std::lock_guard lock(mutex);
    quick_ran_on.push_back(std::this_thread::get_id());
    return 0;
  }
  int late(const Args&) {
    {
      std::lock_guard lock(mutex);
      late_ran_on = std::this_thread::get_id();
    }
    late_started.add();
    (void)release.wait();
    return 0;
  }
};
using PoolProbeApi =
    geerpc::service<"PoolProbe", geerpc::method<"Quick", &PoolProbe::quick>, geerpc::method<"Late", &PoolProbe::late>>;
}  // namespace

// A stop() from outside joins the server's threads one after another while a handler still runs,
// and a thread started meanwhile may get the id of one it joined already (glibc gives a new thread
// the stack, and so the id, of the thread joined last). Such a thread is not the server's: a stop()
// from it must wait for the stop, not return at once as one from a handler does. The engine is built
// by hand, as basic_server does, to ask it directly.
TEMPLATE_TEST_CASE("a thread that reuses the id of a server thread stop() has joined is not taken for the server's",
                   "[lifecycle]", GEERPC_TRANSPORTS) {
  using link = geerpc::detail::server_link<TestType>;
  int exercised = 0;
  for (int round = 0; round < 6 && exercised == 0; ++round) {
    PoolProbe probe;
    geerpc::detail::dispatcher handlers;
    geerpc::detail::server_context context;
    context.config.set_handlers(&handlers, geerpc::detail::codec_ids::of(geerpc::codecs<geerpc::binary_codec>{}));
    handlers.template add<geerpc::binary_codec, PoolProbeApi>(&probe);
    std::string bound;
    auto engine = link::listen(context, "127.0.0.1:0", bound);
    {
      // Quick calls on one connection (the blocking server's first thread), the late one on another.
      auto quick = geerpc::dial<TestType>(bound);
      // One more each round: the late call lands on another thread of the pool (the leader's turn),
      // so that in some round it is not the first thread stop() joins.
      for (int i = 0; i < 16 + round; ++i) REQUIRE(quick.template try_call<int>("PoolProbe.Quick", Args{}).has_value());
      auto late = geerpc::dial<TestType>(bound);
      std::jthread caller([&] { (void)late.template try_call<int>("PoolProbe.Late", Args{}); });
      REQUIRE(probe.late_started.wait_for_at_least(1));
      std::vector<std::thread::id> others;  // server threads that will be joined while `late` runs
      {
        std::lock_guard lock(probe.mutex);
        for (auto id : probe.quick_ran_on)
          if (id != probe.late_ran_on) others.push_back(id);
      }
      std::jthread stopper([&] { link::stop(*engine); });  // joins every thread but the late one's
      int taken_for_own = 0;
      bool reused = false;
      struct sighting {
        std::thread::id id;
        bool own = false;
      } seen[2];
      const auto tally = [&](const sighting& s) {
        taken_for_own += s.own ? 1 : 0;
        // That id's thread has been joined: only then can a new thread have it.
        reused = reused || std::find(others.begin(), others.end(), s.id) != others.end();
      };
      // Each new thread starts before the one before it is joined, so that it does not get that
      // one's stack back: it gets the stack freed last by anyone else, a server thread's once
      // stop() has joined one.
      std::thread previous;
      int last = 0;
      const auto give_up = std::chrono::steady_clock::now() + 250ms;  // stop() may have come to the late one first
      for (int i = 0; !reused && std::chrono::steady_clock::now() < give_up; ++i) {
        sighting& mine = seen[i % 2];
        std::thread next([&mine, &engine] {
          mine.id = std::this_thread::get_id();
          mine.own = link::on_own_thread(*engine);
        });
        if (previous.joinable()) {
          previous.join();
          tally(seen[(i + 1) % 2]);
        }
        previous = std::move(next);
        last = i;
      }
      previous.join();
      tally(seen[last % 2]);
      CHECK(taken_for_own == 0);
      exercised += reused || taken_for_own > 0 ? 1 : 0;
      probe.release.set();
    }
    context.connections.wait_empty();
  }
  if (exercised == 0) WARN("no new thread got the id of a joined server thread: nothing was tested");
}

namespace {
struct Admin {
  geerpc::server* server = nullptr;
  test::event stop_returned;
  int shutdown(const Args&) {
    server->stop();  // starts the stop; it cannot join the thread it runs on
    stop_returned.set();
    return 1;
  }
};
using AdminApi = geerpc::service<"Admin", geerpc::method<"Shutdown", &Admin::shutdown>>;
}  // namespace

TEST_CASE("a handler may stop its own server", "[lifecycle]") {
  Admin admin;
  auto server = std::make_unique<geerpc::server>();
  admin.server = server.get();
  server->add<AdminApi>(admin);
  auto client = geerpc::dial(server->listen("127.0.0.1:0"));
  auto r = client.try_call<int>("Admin.Shutdown", Args{});
  CHECK(admin.stop_returned.wait());
  // The reply may or may not have left before the connection closed; either way the call ended.
  CHECK((r.has_value() || r.code() == geerpc::errc::connection_closed));
  server->stop();  // from outside: joins every thread, including the one that asked
  server.reset();
  CHECK(client.try_call<int>("Admin.Shutdown", Args{}).code() == geerpc::errc::connection_closed);
}

TEST_CASE("a handler may stop its own blocking server", "[lifecycle]") {
  struct BlockingAdmin {
    geerpc::basic_server<geerpc::blocking>* server = nullptr;
    int shutdown(const Args&) {
      server->stop();
      return 1;
    }
  } admin;
  using Api = geerpc::service<"Admin", geerpc::method<"Shutdown", &BlockingAdmin::shutdown>>;
  geerpc::basic_server<geerpc::blocking> server;
  admin.server = &server;
  server.add<Api>(admin);
  auto client = geerpc::dial<geerpc::blocking>(server.listen("127.0.0.1:0"));
  auto r = client.try_call<int>("Admin.Shutdown", Args{});
  CHECK((r.has_value() || r.code() == geerpc::errc::connection_closed));
  server.stop();
}

}  // namespace lifecycle_test
