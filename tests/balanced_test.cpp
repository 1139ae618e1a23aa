// The balanced client (balanced_client.hpp) over real servers: how each select mode spreads calls,
// failover past dead and leaving servers (and only for idempotent methods once sent), back-off,
// connections closed when a server leaves the list, broadcast, and the errors of an empty list.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace balanced_test {

using namespace std::chrono_literals;

namespace {

// A server that says who it is. `Maybe` begins stopping its own server first when `crash` is set
// (the call's connection breaks after the request was sent); `Slow` fails at once when `fail` is
// set, else waits for its stop_token (a broadcast's cancel) up to 5 s; `Hold` waits for `release`.
struct Node {
  std::string name;
  bool crash = false;
  bool fail = false;
  std::size_t fleet_size = 0;
  geerpc::server* self = nullptr;
  std::atomic<int> calls{0};
  test::counter* slow_started = nullptr;  // shared by a fleet's nodes
  test::counter stops_seen;
  test::counter held;
  test::event release;

  std::string who() {
    ++calls;
    return name;
  }
  std::string maybe() {
    ++calls;
    if (crash && self != nullptr) self->stop();  // from a handler: begins the stop, closing connections
    return name;
  }
  std::string slow(std::stop_token stop) {
    ++calls;
    slow_started->add();
    if (fail) {  // once every node's handler runs, so that each has a call to be told to stop
      slow_started->wait_for_at_least(static_cast<int>(fleet_size), 2s);
      throw std::runtime_error(name + " failed");
    }
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait_for(lock, stop, 5s, [] { return false; });
    if (stop.stop_requested()) stops_seen.add();
    return name;
  }
  std::string hold() {
    held.add();
    release.wait();
    return name;
  }
};

using NodeApi = geerpc::service<"Node",                                 //
                                geerpc::method<"Who", &Node::who>,      //
                                geerpc::method<"Maybe", &Node::maybe>,  //
                                geerpc::method<"Slow", &Node::slow>,    //
                                geerpc::method<"Hold", &Node::hold>>;

struct fleet {
  test::counter slow_started;
  std::vector<std::unique_ptr<Node>> nodes;
  std::vector<std::unique_ptr<geerpc::server>> servers;
  std::vector<std::string> addresses;

  explicit fleet(int count) {
    for (int i = 0; i < count; ++i) {
      nodes.push_back(std::make_unique<Node>());
      nodes.back()->name = "n" + std::to_string(i);
      nodes.back()->slow_started = &slow_started;
      nodes.back()->fleet_size = static_cast<std::size_t>(count);
      servers.push_back(std::make_unique<geerpc::server>());
      nodes.back()->self = servers.back().get();
      servers.back()->add<NodeApi>(*nodes.back());
      addresses.push_back(servers.back()->listen("127.0.0.1:0"));
    }
  }
  std::shared_ptr<geerpc::static_discovery> discovery() const {
    return std::make_shared<geerpc::static_discovery>(addresses);
  }
};

// An address where nothing listens: a server started and stopped.
std::string dead_address() {
  geerpc::server gone;
  auto address = gone.listen("127.0.0.1:0");
  gone.stop();
  return address;
}

}  // namespace

TEST_CASE("balanced: round_robin takes each server in turn: random and least_inflight reach them all", "[balanced]") {
  fleet f(3);
  geerpc::balanced_client rr(f.discovery(), {.mode = geerpc::select_mode::round_robin});
  std::map<std::string, int> seen;
  for (int i = 0; i < 30; ++i) ++seen[rr.call<std::string>("Node.Who")];
  CHECK(seen == std::map<std::string, int>{{"n0", 10}, {"n1", 10}, {"n2", 10}});
  CHECK(rr.connection_count() == 3);

  for (const auto mode : {geerpc::select_mode::random, geerpc::select_mode::least_inflight}) {
    geerpc::balanced_client any(f.discovery(), {.mode = mode});
    std::map<std::string, int> reached;
    for (int i = 0; i < 200; ++i) ++reached[any.call<std::string>("Node.Who")];
    CHECK(reached.size() == 3);  // each has (2/3)^200 odds of being missed
  }
  // Typed stubs and asynchronous calls go the same way.
  CHECK(rr.call<NodeApi::fn<"Who">>().starts_with("n"));
  CHECK(rr.async_call<std::string>("Node.Who").get().starts_with("n"));
  CHECK(rr.async_call<NodeApi::fn<"Who">>(geerpc::with_timeout(1s)).get().starts_with("n"));
}

TEST_CASE("balanced: least_inflight sends nothing to a server busy with a call while another is idle", "[balanced]") {
  fleet f(2);
  geerpc::balanced_client lb(f.discovery(), {.mode = geerpc::select_mode::least_inflight});
  auto held = lb.async_call<std::string>("Node.Hold");  // one server has a call in flight
  REQUIRE(test::eventually([&] { return f.nodes[0]->held.value() + f.nodes[1]->held.value() == 1; }));
  const std::size_t busy = f.nodes[0]->held.value() == 1 ? 0 : 1;
  const std::string idle_name = f.nodes[1 - busy]->name;
  for (int i = 0; i < 20; ++i) CHECK(lb.call<std::string>("Node.Who") == idle_name);
  CHECK(f.nodes[busy]->calls == 0);
  f.nodes[busy]->release.set();
  CHECK(held.get() == f.nodes[busy]->name);
}

TEST_CASE("balanced: a dead server is left out after one failed dial, for its back-off, and calls succeed elsewhere",
          "[balanced]") {
  fleet f(2);
  test::listener silent;  // accepts (into its backlog) and never answers: each dial costs a connect timeout
  std::vector<std::string> listed{silent.address(), dead_address(), f.addresses[0], f.addresses[1]};
  geerpc::balanced_client lb(
      std::make_shared<geerpc::static_discovery>(listed),
      {.mode = geerpc::select_mode::round_robin, .client = {.timeouts = {.connect = 100ms}}, .backoff = 10s});
  for (int i = 0; i < 20; ++i) CHECK(lb.call<std::string>(geerpc::with_timeout(2s), "Node.Who").starts_with("n"));
  CHECK(f.nodes[0]->calls + f.nodes[1]->calls == 20);
  // The silent server was dialled once: one connection waits in its backlog, no second one.
  int dials = 0;
  for (;;) {
    pollfd p{silent.fd(), POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) break;
    const int fd = ::accept4(silent.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) break;
    ::close(fd);
    ++dials;
  }
  CHECK(dials == 1);
}

TEST_CASE("balanced: every server down: the call fails with the last error, within its deadline", "[balanced]") {
  std::vector<std::string> listed{dead_address(), dead_address()};
  geerpc::balanced_client lb(std::make_shared<geerpc::static_discovery>(listed));
  const auto r = lb.try_call<std::string>(geerpc::with_timeout(1s), "Node.Who");
  CHECK(r.code() == geerpc::errc::connect_failed);
  // Both are left out now; the one back soonest is still tried rather than failing blind.
  const auto again = lb.try_call<std::string>(geerpc::with_timeout(1s), "Node.Who");
  CHECK(again.code() == geerpc::errc::connect_failed);
}

TEST_CASE("balanced: a connection broken after the request was sent moves on only for an idempotent method",
          "[balanced]") {
  for (const bool idempotent : {true, false}) {
    INFO("idempotent: " << idempotent);
    fleet f(2);
    f.nodes[0]->crash = true;
    geerpc::balanced_options opts{.mode = geerpc::select_mode::round_robin};
    if (idempotent) opts.idempotent = {"Node.Maybe"};
    geerpc::balanced_client lb(f.discovery(), opts);
    const auto r = lb.try_call<std::string>(geerpc::with_timeout(2s), "Node.Maybe");  // round robin: n0 first
    CHECK(f.nodes[0]->calls == 1);
    if (idempotent) {
      CHECK(r.value() == "n1");
    } else {
      CHECK(r.code() == geerpc::errc::connection_closed);
      CHECK(f.nodes[1]->calls == 0);
    }
  }
}

TEST_CASE("balanced: a server that shut down is left out, and calls move on, idempotent or not", "[balanced]") {
  fleet f(2);
  geerpc::balanced_client lb(f.discovery(), {.mode = geerpc::select_mode::round_robin});
  CHECK(lb.call<std::string>("Node.Who") == "n0");
  CHECK(lb.call<std::string>("Node.Who") == "n1");  // both connected
  f.servers[0]->shutdown(1s);
  // Once the client has read the goaway (a call racing it may find the connection closing, which
  // only an idempotent method survives), every call goes to n1: n0's redial fails, and n0 is left out.
  REQUIRE(test::eventually([&] { return lb.connection_count() == 1; }));
  for (int i = 0; i < 6; ++i) CHECK(lb.call<std::string>(geerpc::with_timeout(2s), "Node.Who") == "n1");
}

TEST_CASE("balanced: a server that leaves the list gets no new calls, and its connection closes once its calls end",
          "[balanced]") {
  fleet f(2);
  auto listed = f.discovery();
  geerpc::balanced_client lb(listed, {.mode = geerpc::select_mode::round_robin});
  auto held = lb.async_call<std::string>("Node.Hold");  // n0, first in turn
  REQUIRE(f.nodes[0]->held.wait_for_at_least(1));
  listed->update({f.addresses[1]});
  for (int i = 0; i < 5; ++i) CHECK(lb.call<std::string>("Node.Who") == "n1");
  CHECK(f.servers[0]->connection_count() == 1);  // its call is still running
  f.nodes[0]->release.set();
  CHECK(held.get() == "n0");
  CHECK(lb.call<std::string>("Node.Who") == "n1");  // the next call closes what retired
  CHECK(test::eventually([&] { return f.servers[0]->connection_count() == 0; }));
  CHECK(f.servers[1]->connection_count() == 1);
}

TEST_CASE("balanced: broadcast succeeds only if every server does: the first failure cancels the others",
          "[balanced]") {
  fleet f(3);
  geerpc::balanced_client lb(f.discovery());
  const auto all = lb.broadcast<std::string>(geerpc::with_timeout(2s), "Node.Who");
  REQUIRE(all);
  REQUIRE(all.replies.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(all.replies[i].address == f.addresses[i]);
    CHECK(all.replies[i].value.value() == "n" + std::to_string(i));
  }

  f.nodes[1]->fail = true;
  const auto failed = lb.broadcast<std::string>(geerpc::with_timeout(3s), "Node.Slow");
  CHECK(failed.outcome.code() == geerpc::errc::remote_error);
  CHECK(failed.outcome.message() == "n1 failed");
  REQUIRE(failed.replies.size() == 3);
  CHECK(failed.replies[0].value.code() == geerpc::errc::canceled);
  CHECK(failed.replies[2].value.code() == geerpc::errc::canceled);
  CHECK(f.nodes[0]->stops_seen.wait_for_at_least(1));  // their handlers were told
  CHECK(f.nodes[2]->stops_seen.wait_for_at_least(1));
}

TEST_CASE("balanced: no servers is an error, never a silent success: a discovery's error reaches the caller",
          "[balanced]") {
  geerpc::balanced_client none(std::make_shared<geerpc::static_discovery>(std::vector<std::string>{}));
  const auto call = none.try_call<int>("Node.Who");
  CHECK(call.code() == geerpc::errc::no_servers);
  CHECK(call.message() == "rpc client: call: the discovery lists no servers");
  const auto all = none.broadcast<void>("Node.Who");
  CHECK_FALSE(all);
  CHECK(all.outcome.code() == geerpc::errc::no_servers);
  CHECK(all.replies.empty());
  CHECK(none.async_call<int>("Node.Who").try_get().code() == geerpc::errc::no_servers);

  struct broken final : geerpc::discovery {
    geerpc::result<geerpc::server_list> servers() override {
      return geerpc::error{geerpc::make_error_code(geerpc::errc::no_servers), "registry: unreachable, no list yet"};
    }
  };
  geerpc::balanced_client lost(std::make_shared<broken>());
  CHECK(lost.try_call<int>("Node.Who").message() == "registry: unreachable, no list yet");
  CHECK_THROWS_AS(geerpc::balanced_client(nullptr), std::invalid_argument);
}

TEST_CASE("balanced: over the blocking transport, synchronous calls and broadcast", "[balanced]") {
  fleet f(2);
  geerpc::basic_balanced_client<geerpc::blocking> lb(f.discovery());
  CHECK(lb.call<std::string>("Node.Who") == "n0");
  CHECK(lb.call<std::string>("Node.Who") == "n1");
  CHECK(lb.broadcast<std::string>("Node.Who").replies.size() == 2);
}

TEST_CASE("balanced: a call whose deadline has passed leaves no server out", "[balanced]") {
  fleet f(2);
  geerpc::balanced_client lb(f.discovery(), {.mode = geerpc::select_mode::round_robin, .backoff = 10s});
  for (int i = 0; i < 4; ++i)
    CHECK(lb.try_call<std::string>(geerpc::with_timeout(-1ms), "Node.Who").code() == geerpc::errc::deadline_exceeded);
  std::map<std::string, int> seen;
  for (int i = 0; i < 4; ++i) ++seen[lb.call<std::string>(geerpc::with_timeout(2s), "Node.Who")];
  CHECK(seen == std::map<std::string, int>{{"n0", 2}, {"n1", 2}});
}

TEST_CASE("balanced: a call refused by a throwing interceptor leaves no call counted, so a retired connection closes",
          "[balanced]") {
  fleet f(2);
  auto listed = f.discovery();
  geerpc::balanced_client lb(listed, {.mode = geerpc::select_mode::round_robin,
                                      .client = {.interceptors = {{.before = [](geerpc::client_call& call) {
                                                   if (call.method == "Node.Hold")
                                                     throw std::runtime_error("refused here");
                                                 }}}}});
  CHECK(lb.call<std::string>("Node.Who") == "n0");
  CHECK_THROWS_AS(lb.call<std::string>("Node.Hold"), std::runtime_error);        // n1: refused before it counted
  CHECK_THROWS_AS(lb.async_call<std::string>("Node.Hold"), std::runtime_error);  // n0
  CHECK(lb.call<std::string>("Node.Who") == "n1");
  listed->update({});  // both leave: their connections retire, and close once nothing runs on them
  CHECK(lb.try_call<std::string>("Node.Who").code() == geerpc::errc::no_servers);
  CHECK(
      test::eventually([&] { return f.servers[0]->connection_count() == 0 && f.servers[1]->connection_count() == 0; }));
}

TEST_CASE("balanced: a completion callback may call the balanced client again, while the list changes", "[balanced]") {
  fleet f(2);
  auto listed = f.discovery();
  geerpc::balanced_client lb(listed, {.mode = geerpc::select_mode::round_robin});
  test::counter done;
  std::atomic<int> chained{0};
  for (int i = 0; i < 50; ++i) {
    lb.async_call<std::string>("Node.Who").then([&](geerpc::result<std::string> first) {
      if (first)
        lb.async_call<std::string>("Node.Who").then([&](geerpc::result<std::string> second) {
          if (second) ++chained;
          done.add();
        });
      else
        done.add();
    });
    if (i == 25) listed->update({f.addresses[1]});
  }
  REQUIRE(done.wait_for_at_least(50));
  CHECK(chained >= 25);  // the calls made before the list changed may end with their server's connection
  listed->update({f.addresses[0], f.addresses[1]});
  CHECK(lb.call<std::string>(geerpc::with_timeout(2s), "Node.Who").starts_with("n"));
}

TEST_CASE(
    "balanced: while the discovery's version stays the same its list is not asked for: a new version is "
    "taken at the next call: version 0 asks at every call",
    "[balanced]") {
  fleet f(2);
  struct versioned final : geerpc::discovery {
    std::mutex mutex;
    geerpc::server_list list;
    std::atomic<std::uint64_t> number{1};
    std::atomic<int> asked{0};
    geerpc::result<geerpc::server_list> servers() override {
      ++asked;
      std::lock_guard lock(mutex);
      return list;
    }
    std::uint64_t version() const noexcept override { return number.load(); }
    void set(std::vector<std::string> addresses) {
      std::lock_guard lock(mutex);
      list = std::make_shared<const std::vector<std::string>>(std::move(addresses));
    }
  };
  auto source = std::make_shared<versioned>();
  source->set({f.addresses[0]});
  geerpc::balanced_client lb(source);
  for (int i = 0; i < 5; ++i) CHECK(lb.call<std::string>("Node.Who") == "n0");
  CHECK(source->asked == 1);
  source->set({f.addresses[1]});  // the version says nothing changed: not looked at
  CHECK(lb.call<std::string>("Node.Who") == "n0");
  CHECK(source->asked == 1);
  source->number = 2;
  CHECK(lb.call<std::string>("Node.Who") == "n1");
  CHECK(lb.call<std::string>("Node.Who") == "n1");
  CHECK(source->asked == 2);
  CHECK(lb.broadcast<std::string>("Node.Who").replies.at(0).value.value() == "n1");  // broadcast always asks
  CHECK(source->asked == 3);
  source->number = 0;
  for (int i = 0; i < 3; ++i) CHECK(lb.call<std::string>("Node.Who") == "n1");
  CHECK(source->asked == 6);
}

}  // namespace balanced_test
