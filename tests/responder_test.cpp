// Deferred replies (issue 16, point 6): a handler that takes a geerpc::responder<R> answers later,
// from any thread, without holding a handler thread; timeouts, cancels and a stopping server still
// give exactly one response and fire the responder's stop_token.
#include <atomic>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace responder_test {

using namespace std::chrono_literals;

namespace {

// Answers only once `expected` calls have reached it: it returns only if its callers do not wait
// for one another.
struct Backend {
  test::counter arrived;
  int expected = 0;
  int twice(int x) {
    arrived.add();
    arrived.wait_for_at_least(expected, 10s);
    return 2 * x;
  }
};
using BackendApi = geerpc::service<"Backend", geerpc::method<"Twice", &Backend::twice>>;

struct Front {
  geerpc::client* backend = nullptr;
  std::mutex mutex;
  std::vector<geerpc::responder<int>> kept;  // responders a test answers itself
  test::counter kept_count;

  // Asks the backend and answers when its reply comes: the handler returns at once.
  void twice(int x, geerpc::responder<int> reply) {
    backend->async_call<int>("Backend.Twice", x).then([reply = std::move(reply)](geerpc::result<int> r) mutable {
      if (r)
        reply(*r);
      else
        reply.fail(r.error());
    });
  }
  void ping(geerpc::responder<void> reply) { reply(); }
  void drop(geerpc::responder<int>) {}
  void refuse(const geerpc::call_context& ctx, geerpc::responder<std::string> reply) {
    reply.fail(geerpc::errc::permission_denied, "no " + std::string(ctx.method()));
  }
  void throw_first(std::stop_token, geerpc::responder<int>) { throw std::runtime_error("front: threw"); }
  void answer_then_throw(geerpc::responder<int> reply) {
    reply(7);
    throw std::runtime_error("front: threw after answering");
  }
  void keep(geerpc::responder<int> reply) {
    {
      std::lock_guard lock(mutex);
      kept.push_back(std::move(reply));
    }
    kept_count.add();
  }
};
// Handlers that exercise a responder's edges, each found by a review.
struct Edges {
  std::mutex mutex;
  std::string seen_after_answer;
  test::counter read_after_answer;  // the reply may reach the caller before the handler reads
  std::vector<std::unique_ptr<std::stop_callback<std::function<void()>>>> on_stop;
  std::vector<std::unique_ptr<geerpc::responder<int>>> held;
  test::counter dropped_on_stop;

  // Answers with what converts to R: a string literal for a std::string, an int for an int64.
  void name(geerpc::responder<std::string> reply) { reply("alice"); }
  void wide(geerpc::responder<std::int64_t> reply) { reply(5); }
  // Answers first, then reads its call context: still valid until the handler returns. The
  // argument is large enough that a released request's buffer would be freed, not kept.
  void answer_then_read(const std::string& big, const geerpc::call_context& ctx, geerpc::responder<std::size_t> reply) {
    reply(big.size());
    std::lock_guard lock(mutex);
    seen_after_answer = std::string(ctx.metadata("user").value_or("(none)"));
    read_after_answer.add();
  }
  // Drops its responder when its stop_token fires: inside the server's deadline callback.
  void drop_on_stop(const std::string&, geerpc::responder<int> reply) {
    std::lock_guard lock(mutex);
    auto& kept = held.emplace_back(std::make_unique<geerpc::responder<int>>(std::move(reply)));
    geerpc::responder<int>* raw = kept.get();
    on_stop.push_back(std::make_unique<std::stop_callback<std::function<void()>>>(
        raw->stop_token(), std::function<void()>([this, raw] {
          geerpc::responder<int> gone = std::move(*raw);  // destroyed at the end of this callback
          dropped_on_stop.add();
        })));
  }
};
using EdgesApi = geerpc::service<"Edges",                                                     //
                                 geerpc::method<"Name", &Edges::name>,                        //
                                 geerpc::method<"Wide", &Edges::wide>,                        //
                                 geerpc::method<"AnswerThenRead", &Edges::answer_then_read>,  //
                                 geerpc::method<"DropOnStop", &Edges::drop_on_stop>>;

using FrontApi = geerpc::service<"Front",                                                       //
                                 geerpc::method<"Twice", &Front::twice>,                        //
                                 geerpc::method<"Ping", &Front::ping>,                          //
                                 geerpc::method<"Drop", &Front::drop>,                          //
                                 geerpc::method<"Refuse", &Front::refuse>,                      //
                                 geerpc::method<"ThrowFirst", &Front::throw_first>,             //
                                 geerpc::method<"AnswerThenThrow", &Front::answer_then_throw>,  //
                                 geerpc::method<"Keep", &Front::keep>>;

static_assert(std::is_same_v<FrontApi::fn<"Twice">::result_type, int>);  // the responder's R
static_assert(FrontApi::fn<"Twice">::arity == 1);
static_assert(std::is_void_v<FrontApi::fn<"Ping">::result_type> && FrontApi::fn<"Ping">::arity == 0);

}  // namespace

TEMPLATE_TEST_CASE("a handler that calls another server answers when its reply comes, holding no handler thread",
                   "[responder]", GEERPC_TRANSPORTS) {
  constexpr int calls = 8;
  Backend backend;
  backend.expected = calls;
  geerpc::server backend_server;
  backend_server.add<BackendApi>(backend);
  auto to_backend = geerpc::dial(backend_server.listen("127.0.0.1:0"));
  Front front;
  front.backend = &to_backend;
  // One handler thread (the blocking server: one thread for the connection): every call but the
  // first would wait for it if handlers held it until they answered.
  geerpc::basic_server<TestType> server({.threads = {.handlers = 1, .max_handlers = 1}});
  server.template add<FrontApi>(front);
  auto client = geerpc::dial(server.listen("127.0.0.1:0"));
  std::vector<test::future<int, geerpc::threaded>> replies;
  for (int i = 0; i < calls; ++i) replies.push_back(client.template async_call<int>("Front.Twice", i));
  REQUIRE(backend.arrived.wait_for_at_least(calls, 5s));  // all of them are waiting on the backend at once
  for (int i = 0; i < calls; ++i) CHECK(replies[static_cast<std::size_t>(i)].get() == 2 * i);
  CHECK(client.template call<FrontApi::fn<"Twice">>(21) == 42);
}

TEMPLATE_TEST_CASE("a responder answers a value, nothing, an error: dropped or thrown past, it answers an error",
                   "[responder]", GEERPC_TRANSPORTS) {
  Front front;
  geerpc::basic_server<TestType> server;
  server.template add<FrontApi>(front);
  auto client = geerpc::dial<TestType>(server.listen("127.0.0.1:0"));
  CHECK(client.template try_call<void>("Front.Ping").has_value());
  const auto refused = client.template try_call<std::string>("Front.Refuse");
  CHECK(refused.code() == geerpc::errc::permission_denied);
  CHECK(refused.message() == "no Front.Refuse");
  const auto dropped = client.template try_call<int>("Front.Drop");
  CHECK(dropped.code() == geerpc::errc::remote_error);
  CHECK(dropped.message() == "rpc server: the handler dropped its responder without answering");
  const auto thrown = client.template try_call<int>("Front.ThrowFirst");
  CHECK(thrown.code() == geerpc::errc::remote_error);
  CHECK(thrown.message() == "front: threw");
  CHECK(client.template try_call<int>("Front.AnswerThenThrow").value() == 7);  // the first answer stands
  CHECK(client.template try_call<void>("Front.Ping").has_value());
  CHECK(test::eventually([&] { return server.inflight() == 0; }));  // each released after its reply went out
}

TEMPLATE_TEST_CASE(
    "the handle timeout answers a deferred call and fires its responder's stop_token: the late answer "
    "is dropped and releases the call",
    "[responder]", GEERPC_TRANSPORTS) {
  Front front;
  geerpc::basic_server<TestType> server;
  server.template add<FrontApi>(front);
  auto client = geerpc::dial<TestType>(server.listen("127.0.0.1:0"), {.timeouts = {.handle = 100ms}});
  const auto r = client.template try_call<int>("Front.Keep");
  CHECK(r.code() == geerpc::errc::handle_timeout);
  REQUIRE(front.kept_count.wait_for_at_least(1));
  std::lock_guard lock(front.mutex);
  geerpc::responder<int>& reply = front.kept.at(0);
  CHECK(test::eventually([&] { return reply.stop_token().stop_requested(); }));
  CHECK(server.inflight() == 1);  // answered, but held by its responder
  reply(5);                       // too late: dropped
  CHECK(reply.answered());
  CHECK(server.inflight() == 1);  // released once the responder is gone
  front.kept.clear();
  CHECK(server.inflight() == 0);
  CHECK(client.template try_call<void>("Front.Ping").has_value());  // the connection is fine
}

TEST_CASE("stop() fires a held responder's stop_token and returns once the responder lets go", "[responder]") {
  Front front;
  auto server = std::make_unique<geerpc::server>();
  server->add<FrontApi>(front);
  auto client = geerpc::dial(server->listen("127.0.0.1:0"));
  auto pending = client.async_call<int>("Front.Keep");
  REQUIRE(front.kept_count.wait_for_at_least(1));
  test::event stopped;
  std::thread stopping([&] {
    server->stop();
    stopped.set();
  });
  {
    std::unique_lock lock(front.mutex);
    geerpc::responder<int>& reply = front.kept.at(0);
    REQUIRE(test::eventually([&] { return reply.stop_token().stop_requested(); }));
  }
  CHECK_FALSE(stopped.is_set());  // waiting for the responder
  {
    std::lock_guard lock(front.mutex);
    front.kept.clear();  // dropped: it answers (to a closed connection) and releases the call
  }
  REQUIRE(stopped.wait());
  stopping.join();
  CHECK(pending.try_get().code() == geerpc::errc::connection_closed);
}

TEMPLATE_TEST_CASE(
    "a responder's answer converts to R: the call context outlives an answer given inside the handler: "
    "a responder dropped inside the deadline callback releases its call",
    "[responder]", GEERPC_TRANSPORTS) {
  Edges edges;
  geerpc::basic_server<TestType> server;
  server.template add<EdgesApi>(edges);
  const std::string address = server.listen("127.0.0.1:0");
  auto client = geerpc::dial<TestType>(address);
  CHECK(client.template call<std::string>("Edges.Name") == "alice");
  CHECK(client.template call<std::int64_t>("Edges.Wide") == 5);
  const std::string big(70000, 'b');
  CHECK(client.template call<std::size_t>(geerpc::with_metadata("user", "ada"), "Edges.AnswerThenRead", big) == 70000);
  REQUIRE(edges.read_after_answer.wait_for_at_least(1));
  {
    std::lock_guard lock(edges.mutex);
    CHECK(edges.seen_after_answer == "ada");
  }
  // Long enough for a loaded machine to start the handler before the deadline (a handler whose
  // deadline passes while it waits for a thread never runs, and so never drops its responder).
  auto timing_out = geerpc::dial<TestType>(address, {.timeouts = {.handle = 1s}});
  const auto timed_out = timing_out.template try_call<int>("Edges.DropOnStop", big);
  CHECK(timed_out.code() == geerpc::errc::handle_timeout);
  REQUIRE(edges.dropped_on_stop.wait_for_at_least(1));
  CHECK(test::eventually([&] { return server.inflight() == 0; }));
  std::lock_guard lock(edges.mutex);
  edges.on_stop.clear();
}

}  // namespace responder_test
