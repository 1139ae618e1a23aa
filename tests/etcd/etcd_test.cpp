// geerpc::etcd against a real etcd (Debian's etcd-server), each test with an etcd of its own
// (etcd_process.hpp): the gateway's calls, registration and discovery, and a balanced client over
// servers that come, go, die and outlive an etcd restart. Waits are on events (a list changed, a
// registration made); the bounds are generous for a loaded two-core machine.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <geerpc/etcd.hpp>
#include <geerpc/geerpc.hpp>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../catch.hpp"
#include "etcd_process.hpp"
#include "fake_etcd.hpp"

using namespace std::chrono_literals;

namespace {

using test::fake_etcd;
using test::http_200;

struct Who {
  std::string address;
  std::atomic<int> calls{0};
  std::string am() {
    ++calls;
    return address;
  }
};
using WhoApi = geerpc::service<"Who", geerpc::method<"Am", &Who::am>>;

// A server in this process, registered in etcd.
struct node {
  Who who;
  geerpc::server server;
  std::unique_ptr<geerpc::etcd::registration> entry;

  node(const geerpc::etcd::options& etcd, std::chrono::seconds ttl) {
    server.add<WhoApi>(who);
    who.address = server.listen("127.0.0.1:0");
    entry = std::make_unique<geerpc::etcd::registration>("Who", who.address,
                                                         geerpc::etcd::registration_options{.etcd = etcd, .ttl = ttl});
    REQUIRE(entry->wait_registered(5s));
  }
};

// A server in a process of its own (server_main.cpp), which the test can SIGKILL.
class child_server {
 public:
  child_server(const std::string& endpoint, const std::string& ttl) {
    int to_child[2];
    int from_child[2];
    REQUIRE(::pipe2(to_child, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(from_child, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    std::vector<std::string> args{GEERPC_TEST_ETCD_SERVER, endpoint, "/geerpc", ttl};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    REQUIRE(posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
    ::close(to_child[0]);
    ::close(from_child[1]);
    stdin_ = to_child[1];
    FILE* out = ::fdopen(from_child[0], "r");
    REQUIRE(out != nullptr);
    char line[256] = {};
    const bool got = std::fgets(line, sizeof line, out) != nullptr;  // the child's bounded wait ends it
    std::fclose(out);
    REQUIRE(got);
    std::string text(line);
    REQUIRE(text.rfind("ready ", 0) == 0);
    address_ = text.substr(6, text.find('\n') - 6);
  }
  child_server(const child_server&) = delete;
  child_server& operator=(const child_server&) = delete;
  ~child_server() {
    if (stdin_ >= 0) ::close(stdin_);  // asks it to end
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  const std::string& address() const { return address_; }
  void kill() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  std::string address_;
};

std::set<std::string> as_set(const geerpc::server_list& list) {
  return list ? std::set<std::string>(list->begin(), list->end()) : std::set<std::string>{};
}

// Waits until the discovery lists exactly `wanted`; whether it did within `timeout`.
bool wait_for_list(geerpc::etcd::discovery& source, const std::set<std::string>& wanted,
                   std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  auto seen = source.wait_for_change(nullptr, 0ms);
  while (as_set(seen) != wanted) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left <= 0ms) return false;
    seen = source.wait_for_change(seen, left);
  }
  return true;
}

// Sets the flag that ends the test's callers, on every way out of the test (declared after them,
// so it runs before they are joined).
struct test_done_guard {
  std::atomic<bool>& done;
  ~test_done_guard() { done = true; }
};

// Waits (yielding) until done() holds, at most `timeout`: for progress made by other threads' calls.
template <class F>
bool progress(F done, std::chrono::milliseconds timeout = 5000ms) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

TEST_CASE("the gateway puts and lists by prefix and keeps a lease alive and revokes it and watches", "[etcd]") {
  test::etcd_process etcd;
  geerpc::etcd::gateway gw(etcd.options());
  gw.put("/t/a", "1");
  gw.put("/t/b", "2");
  gw.put("/u/c", "3");
  auto listed = gw.range("/t/");
  REQUIRE(listed.kvs.size() == 2);
  CHECK(listed.kvs[0].key == "/t/a");
  CHECK(listed.kvs[1].value == "2");
  CHECK(listed.revision > 0);

  const auto lease = gw.grant(5s);
  gw.put("/t/leased", "x", lease);
  CHECK(gw.keep_alive(lease) > 0);
  gw.revoke(lease);
  CHECK(gw.keep_alive(lease) == 0);  // etcd no longer has it
  CHECK(gw.range("/t/").kvs.size() == 2);
  CHECK_NOTHROW(gw.revoke(lease));  // a lease already gone is not an error

  // A watch from the revision after the listing sees the later changes, and stops when asked.
  std::vector<geerpc::etcd::watch_event> seen;
  std::stop_source stop;
  std::jthread watcher([&] {
    gw.watch(
        "/t/", listed.revision + 1,
        [&](const std::vector<geerpc::etcd::watch_event>& batch) {
          seen.insert(seen.end(), batch.begin(), batch.end());
          if (seen.size() >= 3) stop.request_stop();
        },
        stop.get_token());
  });
  gw.remove("/t/a");
  watcher.join();  // ends once it has seen the three changes made since the listing
  REQUIRE(seen.size() == 3);
  CHECK((seen[0].key == "/t/leased" && !seen[0].deleted && seen[0].value == "x"));
  CHECK((seen[1].key == "/t/leased" && seen[1].deleted));
  CHECK((seen[2].key == "/t/a" && seen[2].deleted));
}

TEST_CASE("etcd answers errors as errors: a bad request and an unreachable endpoint", "[etcd]") {
  test::etcd_process etcd;
  geerpc::etcd::gateway gw(etcd.options());
  CHECK_THROWS_WITH(gw.put("", "x"), Catch::Contains("HTTP") && Catch::Contains("key is not provided"));

  const auto closed = "http://127.0.0.1:" + std::to_string(test::free_loopback_port());
  geerpc::etcd::gateway nowhere({.endpoints = {closed}, .request_timeout = 300ms});
  CHECK_THROWS_WITH(nowhere.range("/"), Catch::Contains("unreachable"));
  // The first endpoint that answers serves the call.
  geerpc::etcd::gateway second({.endpoints = {closed, etcd.endpoint()}, .request_timeout = 300ms});
  CHECK_NOTHROW(second.range("/"));
}

TEST_CASE("servers registered in etcd are discovered and spread round-robin and leave when withdrawn", "[etcd]") {
  test::etcd_process etcd;
  std::vector<std::unique_ptr<node>> nodes;
  for (int i = 0; i < 3; ++i) nodes.push_back(std::make_unique<node>(etcd.options(), 10s));
  auto source =
      std::make_shared<geerpc::etcd::discovery>("Who", geerpc::etcd::discovery_options{.etcd = etcd.options()});
  REQUIRE(wait_for_list(*source, {nodes[0]->who.address, nodes[1]->who.address, nodes[2]->who.address}, 5s));

  geerpc::balanced_client client(source, {.mode = geerpc::select_mode::round_robin});
  std::map<std::string, int> spread;
  for (int i = 0; i < 30; ++i) ++spread[client.call<std::string>(geerpc::with_timeout(2s), "Who.Am")];
  REQUIRE(spread.size() == 3);
  for (const auto& [address, count] : spread) CHECK(count == 10);

  nodes[1]->entry->withdraw();  // revoked: the watch drops it at once, not after the TTL
  REQUIRE(wait_for_list(*source, {nodes[0]->who.address, nodes[2]->who.address}, 2s));
  const int before = nodes[1]->who.calls;
  for (int i = 0; i < 10; ++i) client.call<std::string>(geerpc::with_timeout(2s), "Who.Am");
  CHECK(nodes[1]->who.calls == before);
}

TEST_CASE("a server killed with SIGKILL leaves the list within its TTL and a second and idempotent calls all succeed",
          "[etcd]") {
  test::etcd_process etcd;
  std::vector<std::unique_ptr<child_server>> servers;
  std::set<std::string> all;
  for (int i = 0; i < 3; ++i) {
    servers.push_back(std::make_unique<child_server>(etcd.endpoint(), "2"));
    all.insert(servers.back()->address());
  }
  auto source =
      std::make_shared<geerpc::etcd::discovery>("Who", geerpc::etcd::discovery_options{.etcd = etcd.options()});
  REQUIRE(wait_for_list(*source, all, 5s));
  geerpc::balanced_client client(source, {.mode = geerpc::select_mode::round_robin, .idempotent = {"Who.Am"}});

  // Calls from two threads all along, until the killed server has left the list.
  std::atomic<bool> done{false};
  std::atomic<int> failed{0};
  std::atomic<int> made{0};
  std::mutex last_mutex;
  std::string last_failure;
  const std::string victim = servers[1]->address();
  std::vector<std::jthread> callers;
  const test_done_guard guard{done};  // a failed REQUIRE ends the callers too
  for (int t = 0; t < 2; ++t) {
    callers.emplace_back([&] {
      for (int i = 0; i < 100000 && !done; ++i) {
        auto reply = client.try_call<std::string>(geerpc::with_timeout(2s), "Who.Am");
        ++made;
        if (!reply) {
          ++failed;
          std::lock_guard lock(last_mutex);
          last_failure = reply.message();
        }
      }
    });
  }
  servers[1]->kill();
  const auto killed = std::chrono::steady_clock::now();
  all.erase(victim);
  const bool left = wait_for_list(*source, all, 6s);
  const auto after = std::chrono::steady_clock::now() - killed;
  done = true;
  callers.clear();
  REQUIRE(left);
  CHECK(after < 3s);  // the lease's TTL (2 s) and a second
  CHECK(made > 0);
  INFO(last_failure);
  CHECK(failed == 0);
  // From now on the dead server is not listed: every call goes to the two left.
  std::set<std::string> answered;
  for (int i = 0; i < 10; ++i) answered.insert(client.call<std::string>(geerpc::with_timeout(2s), "Who.Am"));
  CHECK(answered == all);
}

TEST_CASE("a graceful shutdown takes a server out with no failed call", "[etcd]") {
  test::etcd_process etcd;
  std::vector<std::unique_ptr<node>> nodes;
  for (int i = 0; i < 3; ++i) nodes.push_back(std::make_unique<node>(etcd.options(), 10s));
  auto source =
      std::make_shared<geerpc::etcd::discovery>("Who", geerpc::etcd::discovery_options{.etcd = etcd.options()});
  REQUIRE(wait_for_list(*source, {nodes[0]->who.address, nodes[1]->who.address, nodes[2]->who.address}, 5s));
  // Not idempotent: no call may be retried after it was sent.
  geerpc::balanced_client client(source, {.mode = geerpc::select_mode::round_robin});
  std::atomic<bool> done{false};
  std::atomic<int> failed{0};
  std::mutex last_mutex;
  std::string last_failure;
  std::atomic<int> made{0};
  std::array<std::atomic<int>, 2> made_by{};  // per caller
  std::vector<std::jthread> callers;
  const test_done_guard guard{done};  // a failed REQUIRE ends the callers too
  for (std::size_t t = 0; t < made_by.size(); ++t) {
    callers.emplace_back([&, t] {
      for (int i = 0; i < 100000 && !done; ++i) {
        auto reply = client.try_call<std::string>(geerpc::with_timeout(2s), "Who.Am");
        ++made;
        ++made_by[t];
        if (!reply) {
          ++failed;
          std::lock_guard lock(last_mutex);
          last_failure = reply.message();
        }
      }
    });
  }
  REQUIRE(progress([&] { return nodes[1]->who.calls >= 20; }));  // it is serving the callers
  // Withdrawn first, then shut down once clients have stopped choosing it (their watch saw the
  // revoke, and each caller has begun a call since): a request crossing the server's goaway could
  // otherwise meet the connection's close (docs/protocol.md 4.9).
  nodes[1]->entry->withdraw();
  REQUIRE(wait_for_list(*source, {nodes[0]->who.address, nodes[2]->who.address}, 2s));
  for (auto& count : made_by) {
    const int seen = count;
    REQUIRE(progress([&] { return count >= seen + 2; }));
  }
  nodes[1]->server.shutdown(1s);
  const int served = nodes[1]->who.calls;
  const int made_then = made;
  REQUIRE(progress([&] { return made >= made_then + 50; }));  // calls go on, on the two left
  done = true;
  callers.clear();
  INFO(last_failure);
  CHECK(failed == 0);
  CHECK(nodes[1]->who.calls == served);
  CHECK(as_set(source->servers().value()) == std::set<std::string>{nodes[0]->who.address, nodes[2]->who.address});
}

TEST_CASE("etcd restarted: clients route on their last list meanwhile and servers register again", "[etcd]") {
  test::etcd_process etcd;
  std::vector<std::unique_ptr<node>> nodes;
  std::set<std::string> all;
  for (int i = 0; i < 3; ++i) {
    nodes.push_back(std::make_unique<node>(etcd.options(), 2s));
    all.insert(nodes.back()->who.address);
  }
  auto source =
      std::make_shared<geerpc::etcd::discovery>("Who", geerpc::etcd::discovery_options{.etcd = etcd.options()});
  REQUIRE(wait_for_list(*source, all, 5s));
  geerpc::balanced_client client(source, {.mode = geerpc::select_mode::round_robin});

  etcd.stop();
  // The watch notices; the last list stays, and calls go on over it, to every server.
  REQUIRE(source->wait_watching(false, 5s));
  std::set<std::string> answered;
  for (int i = 0; i < 9; ++i) answered.insert(client.call<std::string>(geerpc::with_timeout(2s), "Who.Am"));
  CHECK(answered == all);
  CHECK(as_set(source->servers().value()) == all);

  // Back without its data (the worst case): the leases are gone, so each server registers again,
  // and the discovery lists all three again.
  etcd.restart(false);
  for (auto& n : nodes) {
    INFO(n->entry->last_error());
    CHECK(n->entry->wait_registrations(2, 10s));
  }
  CHECK(wait_for_list(*source, all, 10s));
  answered.clear();
  for (int i = 0; i < 9; ++i) answered.insert(client.call<std::string>(geerpc::with_timeout(2s), "Who.Am"));
  CHECK(answered == all);
}

TEST_CASE("discovery without any etcd: a clear error soon and no hang", "[etcd]") {
  const auto closed = "http://127.0.0.1:" + std::to_string(test::free_loopback_port());
  auto source = std::make_shared<geerpc::etcd::discovery>(
      "Who", geerpc::etcd::discovery_options{.etcd = {.endpoints = {closed}, .request_timeout = 300ms}});
  auto listed = source->servers();
  REQUIRE_FALSE(listed);
  CHECK(listed.code() == geerpc::errc::no_servers);
  CHECK_THAT(listed.message(), Catch::Contains("etcd") && Catch::Contains("unreachable"));
  geerpc::balanced_client client(source);
  auto reply = client.try_call<std::string>(geerpc::with_timeout(1s), "Who.Am");
  REQUIRE_FALSE(reply);
  CHECK(reply.code() == geerpc::errc::no_servers);
  CHECK_THROWS_AS(geerpc::etcd::discovery("a/b"), std::invalid_argument);
}

TEST_CASE("answers etcd would never give are errors and never crash the caller", "[etcd]") {
  const std::string huge_ttl = R"({"result":{"TTL":"99999999999999999999999"}})";
  fake_etcd fake({http_200("not json"), http_200("[1,2]"), http_200(R"({"result":{"TTL":"abc"}})"), http_200(huge_ttl),
                  http_200(R"({"result":{"TTL":{"x":1}}})"), http_200(R"({"kvs":[{"key":"!!!!","value":"eA=="}]})"),
                  http_200(R"({"kvs":"nope"})"), http_200(R"({"ID":"0"})"),
                  "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
                  // A head that promises 17 MiB: refused before any of it is read.
                  "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 17825792\r\n\r\n{",
                  // Watches: a line that is not JSON, an error object, a compaction.
                  http_200("{\"result\":{\"created\":true}}\nnot json\n"), http_200("{\"error\":\"boom\"}\n"),
                  http_200(R"({"result":{"compact_revision":"5"}})"
                           "\n")});
  geerpc::etcd::gateway gw(fake.options());
  CHECK_THROWS_WITH(gw.range("/"), Catch::Contains("no JSON object"));
  CHECK_THROWS_WITH(gw.range("/"), Catch::Contains("no JSON object"));
  CHECK_THROWS_WITH(gw.keep_alive(1), Catch::Contains("not an integer"));
  CHECK_THROWS_WITH(gw.keep_alive(1), Catch::Contains("not an integer"));
  CHECK_THROWS_WITH(gw.keep_alive(1), Catch::Contains("not an integer"));
  CHECK_THROWS_WITH(gw.range("/"), Catch::Contains("not base64"));
  CHECK(gw.range("/").kvs.empty());  // kvs of the wrong type: nothing listed
  CHECK_THROWS_WITH(gw.grant(5s), Catch::Contains("no ID"));
  CHECK_THROWS_WITH(gw.range("/"), Catch::Contains("HTTP 500"));
  CHECK_THROWS_WITH(gw.range("/"), Catch::Contains("more than 16 MiB"));
  const auto nothing = [](const std::vector<geerpc::etcd::watch_event>&) { FAIL("no event was sent"); };
  CHECK_THROWS_WITH(gw.watch("/", 1, nothing, {}), Catch::Contains("not JSON"));
  CHECK_THROWS_WITH(gw.watch("/", 1, nothing, {}), Catch::Contains("boom"));
  CHECK_THROWS_WITH(gw.watch("/", 1, nothing, {}), Catch::Contains("compacted"));
}
