// A balanced client's call waits on etcd no longer than its own deadline, whatever etcd does
// (issue 30, point 5): an etcd that accepts and never answers, one that answers late, and a call
// canceled through its stop_token. The discovery's request_timeout is long here (30 s, a hundred
// times the calls' deadlines), so that a call that waited for it instead of its deadline fails the
// test by its error code, not by a stopwatch; the elapsed-time checks are loose bounds between the
// two. (A discovery destroyed while etcd is silent drops its request at once: stop_test.cpp.)
#include <chrono>
#include <condition_variable>
#include <geerpc/detail/base64.hpp>
#include <geerpc/etcd.hpp>
#include <geerpc/geerpc.hpp>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include "../catch.hpp"
#include "fake_etcd.hpp"

using namespace std::chrono_literals;

namespace discovery_deadline {

struct Who {
  std::string address;
  std::string am() { return address; }
};
using WhoApi = geerpc::service<"Who", geerpc::method<"Am", &Who::am>>;

constexpr auto etcd_patience = 30s;  // the discovery's request_timeout: far beyond any call's deadline
constexpr auto well_before_patience = 10s;

std::shared_ptr<geerpc::etcd::discovery> discovery_of(const std::string& endpoint) {
  return std::make_shared<geerpc::etcd::discovery>(
      "Who", geerpc::etcd::discovery_options{.etcd = {.endpoints = {endpoint}, .request_timeout = etcd_patience}});
}

// A door the fake etcd's answer waits behind; opened by the test, or on the way out of it.
class gate {
 public:
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    opened_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex_);
    opened_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable opened_;
  bool open_ = false;
};
struct open_on_exit {
  gate& door;
  ~open_on_exit() { door.open(); }
};

// etcd's answer to a range over /geerpc/Who/ listing one server.
std::string range_listing(const std::string& address) {
  const std::string key = geerpc::detail::base64_encode("/geerpc/Who/" + address);
  const std::string value = geerpc::detail::base64_encode(address);
  return test::http_200(R"({"header":{"revision":"7"},"kvs":[{"key":")" + key + R"(","value":")" + value +
                        R"("}],"count":"1"})");
}

TEST_CASE("an etcd that accepts and never answers: a first call returns at its deadline, not etcd's timeout",
          "[etcd][deadline_waits]") {
  const test::silent_etcd silent;
  geerpc::balanced_client client(discovery_of(silent.endpoint()));
  const auto start = std::chrono::steady_clock::now();
  auto reply = client.try_call<std::string>(geerpc::with_timeout(300ms), "Who.Am");
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(reply);
  CHECK(reply.code() == geerpc::errc::deadline_exceeded);
  CHECK_THAT(reply.message(), Catch::Contains("etcd discovery of Who has no list yet") &&
                                  Catch::Contains("deadline passed") && Catch::Contains("etcd had not answered"));
  CHECK(took >= 300ms);
  CHECK(took < well_before_patience);

  // A broadcast asks the same list, with the same bound.
  auto all = client.broadcast<std::string>(geerpc::with_timeout(200ms), "Who.Am");
  REQUIRE_FALSE(all);
  CHECK(all.outcome.code() == geerpc::errc::deadline_exceeded);
}

TEST_CASE("a call waiting for etcd's first list ends when its stop_token fires", "[etcd][deadline_waits]") {
  const test::silent_etcd silent;
  geerpc::balanced_client client(discovery_of(silent.endpoint()));
  std::stop_source cancel;
  // Fires while the call waits, or before it starts waiting: either way it ends canceled, at once.
  std::jthread canceller([&] { cancel.request_stop(); });
  const auto start = std::chrono::steady_clock::now();
  auto reply = client.try_call<std::string>(geerpc::with_stop_token(cancel.get_token()), "Who.Am");
  REQUIRE_FALSE(reply);
  CHECK(reply.code() == geerpc::errc::canceled);
  CHECK_THAT(reply.message(), Catch::Contains("canceled") && Catch::Contains("etcd"));
  CHECK(std::chrono::steady_clock::now() - start < well_before_patience);
}

TEST_CASE("an etcd that answers late: a call gives up at its deadline, and the list it sends later serves the next",
          "[etcd][deadline_waits]") {
  Who who;
  geerpc::server server;
  server.add<WhoApi>(who);
  who.address = server.listen("127.0.0.1:0");

  gate answer;
  // The range is answered once the test opens the gate; the watch after it waits unanswered.
  test::fake_etcd late({range_listing(who.address)}, [&](std::size_t) { answer.wait(); });
  const open_on_exit release{answer};  // before `late` is destroyed, whatever happens
  auto options = late.options();
  options.request_timeout = etcd_patience;
  geerpc::balanced_client client(
      std::make_shared<geerpc::etcd::discovery>("Who", geerpc::etcd::discovery_options{.etcd = options}));

  auto first = client.try_call<std::string>(geerpc::with_timeout(300ms), "Who.Am");
  REQUIRE_FALSE(first);
  CHECK(first.code() == geerpc::errc::deadline_exceeded);

  answer.open();
  auto second = client.try_call<std::string>(geerpc::with_timeout(etcd_patience), "Who.Am");
  REQUIRE(second);
  CHECK(second.value() == who.address);
}

}  // namespace discovery_deadline
