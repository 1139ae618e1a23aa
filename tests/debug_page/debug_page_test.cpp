// The debug page as someone chasing a timeout sees it: a server makes known calls (quick ones,
// slow ones, failing ones, one that times out, one still running), headless Chromium loads
// /debug/geerpc, and the numbers in the page it rendered are checked; a screenshot is kept under
// <build>/artifacts/. stats.json is parsed with nlohmann-json and must say the same.
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>

#include "catch.hpp"
#include "support.hpp"

using namespace std::chrono_literals;

struct Order {  // outside the anonymous namespace: the page shows its name as "Order"
  int item;
  int count;
};

namespace {

struct Shop {
  test::event release;
  test::counter holding;

  int quote(const Order& o) { return o.item * o.count; }
  int slow_quote(const Order& o) {
    std::this_thread::sleep_for(40ms);  // the work itself is slow: what the page must show
    return o.item * o.count;
  }
  int broken(const Order&) { throw std::runtime_error("out of stock"); }
  int stuck(const Order&, std::stop_token stop) {
    test::event never;
    while (!stop.stop_requested()) never.wait(2ms);  // returns once the handle timeout fires
    return 0;
  }
  int hold(const Order& o) {
    holding.add();
    release.wait();
    return o.item;
  }
};

using ShopApi = geerpc::service<"Shop", geerpc::method<"Quote", &Shop::quote>,
                                geerpc::method<"SlowQuote", &Shop::slow_quote>, geerpc::method<"Broken", &Shop::broken>,
                                geerpc::method<"Stuck", &Shop::stuck>, geerpc::method<"Hold", &Shop::hold>>;

// What `command` printed on its standard output; throws if it failed.
std::string run(const std::string& command) {
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  std::string out;
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  const int status = ::pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("failed (" + std::to_string(status) + "): " + command);
  return out;
}

// Headless Chromium with a fresh profile, as Debian's runs as root.
std::string chromium(const std::string& profile, const std::string& what) {
  return std::string("timeout 90 ") + GEERPC_TEST_CHROMIUM +
         " --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking"
         " --disable-component-update --disable-sync --user-data-dir=" +
         profile + " " + what;
}

// The text of the element with id `id` in Chromium's dump of the page.
std::string text_of(const std::string& dom, const std::string& id) {
  const std::string key = "id=\"" + id + "\">";
  const auto at = dom.find(key);
  if (at == std::string::npos) return "(no element " + id + ")";
  const auto from = at + key.size();
  return dom.substr(from, dom.find('<', from) - from);
}

}  // namespace

TEST_CASE("the debug page in headless Chromium shows the calls made, and stats.json says the same", "[chromium]") {
  Shop shop;
  geerpc::server_options opts;
  opts.observability.slow_call = 20ms;
  geerpc::server server(opts);
  server.add<ShopApi>(shop);
  const std::string address = server.listen("127.0.0.1:0");

  auto client = geerpc::dial(address);
  for (int i = 0; i < 10; ++i) CHECK(client.call<int>("Shop.Quote", Order{i, 2}) == 2 * i);
  for (int i = 0; i < 3; ++i) CHECK(client.call<int>("Shop.SlowQuote", Order{i, 3}) == 3 * i);
  for (int i = 0; i < 2; ++i) CHECK(client.try_call<int>("Shop.Broken", Order{}).code() == geerpc::errc::remote_error);
  CHECK(client.try_call<int>("Shop.Refund", Order{}).code() == geerpc::errc::unknown_method);
  {
    auto impatient = geerpc::dial(address, {.timeouts = {.handle = 50ms}});
    CHECK(impatient.try_call<int>("Shop.Stuck", Order{}).code() == geerpc::errc::handle_timeout);
  }
  // In flight while the page loads, with a deadline and a W3C traceparent.
  const std::string trace = "0af7651916cd43dd8448eb211c80319c";
  auto held = client.async_call<int>(
      geerpc::with_timeout(60s).with_metadata("traceparent", "00-" + trace + "-b7ad6b7169203331-01"), "Shop.Hold",
      Order{7, 1});
  REQUIRE(shop.holding.wait_for_at_least(1));

  // Every finished call counted (the timed-out handler returns a moment after its answer).
  nlohmann::json stats;
  REQUIRE(test::eventually([&] {
    stats = nlohmann::json::parse(test::http_get(address, "/debug/geerpc/stats.json"));
    for (const auto& m : stats["methods"])
      if (m["name"] == "Shop.Stuck") return m["calls"] == 1 && m["in_flight"] == 0;
    return false;
  }));

  const std::filesystem::path artifacts = GEERPC_TEST_ARTIFACTS;
  std::filesystem::create_directories(artifacts);
  test::temp_dir profile;
  const std::string url = "http://" + address + "/debug/geerpc";
  const std::string dom = run(chromium(profile.path(), "--dump-dom " + url) + " 2>" + profile.path() + "/stderr");
  INFO(dom);
  REQUIRE(dom.find("<h1>geerpc debug</h1>") != std::string::npos);

  CHECK(text_of(dom, "Shop.Quote/calls") == "10");
  CHECK(text_of(dom, "Shop.Quote/successes") == "10");
  CHECK(text_of(dom, "Shop.Quote/errors") == "none");
  CHECK(text_of(dom, "Shop.Quote/types") == "(Order{item: int, count: int}) -&gt; int");
  CHECK(text_of(dom, "Shop.SlowQuote/calls") == "3");
  CHECK(text_of(dom, "Shop.SlowQuote/window_calls") == "3");
  CHECK(text_of(dom, "Shop.Broken/errors") == "remote_error: 2");
  CHECK(text_of(dom, "Shop.Stuck/errors") == "handle_timeout: 1");
  CHECK(text_of(dom, "Shop.Hold/in_flight") == "1");
  CHECK(text_of(dom, "Shop.Hold/calls") == "1");
  CHECK(text_of(dom, "Shop.Hold/oldest") != "-");
  CHECK(text_of(dom, "unrouted") == "unknown_method: 1");
  // p50 of successes apart from failures, and sizes.
  CHECK(text_of(dom, "Shop.Quote/ok_p50") != "-");
  CHECK(text_of(dom, "Shop.Quote/failed_p50") == "-");
  CHECK(text_of(dom, "Shop.Broken/ok_p50") == "-");
  CHECK(text_of(dom, "Shop.Broken/failed_p99") != "-");
  CHECK(text_of(dom, "Shop.Quote/request_bytes").find(" B, p99 &lt;= 64 B") != std::string::npos);
  // The call in flight, listed.
  CHECK(text_of(dom, "calls_in_flight_count") == "1");
  CHECK(text_of(dom, "call0/method") == "Shop.Hold");
  CHECK(text_of(dom, "call0/stage") == "in the handler");
  CHECK(text_of(dom, "call0/trace_id") == trace);
  CHECK(text_of(dom, "call0/deadline").ends_with(" UTC"));
  CHECK(text_of(dom, "call0/time_left").ends_with("s"));
  CHECK(text_of(dom, "pool/busy") == "1");
  CHECK(text_of(dom, "limits/max_connections") == "10000");
  // Slow calls and failed ones are listed: the three slow quotes, two failures, the timeout and
  // the unknown method (a quick quote only if the machine stalled it past 20 ms).
  const std::string recent = dom.substr(dom.find("id=\"recent\""));
  CHECK(recent.find("Shop.SlowQuote") != std::string::npos);
  CHECK(recent.find("out of stock") != std::string::npos);
  CHECK(recent.find("handle_timeout") != std::string::npos);
  CHECK(recent.find("Shop.Refund") != std::string::npos);
  // The p99 of the slow quotes is at least their 40 ms, as Chromium shows it ("4xms").
  const std::string p99 = text_of(dom, "Shop.SlowQuote/p99");
  CHECK(p99.ends_with("ms"));
  CHECK(std::stod(p99) >= 40.0);

  // A picture of it, kept for people.
  const auto shot = artifacts / "debug_page.png";
  std::filesystem::remove(shot);
  run(chromium(profile.path(), "--window-size=1600,2000 --screenshot=" + shot.string() + " " + url) + " 2>>" +
      profile.path() + "/stderr");
  CHECK(std::filesystem::file_size(shot) > 10'000);

  // The JSON, parsed: the same numbers.
  const auto method = [&](const std::string& name) {
    for (const auto& m : stats["methods"])
      if (m["name"] == name) return m;
    return nlohmann::json();
  };
  CHECK(stats["statistics"] == true);
  CHECK(method("Shop.Quote")["calls"] == 10);
  CHECK(method("Shop.Quote")["successes"] == 10);
  CHECK(method("Shop.Quote")["signature"] == "(Order{item: int, count: int}) -> int");
  CHECK(method("Shop.Broken")["errors"]["remote_error"] == 2);
  CHECK(method("Shop.Stuck")["errors"]["handle_timeout"] == 1);
  CHECK(method("Shop.SlowQuote")["latency_last_minute"]["calls"] == 3);
  CHECK(method("Shop.SlowQuote")["latency_last_minute"]["max_ns"].get<std::uint64_t>() >= 40'000'000u);
  CHECK(method("Shop.Hold")["in_flight"] == 1);
  CHECK(method("Shop.Broken")["latency_failed_last_minute"]["calls"] == 2);
  CHECK(method("Shop.Broken")["latency_ok_last_minute"]["calls"] == 0);
  CHECK(method("Shop.Quote")["request_bytes"]["count"] == 10);
  REQUIRE(stats["calls_in_flight"]["count"] == 1);
  const auto& in_flight = stats["calls_in_flight"]["oldest"][0];
  CHECK(in_flight["method"] == "Shop.Hold");
  CHECK(in_flight["stage"] == "in the handler");
  CHECK(in_flight["trace_id"] == trace);
  CHECK(in_flight["time_left_ns"].get<std::int64_t>() > 0);
  CHECK(stats["unrouted_errors"]["unknown_method"] == 1);
  CHECK(stats["pool"]["busy"] == 1);
  CHECK(stats["limits"]["max_connections"] == 10000);
  std::size_t kept = 0;
  for (const auto& call : stats["recent_calls"]) kept += call["method"] != "Shop.Quote";
  CHECK(kept == 7);  // 3 slow, 2 failed, 1 timeout, 1 unknown
  CHECK(stats["turned_away"]["max_inflight"] == 0);

  shop.release.set();
  CHECK(held.get() == 7);
}
