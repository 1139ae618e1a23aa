// The debug page's calls in flight (server/debug_snapshot.hpp): each call's method, peer, age, the
// caller's deadline and time left, trace id and stage, on the page and in stats.json: a handler
// blocked on an event, a request queued behind it for the one handler thread, a call deferred to
// its responder; and a traceparent a peer filled with markup and bad bytes, escaped.
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "strict_json.hpp"
#include "support.hpp"

namespace calls_in_flight_test {

using namespace std::chrono_literals;
using test::Args;

namespace {

struct Ops {
  test::counter started;  // handlers that began
  test::event release;    // lets Block return
  std::mutex mutex;
  std::vector<geerpc::responder<int>> kept;  // Defer's responders, answered by the test

  int block(const Args& a) {
    started.add();
    release.wait();
    return a.num1;
  }
  void defer(const Args&, geerpc::responder<int> reply) {
    {
      std::lock_guard lock(mutex);
      kept.push_back(std::move(reply));
    }
    started.add();
  }
};
using OpsApi = geerpc::service<"Ops", geerpc::method<"Block", &Ops::block>, geerpc::method<"Defer", &Ops::defer>>;

constexpr std::string_view w3c_trace = "4bf92f3577b34da6a3ce929d0e0e4736";

// The JSON object of the n-th call listed in stats.json's calls_in_flight.
std::string listed_call(const std::string& body, int n) {
  auto at = body.find("\"calls_in_flight\":");
  for (int i = 0; i <= n && at != std::string::npos; ++i) at = body.find("{\"method\":", at + 1);
  if (at == std::string::npos) return {};
  return body.substr(at, body.find('}', at) + 1 - at);
}

// The text of the page's cell `id`.
std::string cell(const std::string& page, const std::string& id) {
  const std::string open = "id=\"" + id + "\">";
  const auto at = page.find(open);
  if (at == std::string::npos) return "(no cell " + id + ")";
  const auto from = at + open.size();
  return page.substr(from, page.find("</td>", from) - from);
}

}  // namespace

TEST_CASE("calls in flight: each call's stage, deadline, time left and trace id, on the page and in the JSON",
          "[in_flight][debug_page]") {
  Ops ops;
  // One handler thread: the third call waits for it behind the blocked one.
  geerpc::basic_server<geerpc::threaded> server(
      test::with_test_io_threads({.threads = {.handlers = 1, .max_handlers = 1}}));
  server.add<OpsApi>(ops);
  // Lets every call go before the server stops (which waits for them), also when a REQUIRE fails.
  const struct let_go {
    Ops& ops;
    ~let_go() {
      ops.release.set();
      std::lock_guard lock(ops.mutex);
      ops.kept.clear();
    }
  } guard{ops};
  const std::string address = server.listen("127.0.0.1:0");
  auto client = geerpc::dial<geerpc::threaded>(address);

  auto deferred = client.async_call<int>(
      geerpc::with_metadata("traceparent", "00-" + std::string(w3c_trace) + "-00f067aa0ba902b7-01"), "Ops.Defer",
      Args{});
  REQUIRE(ops.started.wait_for_at_least(1));
  auto blocked = client.async_call<int>(geerpc::with_timeout(30s), "Ops.Block", Args{7, 0});
  REQUIRE(ops.started.wait_for_at_least(2));
  auto queued = client.async_call<int>(geerpc::with_metadata("traceparent", "<b>\"x\xff&"), "Ops.Block", Args{8, 0});
  std::string body;
  REQUIRE(test::eventually([&] {
    body = test::http_get(address, "/debug/geerpc/stats.json");
    return body.find("\"calls_in_flight\":{\"count\":3,") != std::string::npos;
  }));
  INFO(body);
  CHECK(test::strict_json::check(body).empty());

  // Oldest first: the deferred call, the blocked one, the queued one.
  const std::string first = listed_call(body, 0);
  const std::string second = listed_call(body, 1);
  const std::string third = listed_call(body, 2);
  CHECK(first.starts_with("{\"method\":\"Ops.Defer\",\"peer\":\"127.0.0.1:"));
  CHECK(first.find("\"deadline_unix_ms\":null,\"time_left_ns\":null") != std::string::npos);
  CHECK(first.find("\"trace_id\":\"" + std::string(w3c_trace) + "\"") != std::string::npos);
  CHECK(first.find("\"stage\":\"deferred to a responder\"") != std::string::npos);

  CHECK(second.starts_with("{\"method\":\"Ops.Block\""));
  CHECK(second.find("\"stage\":\"in the handler\"") != std::string::npos);
  CHECK(second.find("\"trace_id\":\"\"") != std::string::npos);
  const auto left_at = second.find("\"time_left_ns\":");
  REQUIRE(left_at != std::string::npos);
  const long long left = std::stoll(second.substr(left_at + 15));
  CHECK(left > 0);
  CHECK(left <= 30'000'000'000LL);
  const auto deadline_at = second.find("\"deadline_unix_ms\":");
  REQUIRE(deadline_at != std::string::npos);
  const long long deadline_ms = std::stoll(second.substr(deadline_at + 19));
  const long long now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  CHECK(deadline_ms > now_ms);
  CHECK(deadline_ms <= now_ms + 30'000);

  CHECK(third.find("\"stage\":\"waiting for a thread\"") != std::string::npos);
  CHECK(third.find("\"trace_id\":\"<b>\\\"x\\ufffd&\"") != std::string::npos);  // not W3C's: the value, escaped

  // The page says the same, escaped.
  const std::string page = test::http_get(address, "/debug/geerpc");
  CHECK(cell(page, "calls_in_flight_count").starts_with("3"));
  CHECK(cell(page, "call0/method") == "Ops.Defer");
  CHECK(cell(page, "call0/stage") == "deferred to a responder");
  CHECK(cell(page, "call0/trace_id") == w3c_trace);
  CHECK(cell(page, "call0/deadline") == "none");
  CHECK(cell(page, "call0/time_left") == "none");
  CHECK(cell(page, "call1/stage") == "in the handler");
  CHECK(cell(page, "call1/deadline").ends_with(" UTC"));
  CHECK(cell(page, "call1/time_left") != "none");
  CHECK(cell(page, "call2/stage") == "waiting for a thread");
  CHECK(cell(page, "call2/trace_id") == "&lt;b&gt;&quot;x&#xfffd;&amp;");
  CHECK(page.find("<b>\"x") == std::string::npos);

  ops.release.set();
  CHECK(blocked.get() == 7);
  CHECK(queued.get() == 8);
  {
    std::lock_guard lock(ops.mutex);
    REQUIRE(ops.kept.size() == 1);
    ops.kept.front()(5);
    ops.kept.clear();  // the call is released once its responder is gone too
  }
  CHECK(deferred.get() == 5);
  CHECK(test::eventually([&] {
    return test::http_get(address, "/debug/geerpc/stats.json")
               .find("\"calls_in_flight\":{\"count\":0,\"oldest\":[]}") != std::string::npos;
  }));
}

TEST_CASE("calls in flight: a deferred call answered while its responder lives on is shown as answered",
          "[in_flight]") {
  Ops ops;
  geerpc::basic_server<geerpc::threaded> server(test::with_test_io_threads({}));
  server.add<OpsApi>(ops);
  const struct let_go {
    Ops& ops;
    ~let_go() {
      std::lock_guard lock(ops.mutex);
      ops.kept.clear();
    }
  } guard{ops};
  const std::string address = server.listen("127.0.0.1:0");
  auto client = geerpc::dial<geerpc::threaded>(address);
  auto deferred = client.async_call<int>("Ops.Defer", Args{});
  REQUIRE(ops.started.wait_for_at_least(1));
  {
    std::lock_guard lock(ops.mutex);
    ops.kept.front()(5);  // answered, but the responder is kept
  }
  CHECK(deferred.get() == 5);
  const std::string body = test::http_get(address, "/debug/geerpc/stats.json");
  INFO(body);
  CHECK(body.find("\"calls_in_flight\":{\"count\":1,") != std::string::npos);
  CHECK(listed_call(body, 0).find("\"stage\":\"answered, its responder not yet released\"") != std::string::npos);
  {
    std::lock_guard lock(ops.mutex);
    ops.kept.clear();
  }
  CHECK(test::eventually([&] {
    return test::http_get(address, "/debug/geerpc/stats.json")
               .find("\"calls_in_flight\":{\"count\":0,\"oldest\":[]}") != std::string::npos;
  }));
}

TEST_CASE("calls in flight: past 100 calls the oldest 100 are listed and all are counted", "[in_flight]") {
  Ops ops;
  geerpc::basic_server<geerpc::threaded> server(test::with_test_io_threads({}));
  server.add<OpsApi>(ops);
  const struct let_go {
    Ops& ops;
    ~let_go() {
      std::lock_guard lock(ops.mutex);
      ops.kept.clear();
    }
  } guard{ops};
  const std::string address = server.listen("127.0.0.1:0");
  auto client = geerpc::dial<geerpc::threaded>(address);
  constexpr int calls = 450;  // past 4 x 100 rows, where the snapshot first trims its list
  std::vector<decltype(client.async_call<int>("Ops.Defer", Args{}))> deferred;
  for (int i = 0; i < calls; ++i) deferred.push_back(client.async_call<int>("Ops.Defer", Args{}));
  REQUIRE(ops.started.wait_for_at_least(calls));
  const std::string body = test::http_get(address, "/debug/geerpc/stats.json");
  CHECK(body.find("\"calls_in_flight\":{\"count\":450,") != std::string::npos);
  const std::string listed = body.substr(body.find("\"calls_in_flight\":"));
  std::size_t rows = 0;
  for (auto at = listed.find("{\"method\":"); at != std::string::npos; at = listed.find("{\"method\":", at + 1)) ++rows;
  CHECK(rows == 100);
  {
    std::lock_guard lock(ops.mutex);
    for (auto& reply : ops.kept) reply(1);
    ops.kept.clear();
  }
  for (auto& f : deferred) CHECK(f.get() == 1);
}

TEST_CASE("calls in flight: a traceparent's trace id is W3C's only when the whole value is", "[in_flight]") {
  const auto trace_of = [](std::string_view value) {
    std::vector<std::byte> block;
    const std::vector<std::pair<std::string, std::string>> entries = {{"traceparent", std::string(value)}};
    geerpc::wire::append_metadata(block, entries);
    // As a request keeps it: past its size field.
    return geerpc::detail::trace_id_of(std::span(block).subspan(geerpc::wire::metadata_size_field));
  };
  const std::string good = "00-" + std::string(w3c_trace) + "-00f067aa0ba902b7-01";
  CHECK(trace_of(good) == w3c_trace);
  CHECK(trace_of("01" + good.substr(2)) == "01" + good.substr(2));                      // another version: shown whole
  CHECK(trace_of("00-" + std::string(32, '0') + "-00f067aa0ba902b7-01").size() == 55);  // an all-zero trace id
  std::string upper = good;
  upper[3] = 'A';
  CHECK(trace_of(upper) == upper);
  CHECK(trace_of(good + "-") == good + "-");
  CHECK(trace_of(std::string(1000, 'x')) == std::string(128, 'x'));  // a long value: its start
  CHECK(geerpc::detail::trace_id_of({}).empty());
}

}  // namespace calls_in_flight_test
