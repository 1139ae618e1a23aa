// The rules of an inherited context (issue 30, point 1): a nested call's own deadline against the
// inherited one, detached(), context::from() on another thread, which metadata is propagated, a
// balanced client's calls, a call outside any handler, a handler's lazily made stop token, and
// how two contexts merge.
#include <atomic>
#include <chrono>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>

#include "catch.hpp"
#include "inherit_support.hpp"
#include "support.hpp"

namespace inherit_rules_test {

using namespace std::chrono_literals;
using namespace test::inherit;
using test::inherit::clock;  // not the C library's

TEMPLATE_TEST_CASE("a nested call's own deadline is kept when shorter, cut when longer, and detached escapes both",
                   "[inherit]", GEERPC_ASYNC_TRANSPORTS) {
  hop_server<TestType> b, c;
  b.handlers.next.emplace(geerpc::dial<TestType>(c.address));
  auto client = geerpc::dial<TestType>(b.address);
  std::stop_source cancel;  // ends B's handler once its nested call is done
  std::jthread canceler([&] {
    if (c.handlers.ended.wait_for_at_least(1)) cancel.request_stop();
  });
  const auto caller = geerpc::with_timeout(2s).with_stop_token(cancel.get_token());
  SECTION("shorter") {
    b.handlers.nested = geerpc::with_timeout(50ms);
    (void)client.template try_call<int>(caller, "Hop.Relay", 1);
    const sighting seen = c.handlers.last();
    REQUIRE(seen.handler_deadline);
    CHECK(*seen.handler_deadline < clock::now() + 1s);  // its 50 ms, not the 2 s
    REQUIRE(b.handlers.ended.wait_for_at_least(1));
    CHECK(b.handlers.last_nested_code() == static_cast<int>(geerpc::errc::deadline_exceeded));
    CHECK(c.handlers.stopped.value() == 1);
  }
  SECTION("longer") {
    b.handlers.nested = geerpc::with_timeout(1h);
    std::jthread stopper([&] {
      if (c.handlers.started.wait_for_at_least(1)) cancel.request_stop();
    });
    (void)client.template try_call<int>(caller, "Hop.Relay", 1);
    REQUIRE(c.handlers.ended.wait_for_at_least(1));
    const sighting seen = c.handlers.last();
    REQUIRE(seen.handler_deadline);
    CHECK(*seen.handler_deadline < clock::now() + 1min);  // cut to B's 2 s, not its hour
    CHECK(c.handlers.stopped.value() == 1);               // and canceled with B's call
  }
  SECTION("its own stop token, joined with the handler's, in an async call") {
    std::stop_source own;  // never fired: B's call's cancellation must still reach C
    b.handlers.nested = geerpc::with_stop_token(own.get_token());
    b.handlers.nested_async = true;
    std::jthread stopper([&] {
      if (c.handlers.started.wait_for_at_least(1)) cancel.request_stop();
    });
    (void)client.template try_call<int>(caller, "Hop.Relay", 1);
    REQUIRE(c.handlers.ended.wait_for_at_least(1));
    CHECK(c.handlers.stopped.value() == 1);
    REQUIRE(b.handlers.ended.wait_for_at_least(1));
    CHECK(b.handlers.last_nested_code() == static_cast<int>(geerpc::errc::canceled));
  }
  SECTION("detached") {
    b.handlers.nested = geerpc::detached().with_metadata("k", "v");
    std::jthread stopper([&] {
      if (c.handlers.started.wait_for_at_least(1)) cancel.request_stop();
    });
    auto r = client.template try_call<int>(caller, "Hop.Relay", 1);
    CHECK(r.code() == geerpc::errc::canceled);
    // B's call was canceled; C's, detached, goes on, with no deadline, until its server stops.
    CHECK_FALSE(c.handlers.stopped.wait_for_at_least(1, 200ms));
    CHECK(c.handlers.ended.value() == 0);
    CHECK_FALSE(c.handlers.last().handler_deadline);
    CHECK(c.handlers.last().secret == std::nullopt);
    c.server.stop();
    REQUIRE(c.handlers.ended.wait_for_at_least(1));
    REQUIRE(b.handlers.ended.wait_for_at_least(1));
  }
}

TEMPLATE_TEST_CASE("context::from carries a handler's deadline, cancellation and metadata to another thread",
                   "[inherit]", GEERPC_ASYNC_TRANSPORTS) {
  struct Fan {
    std::optional<geerpc::basic_client<TestType>> next;
    std::jthread helper;
    int fan(int x, const geerpc::call_context& ctx) {
      std::optional<int> code;
      std::thread([&, from = geerpc::context::from(ctx)] {
        auto r = next->template try_call<int>(from, "Hop.Relay", x);
        code = r ? 0 : r.code().value();
      }).join();
      return code.value_or(-1);
    }
    void later(int x, const geerpc::call_context& ctx, geerpc::responder<int> reply) {
      helper = std::jthread([this, x, from = geerpc::context::from(ctx), reply = std::move(reply)]() mutable {
        auto r = next->template try_call<int>(from, "Hop.Probe");
        reply(r ? x : -1);
      });
    }
  };
  using FanApi = geerpc::service<"Fan", geerpc::method<"Fan", &Fan::fan>, geerpc::method<"Later", &Fan::later>>;
  hop_server<TestType> c;
  Fan fan;
  fan.next.emplace(geerpc::dial<TestType>(c.address));
  geerpc::basic_server<TestType> b(test::with_test_io_threads(geerpc::server_options{}));
  b.template add<FanApi>(fan);
  auto client = geerpc::dial<TestType>(b.listen("127.0.0.1:0"));
  const auto caller = geerpc::with_timeout(2s).with_metadata("traceparent", "00-abc-def-01");
  SECTION("on another thread while the handler waits") {
    std::stop_source cancel;
    std::jthread canceler([&] {
      if (c.handlers.started.wait_for_at_least(1)) cancel.request_stop();
    });
    auto r = client.template try_call<int>(caller.with_stop_token(cancel.get_token()), "Fan.Fan", 3);
    CHECK(r.code() == geerpc::errc::canceled);
    REQUIRE(c.handlers.ended.wait_for_at_least(1));
    CHECK(c.handlers.stopped.value() == 1);
    CHECK(c.handlers.last().traceparent == "00-abc-def-01");
    CHECK(c.handlers.last().handler_deadline);
  }
  SECTION("from a responder after the handler returned") {
    CHECK(client.template call<int>(caller, "Fan.Later", 5) == 5);
    const sighting seen = c.handlers.last();
    CHECK(seen.traceparent == "00-abc-def-01");
    REQUIRE(seen.handler_deadline);
    CHECK(*seen.handler_deadline < clock::now() + 1min);
  }
}

TEMPLATE_TEST_CASE("the propagated metadata reaches the next hop, other keys do not, and a nested call's own wins",
                   "[inherit]", GEERPC_ASYNC_TRANSPORTS) {
  hop_server<TestType> b, c;
  b.handlers.next.emplace(geerpc::dial<TestType>(c.address));
  auto client = geerpc::dial<TestType>(b.address);
  std::stop_source cancel;
  std::jthread canceler([&] {
    if (c.handlers.ended.wait_for_at_least(1)) cancel.request_stop();
  });
  const auto caller = geerpc::with_stop_token(cancel.get_token())
                          .with_metadata("traceparent", "00-caller-01")
                          .with_metadata("secret", "s3cr3t");
  b.handlers.nested = geerpc::with_timeout(10ms);  // C ends at once
  SECTION("carried") {
    (void)client.template try_call<int>(caller, "Hop.Relay", 1);
    const sighting seen = c.handlers.last();
    CHECK(seen.traceparent == "00-caller-01");
    CHECK_FALSE(seen.secret);
  }
  SECTION("the nested call's own value") {
    b.handlers.nested = b.handlers.nested->with_metadata("traceparent", "00-b-01");
    (void)client.template try_call<int>(caller, "Hop.Relay", 1);
    CHECK(c.handlers.last().traceparent == "00-b-01");
  }
  SECTION("a value over the bound is not carried, one at it is") {
    const geerpc::server_options defaults;
    for (const std::size_t size : {defaults.propagated_metadata_max + 1, defaults.propagated_metadata_max}) {
      const std::string value(size, 'x');
      const int before = c.handlers.ended.value();
      std::stop_source stop;  // B waits for it once C ended
      std::jthread stopper([&] {
        if (c.handlers.ended.wait_for_at_least(before + 1)) stop.request_stop();
      });
      b.handlers.nested = geerpc::with_timeout(10ms);  // a deadline from now: one per call
      (void)client.template try_call<int>(geerpc::with_stop_token(stop.get_token()).with_metadata("traceparent", value),
                                          "Hop.Relay", 1);
      const sighting seen = c.handlers.last();
      CHECK(seen.traceparent == (size > defaults.propagated_metadata_max ? std::nullopt : std::optional(value)));
    }
  }
}

TEST_CASE("a balanced client's calls and broadcasts made in a handler inherit too", "[inherit]") {
  struct Fanout {
    geerpc::balanced_client* lb = nullptr;
    int one(int, const geerpc::call_context&) { return lb->call<int>("Hop.Probe"); }
    int all(int, const geerpc::call_context&) { return lb->broadcast<int>(geerpc::context{}, "Hop.Probe") ? 1 : -1; }
  };
  using FanoutApi = geerpc::service<"Fanout", geerpc::method<"One", &Fanout::one>, geerpc::method<"All", &Fanout::all>>;
  hop_server<geerpc::threaded> c;
  geerpc::balanced_client lb(std::make_shared<geerpc::static_discovery>(std::vector<std::string>{c.address}));
  Fanout fanout{&lb};
  geerpc::server b(test::with_test_io_threads(geerpc::server_options{}));
  b.add<FanoutApi>(fanout);
  auto client = geerpc::dial(b.listen("127.0.0.1:0"));
  const auto caller = geerpc::with_timeout(2s).with_metadata("traceparent", "00-lb-01");
  for (const char* method : {"Fanout.One", "Fanout.All"}) {
    INFO(method);
    CHECK(client.call<int>(caller, method, 1) == 1);
    const sighting seen = c.handlers.last();
    CHECK(seen.handler_deadline);
    CHECK(seen.traceparent == "00-lb-01");
  }
}

TEMPLATE_TEST_CASE("a call made outside any handler inherits nothing", "[inherit]", GEERPC_TRANSPORTS) {
  hop_server<TestType> c;
  auto client = geerpc::dial<TestType>(c.address);
  CHECK(geerpc::detail::current_call.call == nullptr);
  CHECK(client.template call<int>("Hop.Probe") == 1);
  CHECK_FALSE(c.handlers.last().handler_deadline);
  CHECK_FALSE(c.handlers.last().traceparent);
}

TEST_CASE("a handler's lazy stop token made against its deadline and a cancel frame always fires", "[inherit]") {
  // The token is asked for at once, racing the caller's 1-3 ms deadline (the server's timer) or its
  // cancel frame: made before either, after, or between, it must fire, and every handler return.
  hop_server<geerpc::threaded> c;
  auto client = geerpc::dial<geerpc::threaded>(c.address);
  constexpr int rounds = 40;
  for (int i = 0; i < rounds; ++i) {
    std::stop_source cancel;
    std::optional<std::jthread> canceler;
    auto ctx = geerpc::with_stop_token(cancel.get_token());
    if (i % 2 == 0) {
      ctx = ctx.with_timeout(std::chrono::milliseconds(1 + i % 3));
    } else {
      const int before = c.handlers.started.value();
      canceler.emplace([&c, &cancel, before] {
        (void)c.handlers.started.wait_for_at_least(before + 1);
        cancel.request_stop();
      });
    }
    (void)client.template try_call<int>(ctx, "Hop.Relay", i);
  }
  // A call whose deadline passed before its handler started never ran it: count those that ran.
  REQUIRE(test::eventually([&] { return c.handlers.ended.value() == c.handlers.started.value(); }));
  CHECK(c.handlers.started.value() >= rounds / 2);
  CHECK(c.handlers.stopped.value() == c.handlers.started.value());
}

TEMPLATE_TEST_CASE("a stop token first asked for after the call was answered has fired", "[inherit]",
                   GEERPC_TRANSPORTS) {
  hop_server<TestType> c;
  geerpc::options opts;
  opts.timeouts.handle = 20ms;
  auto client = geerpc::dial<TestType>(c.address, opts);
  // The handle timeout's answer reaches the caller after the server claimed the call and found no
  // stop source to fire: the one made later must fire as it is made.
  CHECK(client.template try_call<int>("Hop.Late").code() == geerpc::errc::handle_timeout);
  c.handlers.release.set();
  REQUIRE(c.handlers.ended.wait_for_at_least(1));
  CHECK(c.handlers.late_fired == 1);
}

TEST_CASE("a stop token first asked for after the caller closed its connection has fired", "[inherit]") {
  // Relay takes its token at once, Late only when released: once Relay's fires, the connection's
  // close has stopped every handler on it, and a token made afterwards must be made fired.
  hop_server<geerpc::threaded> c;
  auto client = geerpc::dial<geerpc::threaded>(c.address);
  auto relay = client.async_call<int>("Hop.Relay", 1);
  auto late = client.async_call<int>("Hop.Late");
  REQUIRE(c.handlers.started.wait_for_at_least(2));
  client.close();
  REQUIRE(c.handlers.stopped.wait_for_at_least(1));
  c.handlers.release.set();
  REQUIRE(c.handlers.ended.wait_for_at_least(2));
  CHECK(c.handlers.late_fired == 1);
}

TEST_CASE("a call_context made by hand has no stop token and passes its deadline on", "[inherit]") {
  const geerpc::call_context empty;
  CHECK_FALSE(empty.stop_token().stop_possible());
  CHECK_FALSE(empty.handler_deadline());
  CHECK_FALSE(geerpc::context::from(empty).deadline());
  const auto deadline = clock::now() + 1s;
  geerpc::call_context::parts parts;
  parts.method = "A.B";
  parts.deadline = deadline;
  const geerpc::call_context made(parts);
  CHECK(geerpc::context::from(made).deadline() == deadline);
}

TEST_CASE("merging keeps the earlier deadline, joins two stop tokens, and adds only missing metadata", "[inherit]") {
  using access = geerpc::detail::context_access;
  std::stop_source mine, handlers;
  const auto soon = clock::now() + 1s, later = soon + 1s;
  const auto inherited = access::settle(geerpc::with_deadline(soon)
                                            .with_stop_token(handlers.get_token())
                                            .with_metadata("traceparent", "h")
                                            .with_metadata("tracestate", "t"));
  const auto given = geerpc::with_deadline(later).with_stop_token(mine.get_token()).with_metadata("traceparent", "g");
  const geerpc::context merged = access::merge(given, inherited);
  CHECK(merged.deadline() == soon);
  CHECK_FALSE(access::inherits(merged));
  CHECK(merged.metadata() ==
        std::vector<std::pair<std::string, std::string>>{{"traceparent", "g"}, {"tracestate", "t"}});
  CHECK_FALSE(merged.stop_token().stop_requested());
  handlers.request_stop();
  CHECK(merged.stop_token().stop_requested());
  const geerpc::context other = access::merge(given, inherited);
  mine.request_stop();
  CHECK(other.stop_token().stop_requested());
  // Detached: only the metadata.
  const geerpc::context free = access::merge(geerpc::detached(), inherited);
  CHECK_FALSE(free.deadline());
  CHECK_FALSE(free.stop_token().stop_possible());
  CHECK(free.metadata().size() == 2);
}

// A call an interceptor's `after` makes belongs to a call already answered: it carries that call's
// trace, but neither its deadline nor its stop token, which a call that timed out has spent.
TEMPLATE_TEST_CASE("a call made in an interceptor's after carries the propagated metadata only", "[inherit]",
                   GEERPC_TRANSPORTS) {
  hop_server<TestType> c;
  auto next = geerpc::dial<TestType>(c.address);
  test::counter afters;
  std::atomic<int> after_code{-1};  // the last call made in `after`: 0 or its error's code
  test::Arith arith;
  geerpc::basic_server<TestType> b(test::with_test_io_threads({}));
  b.use({.after = [&](const geerpc::call_context&, const geerpc::call_result&) {
    auto r = next.template try_call<int>("Hop.Probe");
    after_code = r ? 0 : r.code().value();
    afters.add();
  }});
  b.template add<test::ArithApi>(arith);
  auto client = geerpc::dial<TestType>(b.listen("127.0.0.1:0"));
  const auto caller = geerpc::with_timeout(10s).with_metadata("traceparent", "00-abc-def-01");
  CHECK(client.template call<int>(caller, "Arith.Sum", test::Args{1, 2}) == 3);
  REQUIRE(afters.wait_for_at_least(1));
  CHECK(after_code == 0);
  sighting seen = c.handlers.last();
  CHECK(seen.traceparent == "00-abc-def-01");
  CHECK((!seen.handler_deadline || *seen.handler_deadline > clock::now() + 1min));
  // A call that timed out: its handler's deadline has passed and its stop token fired by the time
  // `after` runs, and neither ends the call made there.
  auto r = client.template try_call<int>(geerpc::with_timeout(50ms).with_metadata("traceparent", "00-late-01"),
                                         "Arith.Late", test::Args{1, 0});
  CHECK(r.code() == geerpc::errc::deadline_exceeded);
  arith.release.set();
  REQUIRE(afters.wait_for_at_least(2));
  CHECK(after_code == 0);
  seen = c.handlers.last();
  CHECK(seen.traceparent == "00-late-01");
  CHECK((!seen.handler_deadline || *seen.handler_deadline > clock::now() + 1min));
}

}  // namespace inherit_rules_test
