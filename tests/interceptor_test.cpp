// Interceptors (issue 16, point 4): on the server, they refuse calls before the handler runs and see
// every outcome, cancelled calls and closed connections included; on the client, they add metadata
// and see each call's outcome, an async call's before its future is ready. Over every transport.
#include <sys/socket.h>

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "context_support.hpp"
#include "support.hpp"

namespace interceptor_test {

using namespace std::chrono_literals;
using test::context::Kv;
using test::context::KvApi;
using test::context::seen;

namespace {

// Records every `after` a server interceptor sees.
struct outcome_log {
  struct entry {
    std::string method;
    std::error_code error;
    std::string message;
    std::chrono::nanoseconds duration;
  };
  std::mutex mutex;
  std::vector<entry> entries;
  test::counter count;

  void add(const geerpc::call_context& ctx, const geerpc::call_result& r) {
    {
      std::lock_guard lock(mutex);
      entries.push_back({std::string(ctx.method()), r.error, std::string(r.message), r.duration});
    }
    count.add();
  }
  // The first entry of `method` that failed (or succeeded) as said.
  std::optional<entry> find(std::string_view method, bool failed = true) {
    std::lock_guard lock(mutex);
    for (const auto& e : entries)
      if (e.method == method && static_cast<bool>(e.error) == failed) return e;
    return std::nullopt;
  }
};

}  // namespace

TEMPLATE_TEST_CASE("a server interceptor refuses calls with an error of its choosing, before the handler runs",
                   "[context][interceptor]", GEERPC_TRANSPORTS) {
  Kv kv;
  geerpc::basic_server<TestType> server;
  server.template add<KvApi>(kv);
  std::atomic<int> befores{0};
  server.use({.before = [&](const geerpc::call_context& ctx) -> std::optional<geerpc::error> {
    ++befores;
    const auto token = ctx.metadata("authorization");
    if (!token) return geerpc::error{geerpc::errc::unauthenticated, "kv: no token"};
    if (*token == "reader" && ctx.method() != "Kv.Get")
      return geerpc::error{geerpc::errc::permission_denied, "kv: readers may only get"};
    if (*token == "posix") return geerpc::error{std::make_error_code(std::errc::permission_denied), ""};
    if (*token == "thrower") throw std::runtime_error("kv: interceptor threw");
    return std::nullopt;
  }});
  auto client = geerpc::dial<TestType>(server.listen("127.0.0.1:0"));

  auto none = client.template try_call<int>("Kv.Count");
  CHECK(none.code() == geerpc::errc::unauthenticated);
  CHECK(none.message() == "kv: no token");
  auto reader = client.template try_call<int>(geerpc::with_metadata("authorization", "reader"), "Kv.Count");
  CHECK(reader.code() == geerpc::errc::permission_denied);
  CHECK(reader.message() == "kv: readers may only get");
  auto posix = client.template try_call<int>(geerpc::with_metadata("authorization", "posix"), "Kv.Count");
  CHECK(posix.code() == geerpc::errc::remote_error);  // not geerpc's category: travels as remote_error
  CHECK(posix.message() == std::make_error_code(std::errc::permission_denied).message());
  auto thrower = client.template try_call<int>(geerpc::with_metadata("authorization", "thrower"), "Kv.Count");
  CHECK(thrower.code() == geerpc::errc::remote_error);
  CHECK(thrower.message() == "kv: interceptor threw");
  CHECK(kv.runs == 0);

  CHECK(client.template call<std::string>(geerpc::with_metadata("authorization", "reader"), "Kv.Get",
                                          std::string("k")) == "value of k");
  CHECK(client.template call<int>(geerpc::with_metadata("authorization", "admin"), "Kv.Count") == 2);
  CHECK(befores == 6);
}

TEMPLATE_TEST_CASE("a server interceptor's after sees every call's outcome", "[context][interceptor]",
                   GEERPC_TRANSPORTS) {
  Kv kv;
  geerpc::server_options opts;
  geerpc::basic_server<TestType> server(opts);
  server.template add<KvApi>(kv);
  outcome_log log;
  test::counter second_afters;  // runs after the first interceptor's: waited for on its own
  server.use({.after = [&](const geerpc::call_context& ctx, const geerpc::call_result& r) { log.add(ctx, r); }});
  server.use({.after = [&](const geerpc::call_context&, const geerpc::call_result&) {
    second_afters.add();
    throw std::runtime_error("dropped");  // an after that throws changes nothing
  }});
  const std::string address = server.listen("127.0.0.1:0");
  auto client = geerpc::dial<TestType>(address, {.timeouts = {.handle = 200ms}});

  CHECK(client.template call<int>("Kv.Count") == 1);
  CHECK(client.template try_call<int>("Kv.Fail").code() == geerpc::errc::remote_error);
  CHECK(client.template try_call<int>("Kv.Nope").code() == geerpc::errc::unknown_method);
  CHECK(client.template try_call<std::string>("Kv.Count").code() == geerpc::errc::type_mismatch);
  CHECK(client.template try_call<int>("Kv.Wait").code() == geerpc::errc::handle_timeout);
  REQUIRE(log.count.wait_for_at_least(5, 5s));

  const auto ok = log.find("Kv.Count", false);
  REQUIRE(ok);
  CHECK_FALSE(ok->error);
  CHECK(ok->message.empty());
  CHECK(ok->duration > 0ns);
  const auto failed = log.find("Kv.Fail");
  REQUIRE(failed);
  CHECK(failed->error == geerpc::errc::remote_error);
  CHECK(failed->message == "kv: failed");
  const auto unknown = log.find("Kv.Nope");
  REQUIRE(unknown);
  CHECK(unknown->error == geerpc::errc::unknown_method);
  const auto timed_out = log.find("Kv.Wait");
  REQUIRE(timed_out);
  CHECK(timed_out->error == geerpc::errc::handle_timeout);
  CHECK(timed_out->duration >= 200ms);  // from arrival to the answer, which the timeout gave
  {
    std::lock_guard lock(log.mutex);
    CHECK(log.entries.size() == 5);
    std::size_t mismatches = 0;
    for (const auto& e : log.entries) mismatches += e.error == geerpc::errc::type_mismatch ? 1 : 0;
    CHECK(mismatches == 1);
  }
  CHECK(second_afters.wait_for_at_least(5, 5s));
  CHECK(second_afters.value() == 5);
}

TEST_CASE("a server interceptor sees cancelled calls and calls whose connection closed before they ran",
          "[context][interceptor]") {
  Kv kv;
  // One handler thread: a call queued behind a held one has not run when its connection closes.
  geerpc::server server({.threads = {.handlers = 1, .max_handlers = 1}});
  server.add<KvApi>(kv);
  outcome_log log;
  server.use({.after = [&](const geerpc::call_context& ctx, const geerpc::call_result& r) { log.add(ctx, r); }});
  auto client = geerpc::dial(server.listen("127.0.0.1:0"));

  auto waiting = client.async_call<int>("Kv.Wait");
  REQUIRE(test::eventually([&] { return kv.runs == 1; }));
  waiting.cancel();
  CHECK(waiting.try_get().code() == geerpc::errc::canceled);
  REQUIRE(log.count.wait_for_at_least(1, 5s));
  CHECK(log.find("Kv.Wait")->error == geerpc::errc::canceled);
  CHECK(log.find("Kv.Wait")->message == "rpc server: request canceled by the client");

  auto held = client.async_call<int>("Kv.Hold");
  REQUIRE(test::eventually([&] { return kv.runs == 2; }));
  auto queued = client.async_call<int>("Kv.Count");
  REQUIRE(test::eventually([&] { return server.inflight() == 2; }));  // both read by the server
  client.close();
  REQUIRE(test::eventually([&] { return server.connection_count() == 0; }));
  kv.release.set();
  REQUIRE(log.count.wait_for_at_least(3, 5s));
  const auto never_ran = log.find("Kv.Count");
  REQUIRE(never_ran);
  CHECK(never_ran->error == geerpc::errc::connection_closed);
  CHECK(never_ran->message == "rpc server: the connection closed before the call was answered");
  CHECK(kv.runs == 2);
}

TEMPLATE_TEST_CASE("client interceptors add metadata and see each call's outcome", "[context][interceptor]",
                   GEERPC_TRANSPORTS) {
  Kv kv;
  geerpc::basic_server<TestType> server;
  server.template add<KvApi>(kv);
  const std::string address = server.listen("127.0.0.1:0");
  std::mutex mutex;
  std::vector<std::pair<std::string, std::error_code>> seen_outcomes;
  geerpc::options opts;
  opts.interceptors.push_back(
      {.before =
           [](geerpc::client_call& call) { call.ctx = call.ctx.with_metadata("authorization", "from interceptor"); },
       .after =
           [&](const geerpc::client_call& call, const geerpc::call_result& r) {
             std::lock_guard lock(mutex);
             seen_outcomes.emplace_back(std::string(call.method), r.error);
           }});
  auto client = geerpc::dial<TestType>(address, opts);
  CHECK(client.template call<std::string>("Kv.Get", std::string("k")) == "value of k");
  CHECK(client.template try_call<int>("Kv.Fail").code() == geerpc::errc::remote_error);
  CHECK(client.template try_call<int>("Kv.Nope").code() == geerpc::errc::unknown_method);
  {
    std::lock_guard lock(kv.mutex);
    REQUIRE(kv.calls.size() == 1);
    CHECK(kv.calls[0].authorization == "from interceptor");
  }
  std::lock_guard lock(mutex);
  CHECK(seen_outcomes ==
        std::vector<std::pair<std::string, std::error_code>>{
            {"Kv.Get", {}}, {"Kv.Fail", geerpc::errc::remote_error}, {"Kv.Nope", geerpc::errc::unknown_method}});
}

TEMPLATE_TEST_CASE("a client interceptor sees an async call's outcome before its future is ready",
                   "[context][interceptor]", GEERPC_ASYNC_TRANSPORTS) {
  Kv kv;
  geerpc::basic_server<TestType> server;
  server.template add<KvApi>(kv);
  const std::string address = server.listen("127.0.0.1:0");
  std::atomic<int> afters{0};
  std::atomic<int> last_error{-1};
  geerpc::options opts;
  opts.interceptors.push_back({.after = [&](const geerpc::client_call& call, const geerpc::call_result& r) {
    if (call.method == "Kv.Count" || call.method == "Kv.Fail") last_error = r.error.value();
    ++afters;
  }});
  auto client = geerpc::dial<TestType>(address, opts);
  auto ok = client.template async_call<int>("Kv.Count");
  ok.wait();
  CHECK(afters == 1);
  CHECK(last_error == 0);
  CHECK(ok.get() == 1);
  auto failed = client.template async_call<int>("Kv.Fail");
  failed.wait();
  CHECK(afters == 2);
  CHECK(last_error == static_cast<int>(geerpc::errc::remote_error));
  // Refused before it was sent: seen too.
  auto refused = client.template async_call<int>(geerpc::with_metadata("", "v"), "Kv.Count");
  CHECK(afters == 3);
  CHECK(refused.try_get().code() == geerpc::errc::invalid_argument);
}

TEMPLATE_TEST_CASE("a client interceptor's after may start another call of the same client, even once it is closed",
                   "[context][interceptor]", GEERPC_ASYNC_TRANSPORTS) {
  Kv kv;
  geerpc::basic_server<TestType> server;
  server.template add<KvApi>(kv);
  const std::string address = server.listen("127.0.0.1:0");
  geerpc::basic_client<TestType>* self = nullptr;
  std::mutex mutex;
  std::vector<test::future<int, TestType>> again;
  test::counter started;
  geerpc::options opts;
  opts.interceptors.push_back({.after = [&](const geerpc::client_call& call, const geerpc::call_result&) {
    if (call.method != "Kv.Count") return;
    auto next = self->template async_call<int>("Kv.Fail");
    {
      std::lock_guard lock(mutex);
      again.push_back(std::move(next));
    }
    started.add();
  }});
  auto client = geerpc::dial<TestType>(address, opts);
  self = &client;
  auto first = client.template async_call<int>("Kv.Count");  // its after runs on the receiving thread
  CHECK(first.get() == 1);
  REQUIRE(started.wait_for_at_least(1));
  {
    std::lock_guard lock(mutex);
    CHECK(again[0].try_get().code() == geerpc::errc::remote_error);
  }
  client.close();
  // Completed on this thread, by the closed connection, whose lock is not held meanwhile.
  auto second = client.template async_call<int>("Kv.Count");
  CHECK(second.try_get().code() == geerpc::errc::connection_closed);
  REQUIRE(started.wait_for_at_least(2));
  std::lock_guard lock(mutex);
  CHECK(again[1].try_get().code() == geerpc::errc::connection_closed);
}

}  // namespace interceptor_test
