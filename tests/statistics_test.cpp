// The statistics behind the debug page (server/statistics.hpp, server/debug_page.hpp): latency
// buckets and the one-minute window alone, then what a real server counts of known calls, what it
// reads of calls in flight and its pool, what each limit turned away, and a server with them off.
// The page in a browser and its JSON through a JSON library: tests/debug_page/.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <future>
#include <string>
#include <string_view>
#include <type_traits>

#include "catch.hpp"
#include "support.hpp"

namespace statistics_test {

using namespace std::chrono_literals;
using geerpc::detail::latency_buckets;
using geerpc::detail::latency_window;
using test::Args;

namespace {

// The JSON object of one method in stats.json.
std::string method_json(const std::string& body, std::string_view method) {
  const auto from = body.find("{\"name\":\"" + std::string(method) + "\"");
  if (from == std::string::npos) return {};
  const auto to = body.find("}}", from);
  return body.substr(from, to == std::string::npos ? std::string::npos : to + 2 - from);
}

// The number after `"key":` in `json`; -1 when there is none.
long long number_of(const std::string& json, std::string_view key) {
  const auto at = json.find("\"" + std::string(key) + "\":");
  if (at == std::string::npos) return -1;
  return std::stoll(json.substr(at + key.size() + 3));
}

std::string stats_json(const std::string& address) { return test::http_get(address, "/debug/geerpc/stats.json"); }

// How often `needle` occurs in `text`.
int occurrences(std::string_view text, std::string_view needle) {
  int found = 0;
  for (auto at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + needle.size())) ++found;
  return found;
}

}  // namespace

TEST_CASE("statistics: a latency's bucket holds it, and bucket bounds grow by at most 12.5%", "[statistics]") {
  std::uint64_t previous_upper = 0;
  for (std::size_t i = 0; i + 1 < latency_buckets::count; ++i) {
    const std::uint64_t upper = latency_buckets::upper(i);
    CHECK(latency_buckets::index(upper) == i);
    CHECK(latency_buckets::index(upper + 1) == i + 1);
    if (i >= 8) {
      INFO(i);
      CHECK(static_cast<double>(upper - previous_upper) <= 0.125 * static_cast<double>(previous_upper + 1) + 1);
    }
    previous_upper = upper;
  }
  CHECK(latency_buckets::index(0) == 0);
  CHECK(latency_buckets::index(std::uint64_t{1} << 50) == latency_buckets::count - 1);
  CHECK(latency_buckets::index(~std::uint64_t{0}) == latency_buckets::count - 1);
}

TEST_CASE("statistics: the window's percentiles and maximum, and it forgets what is a minute old", "[statistics]") {
  latency_window window;
  const auto t0 = std::chrono::steady_clock::time_point(1h);
  for (int i = 1; i <= 100; ++i) window.add(t0, std::chrono::milliseconds(i));  // 1..100 ms
  const auto s = window.read(t0);
  CHECK(s.count == 100);
  CHECK(s.max_ns == 100'000'000);
  CHECK(s.p50_ns >= 50'000'000);
  CHECK(s.p50_ns <= 50'000'000 * 1.125);
  CHECK(s.p99_ns >= 99'000'000);
  CHECK(s.p99_ns <= 100'000'000);  // never above the maximum
  // Ten seconds later a new slot takes new latencies; the old ones still count.
  window.add(t0 + 10s, 7ms);
  CHECK(window.read(t0 + 10s).count == 101);
  CHECK(window.read(t0 + 50s).count == 101);
  // A minute on, the first slot has left the window; then the second.
  CHECK(window.read(t0 + 60s).count == 1);
  CHECK(window.read(t0 + 60s).max_ns == 7'000'000);
  CHECK(window.read(t0 + 70s).count == 0);
  // Its slot coming round again starts empty.
  window.add(t0 + 60s, 3ms);
  CHECK(window.read(t0 + 60s).count == 2);
  CHECK(window.read(t0 + 60s).max_ns == 7'000'000);
  // A latency stamped a minute back, in the slot that has come round since, is dropped: it does
  // not turn that slot back and lose what it holds.
  window.add(t0, 1s);
  CHECK(window.read(t0 + 60s).count == 2);
  CHECK(window.read(t0 + 60s).max_ns == 7'000'000);
}

TEMPLATE_TEST_CASE("statistics: calls are counted per method by outcome, with latency: failed and slow calls are kept",
                   "[statistics]", GEERPC_TRANSPORTS) {
  geerpc::server_options opts;
  opts.observability.slow_call = 25ms;
  test::arith_server<TestType> s(opts);
  auto client = geerpc::dial<TestType>(s.address);
  for (int i = 0; i < 5; ++i) CHECK(client.template call<int>("Arith.Sum", Args{i, 1}) == i + 1);
  for (int i = 0; i < 2; ++i)
    CHECK(client.template try_call<int>("Arith.Fail", Args{}).code() == geerpc::errc::remote_error);
  CHECK(client.template try_call<int>("Arith.ThrowInt", Args{}).code() == geerpc::errc::remote_error);
  // A call is kept among the recent ones when its handler thread lets go of it, which can come
  // after the reply has reached the caller and the next (unrouted) calls were kept: the order
  // below is the one the server saw them finish in, so wait for the failures to be kept first.
  // (A method's "calls" counts a call from its arrival: waiting on it left that window open.)
  REQUIRE(test::eventually([&] {
    const std::string now = stats_json(s.address);
    const std::string kept = now.substr(std::min(now.size(), now.find("\"recent_calls\":")));
    return occurrences(kept, "\"method\":\"Arith.Fail\"") == 2 &&
           occurrences(kept, "\"method\":\"Arith.ThrowInt\"") == 1;
  }));
  CHECK(client.template try_call<int>("Arith.Nope", Args{}).code() == geerpc::errc::unknown_method);
  CHECK(client.template try_call<int>("Nope.Nope", Args{}).code() == geerpc::errc::unknown_service);
  CHECK(client.template call<std::string>("Arith.Echo", std::string("hi")) == "hi");
  {
    auto impatient = geerpc::dial<TestType>(s.address, {.timeouts = {.handle = 30ms}});
    CHECK(impatient.template try_call<int>("Arith.WaitForStop", Args{}).code() == geerpc::errc::handle_timeout);
  }
  // The timed-out handler is counted once it has returned (it saw its stop_token).
  std::string body;
  REQUIRE(test::eventually([&] {
    body = stats_json(s.address);
    return number_of(method_json(body, "Arith.WaitForStop"), "calls") == 1 &&
           number_of(method_json(body, "Arith.WaitForStop"), "in_flight") == 0;
  }));
  INFO(body);
  CHECK(body.starts_with("{\"statistics\":true,"));

  const std::string sum = method_json(body, "Arith.Sum");
  CHECK(sum.find("\"signature\":\"(test::Args{num1: int, num2: int}) -> int\"") != std::string::npos);
  CHECK(number_of(sum, "calls") == 5);
  CHECK(number_of(sum, "successes") == 5);
  CHECK(sum.find("\"errors\":{}") != std::string::npos);
  CHECK(number_of(sum.substr(sum.find("latency_last_minute")), "calls") == 5);
  CHECK(number_of(sum, "max_ns") > 0);

  const std::string fail = method_json(body, "Arith.Fail");
  CHECK(number_of(fail, "calls") == 2);
  CHECK(number_of(fail, "successes") == 0);
  CHECK(fail.find("\"errors\":{\"remote_error\":2}") != std::string::npos);
  CHECK(method_json(body, "Arith.ThrowInt").find("\"errors\":{\"remote_error\":1}") != std::string::npos);
  CHECK(method_json(body, "Arith.Echo").find("\"signature\":\"(std::string) -> std::string\"") != std::string::npos);

  const std::string wait = method_json(body, "Arith.WaitForStop");
  CHECK(wait.find("\"errors\":{\"handle_timeout\":1}") != std::string::npos);
  CHECK(number_of(wait, "max_ns") >= 30'000'000);
  CHECK(number_of(wait, "p99_ns") >= 30'000'000);
  CHECK(body.find("\"unrouted_errors\":{\"unknown_service\":1,\"unknown_method\":1}") != std::string::npos);

  // The failed and slow ones, newest first: the timeout, then the unknown names, then the failures.
  const std::string recent = body.substr(body.find("\"recent_calls\":"));
  const auto timeout_at = recent.find("\"method\":\"Arith.WaitForStop\"");
  const auto unknown_at = recent.find("\"method\":\"Arith.Nope\"");
  const auto fail_at = recent.find("\"method\":\"Arith.Fail\"");
  CHECK(timeout_at < unknown_at);
  CHECK(unknown_at < fail_at);
  CHECK(fail_at != std::string::npos);
  CHECK(recent.find("\"outcome\":\"handle_timeout\"") != std::string::npos);
  CHECK(recent.find("\"message\":\"boom: handler failed\"") != std::string::npos);
  CHECK(recent.find("Arith.Sum") == std::string::npos);
  CHECK(recent.find("Arith.Echo") == std::string::npos);

  const std::string page = test::http_get(s.address, "/debug/geerpc");
  CHECK(page.find("id=\"Arith.Sum/calls\">5</td>") != std::string::npos);
  CHECK(page.find("id=\"Arith.Fail/errors\">remote_error: 2</td>") != std::string::npos);
  CHECK(page.find("id=\"Arith.WaitForStop/errors\">handle_timeout: 1</td>") != std::string::npos);
  CHECK(page.find("<td>(test::Args{num1: int, num2: int}) -&gt; int</td>") ==
        std::string::npos);  // escaped, and in its own cell:
  CHECK(page.find("id=\"Arith.Sum/types\">(test::Args{num1: int, num2: int}) -&gt; int</td>") != std::string::npos);
  CHECK(page.find("boom: handler failed") != std::string::npos);
}

TEMPLATE_TEST_CASE("statistics: calls in flight, the oldest's age and the busy threads are read as they are",
                   "[statistics]", GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s;
  geerpc::client first = geerpc::dial(s.address);
  geerpc::client second = geerpc::dial(s.address);  // the blocking server runs one call at a time per connection
  auto a = first.async_call<int>("Arith.Late", Args{1, 0});
  auto b = second.async_call<int>("Arith.Late", Args{2, 0});
  REQUIRE(s.arith.started.wait_for_at_least(2));
  // An earlier request's connection leaves the count only after its client saw the end: ask again until it has.
  std::string body;
  REQUIRE(test::eventually([&] {
    body = stats_json(s.address);
    return number_of(body, "http_connections") == 1;
  }));
  INFO(body);
  const std::string late = method_json(body, "Arith.Late");
  CHECK(number_of(late, "in_flight") == 2);
  CHECK(number_of(late, "calls") == 2);
  CHECK(number_of(late, "oldest_in_flight_ns") > 0);
  CHECK(number_of(body.substr(body.find("\"pool\":")), "busy") == 2);
  // The two clients; this request's own connection is the web's, counted apart and not listed.
  CHECK(number_of(body, "connection_count") == 2);
  CHECK(number_of(body, "http_connections") == 1);
  const auto listed = body.find("\"connections\":[");
  CHECK(occurrences(body.substr(listed, body.find("\"calls_in_flight\":") - listed), "\"peer\":") == 2);
  CHECK(body.find("\"in_flight\":1,\"pending_output_bytes\"") != std::string::npos);  // a client's connection
  s.arith.release.set();
  CHECK(a.get() == 1000);
  CHECK(b.get() == 2000);
  REQUIRE(test::eventually([&] {
    const std::string now = method_json(stats_json(s.address), "Arith.Late");
    return number_of(now, "successes") == 2 && number_of(now, "in_flight") == 0;
  }));
}

TEMPLATE_TEST_CASE("statistics: a request waiting for a handler thread shows in the pool, and its wait once it runs",
                   "[statistics]", geerpc::threaded, test::plain_threaded) {
  geerpc::server_options opts;
  opts.threads.handlers = 1;
  opts.threads.max_handlers = 1;
  test::arith_server<TestType> s(opts);
  auto client = geerpc::dial<TestType>(s.address);
  auto blocked = client.template async_call<int>("Arith.Late", Args{1, 0});
  REQUIRE(s.arith.started.wait_for_at_least(1));
  auto queued = client.template async_call<int>("Arith.Sum", Args{1, 2});
  std::string pool;
  REQUIRE(test::eventually([&] {
    const std::string body = stats_json(s.address);
    pool = body.substr(body.find("\"pool\":"));
    return number_of(pool, "waiting") == 1;
  }));
  INFO(pool);
  CHECK(number_of(pool, "busy") == 1);
  CHECK(number_of(pool, "oldest_waiting_ns") > 0);
  s.arith.release.set();
  CHECK(blocked.get() == 1000);
  CHECK(queued.get() == 3);
  const std::string body = stats_json(s.address);
  const std::string after = body.substr(body.find("\"pool\":"));
  CHECK(number_of(after, "waiting") == 0);
  CHECK(number_of(after, "longest_wait_ns") > 0);
}

TEMPLATE_TEST_CASE("statistics: each limit counts what it turned away", "[statistics][hostile]", GEERPC_TRANSPORTS) {
  geerpc::server_options opts;
  opts.limits.max_inflight_per_connection = 1;
  opts.limits.max_connections = 3;
  opts.timeouts.handshake = 100ms;
  opts.limits.max_frame_size = 4096;
  test::arith_server<TestType> s(opts);
  const auto turned_away = [&](std::string_view limit) {
    const std::string body = stats_json(s.address);
    return number_of(body.substr(body.find("\"turned_away\":")), limit);
  };
  CHECK(turned_away("max_inflight_per_connection") == 0);
  // The blocking server reads a connection's next request once the last has been answered: it
  // never has two in flight on one connection.
  constexpr bool reads_ahead = !std::is_same_v<TestType, geerpc::blocking>;
  if constexpr (reads_ahead) {
    geerpc::client client = geerpc::dial(s.address);
    auto blocked = client.async_call<int>("Arith.Late", Args{1, 0});
    REQUIRE(s.arith.started.wait_for_at_least(1));
    CHECK(client.try_call<int>("Arith.Sum", Args{}).code() == geerpc::errc::busy);
    CHECK(turned_away("max_inflight_per_connection") == 1);
    s.arith.release.set();
    CHECK(blocked.get() == 1000);
  }
  {
    test::raw_peer big(s.address);  // a frame whose length says 1 MiB
    big.send_hello();
    REQUIRE(big.read_hello_reply());
    big.send(std::string("\x00\x00\x10\x00", 4));
    CHECK(big.closed_by_peer());
    CHECK(turned_away("max_frame_size") == 1);
  }
  {
    test::raw_peer silent(s.address);  // says nothing: dropped after the handshake timeout
    CHECK(silent.closed_by_peer());
    REQUIRE(test::eventually([&] { return turned_away("handshake_timeout_ns") == 1; }));
  }
  // The raw peers' and the page reads' connections count against the limit until the server has
  // seen them close.
  REQUIRE(test::eventually([&] { return s.server.connection_count() == 0; }));
  {
    auto one = geerpc::dial<TestType>(s.address);
    auto two = geerpc::dial<TestType>(s.address);
    auto three = geerpc::dial<TestType>(s.address);
    REQUIRE(test::eventually([&] { return s.server.connection_count() == 3; }));
    CHECK(geerpc::try_dial(s.address, {.timeouts = {.connect = 1s}}).code() == geerpc::errc::handshake_rejected);
  }
  REQUIRE(test::eventually([&] { return s.server.connection_count() == 0; }));
  CHECK(turned_away("max_connections") == 1);
  CHECK(turned_away("max_inflight") == 0);
  const std::string page = test::http_get(s.address, "/debug/geerpc");
  CHECK(page.find("id=\"limits/max_connections/turned_away\">1</td>") != std::string::npos);
}

TEMPLATE_TEST_CASE("statistics off: the page says so, and the server keeps none", "[statistics]", GEERPC_TRANSPORTS) {
  geerpc::server_options opts;
  opts.observability.statistics = false;
  test::arith_server<TestType> s(opts);
  auto client = geerpc::dial<TestType>(s.address);
  CHECK(client.template call<int>("Arith.Sum", Args{1, 2}) == 3);
  const std::string body = stats_json(s.address);
  CHECK(body.starts_with("{\"statistics\":false,"));
  CHECK(body.find("\"successes\"") == std::string::npos);
  CHECK(body.find("\"recent_calls\"") == std::string::npos);
  CHECK(body.find("\"signature\":\"(test::Args{num1: int, num2: int}) -> int\"") != std::string::npos);
  CHECK(test::http_get(s.address, "/debug/geerpc").find("id=\"statistics-off\"") != std::string::npos);
}

}  // namespace statistics_test
