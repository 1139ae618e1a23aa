// GET /metrics (server/metrics_text.hpp): the server's counters in Prometheus's text format, read
// over a raw socket and checked line by line: names, labels, cumulative buckets, counts that match
// the calls made, label escaping, the debug page's policy, and a server with statistics off. The
// scrape through Prometheus's own Python parser: tests/metrics/parse_scrape.py (ctest metrics.parser).
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace metrics_test {

using test::Args;

namespace {

// The samples of a scrape: "name{labels}" -> value text; and the families a # TYPE line named.
struct scrape {
  std::map<std::string, std::string> samples;
  std::map<std::string, std::string> types;  // family -> counter, gauge, histogram
  std::vector<std::string> order;            // the sample names, as they came
};

scrape parse(const std::string& body) {
  scrape out;
  std::size_t at = 0;
  while (at < body.size()) {
    const auto end = body.find('\n', at);
    const std::string line = body.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? body.size() : end + 1;
    if (line.starts_with("# TYPE ")) {
      const auto space = line.find(' ', 7);
      out.types[line.substr(7, space - 7)] = line.substr(space + 1);
    } else if (!line.starts_with("#") && !line.empty()) {
      const auto space = line.rfind(' ');
      out.samples[line.substr(0, space)] = line.substr(space + 1);
      out.order.push_back(line.substr(0, line.find('{')));
    }
  }
  return out;
}

std::string method_labels(std::string_view method) {
  return "rpc_system=\"geerpc\",rpc_service=\"Arith\",rpc_method=\"" + std::string(method) + "\"";
}

// The value of `name{labels}`, or -1 when the scrape has no such sample.
long long value_of(const scrape& s, const std::string& name, const std::string& labels) {
  const auto it = s.samples.find(name + "{" + labels + "}");
  return it == s.samples.end() ? -1 : std::stoll(it->second);
}

// The value of a histogram's `name_sum{labels}` (a fraction), or -1 when the scrape has none.
double sum_of(const scrape& s, const std::string& name, const std::string& labels) {
  const auto it = s.samples.find(name + "_sum{" + labels + "}");
  return it == s.samples.end() ? -1 : std::stod(it->second);
}

std::string get_metrics(const std::string& address) {
  return test::http_exchange(address, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
}
std::string body_of(const std::string& response) { return response.substr(response.find("\r\n\r\n") + 4); }

// Checks one histogram of the scrape: its buckets in order of their bounds, cumulative, the last
// +Inf, equal to _count; returns _count.
long long checked_histogram(const scrape& s, const std::string& name, const std::string& labels,
                            const std::vector<std::string>& bounds) {
  long long previous = 0;
  for (const std::string& le : bounds) {
    INFO(name << " le=" << le);
    const long long n = value_of(s, name + "_bucket", labels + ",le=\"" + le + "\"");
    CHECK(n >= previous);
    previous = n;
  }
  const long long count = value_of(s, name + "_count", labels);
  CHECK(value_of(s, name + "_bucket", labels + ",le=\"+Inf\"") == count);
  CHECK(s.samples.count(name + "_sum{" + labels + "}") == 1);
  return count;
}

const std::vector<std::string> duration_les = {"0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005",
                                               "0.01",   "0.025",   "0.05",   "0.1",   "0.25",   "0.5",
                                               "1",      "2.5",     "5",      "10"};
const std::vector<std::string> size_les = {"64",    "256",    "1024",    "4096",    "16384",
                                           "65536", "262144", "1048576", "4194304", "16777216"};

// Makes the calls the scrape is checked against: 5 successes and 2 failures of Arith.Sum and
// Arith.Fail, an echo of 3000 bytes, and a call for a made-up name.
template <class Client>
void make_known_calls(Client& client) {
  for (int i = 0; i < 5; ++i) CHECK(client.template call<int>("Arith.Sum", Args{i, 1}) == i + 1);
  for (int i = 0; i < 2; ++i)
    CHECK(client.template try_call<int>("Arith.Fail", Args{}).code() == geerpc::errc::remote_error);
  CHECK(client.template call<std::string>("Arith.Echo", std::string(3000, 'x')).size() == 3000);
  CHECK(client.template try_call<int>("Arith.No\"pe\n{x=\"1\"}\xff", Args{}).code() == geerpc::errc::unknown_method);
}

// Problems with the scrape's text format, one line each (none: every line is a # HELP or # TYPE
// line, or a sample `name{label="value",...} value` of the family the # TYPE before it named, with
// an unsigned integer value, and each family is named once).
std::vector<std::string> format_problems(const std::string& body) {
  std::vector<std::string> problems;
  std::string family;  // the one the last # TYPE named
  std::map<std::string, int> helps, types;
  const auto bad = [&](const std::string& line, const std::string& why) { problems.push_back(why + ": " + line); };
  if (body.empty() || body.back() != '\n') problems.emplace_back("the body does not end with a line feed");
  std::size_t at = 0;
  while (at < body.size()) {
    const auto end = body.find('\n', at);
    const std::string line = body.substr(at, end - at);
    at = end == std::string::npos ? body.size() : end + 1;
    if (line.starts_with("# HELP ")) {
      ++helps[line.substr(7, line.find(' ', 7) - 7)];
    } else if (line.starts_with("# TYPE ")) {
      const auto space = line.find(' ', 7);
      family = line.substr(7, space - 7);
      ++types[family];
      const std::string type = space == std::string::npos ? "" : line.substr(space + 1);
      if (type != "counter" && type != "gauge" && type != "histogram") bad(line, "a type");
    } else {
      const auto brace = line.find('{');
      const auto close = line.rfind("} ");
      if (brace == std::string::npos || close == std::string::npos || close < brace) {
        bad(line, "not a sample");
        continue;
      }
      const std::string name = line.substr(0, brace);
      if (name != family && !(name.starts_with(family + "_") && types.count(name) == 0)) bad(line, "another family");
      const std::string value = line.substr(close + 2);
      if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) bad(line, "a value");
      // The labels: name="value" pairs, commas between them; the values have no quote unescaped.
      const std::string labels = line.substr(brace + 1, close - brace - 1);
      std::size_t l = 0;
      while (l < labels.size()) {
        const auto eq = labels.find("=\"", l);
        if (eq == std::string::npos || eq == l) {
          bad(line, "a label");
          break;
        }
        auto q = eq + 2;
        while (q < labels.size() && labels[q] != '"') q += labels[q] == '\\' ? 2 : 1;
        if (q >= labels.size() || (q + 1 < labels.size() && labels[q + 1] != ',')) {
          bad(line, "a label value");
          break;
        }
        l = q + 2;
      }
    }
  }
  for (const auto& [name, n] : types)
    if (n != 1 || helps[name] != 1) problems.push_back("family " + name + " not named once by # HELP and # TYPE");
  return problems;
}

}  // namespace

TEST_CASE("metrics: label values are escaped and always valid UTF-8, and seconds are written exactly", "[metrics]") {
  std::string out;
  geerpc::detail::append_label_value(out, "a\"b\\c\nd\x01\xff\xc3\xa9");
  CHECK(out == "a\\\"b\\\\c\\nd\xef\xbf\xbd\xef\xbf\xbd\xc3\xa9");
  CHECK(geerpc::detail::seconds_text(0) == "0");
  CHECK(geerpc::detail::seconds_text(250'000) == "0.00025");
  CHECK(geerpc::detail::seconds_text(2'500'000'000) == "2.5");
  CHECK(geerpc::detail::seconds_text(10'000'000'000) == "10");
  CHECK(geerpc::detail::seconds_text(1'000'000'001) == "1.000000001");
}

TEMPLATE_TEST_CASE("metrics: a scrape counts each method's calls by outcome, in cumulative histograms", "[metrics]",
                   GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  make_known_calls(client);
  // A call is counted once its handler's thread lets go of it, which may follow its reply.
  std::string response;
  scrape m;
  REQUIRE(test::eventually([&] {
    response = get_metrics(s.address);
    m = parse(body_of(response));
    return value_of(m, "rpc_server_calls_total", method_labels("Sum") + ",rpc_geerpc_status=\"ok\"") == 5 &&
           value_of(m, "rpc_server_calls_total", method_labels("Fail") + ",rpc_geerpc_status=\"remote_error\"") == 2 &&
           value_of(m, "rpc_server_calls_total", method_labels("Echo") + ",rpc_geerpc_status=\"ok\"") == 1 &&
           value_of(m, "rpc_server_unrouted_calls_total",
                    "rpc_system=\"geerpc\",rpc_geerpc_status=\"unknown_method\"") == 1 &&
           // An earlier scrape's connection leaves the count only after its client saw the end.
           value_of(m, "rpc_server_http_connections", "rpc_system=\"geerpc\"") == 1;
  }));
  INFO(response);
  CHECK(response.starts_with("HTTP/1.0 200 OK\r\n"));
  CHECK(response.find("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n") != std::string::npos);
  CHECK(response.ends_with("\n"));

  // Each sample's family was announced by # TYPE (a histogram's under its base name).
  for (const std::string& name : m.order) {
    std::string family = name;
    for (const std::string_view suffix : {"_bucket", "_sum", "_count"})
      if (family.ends_with(suffix) && m.types.count(family) == 0)
        family = family.substr(0, family.size() - suffix.size());
    INFO(name);
    CHECK(m.types.count(family) == 1);
  }
  CHECK(m.types["rpc_server_call_duration_seconds"] == "histogram");
  CHECK(m.types["rpc_server_calls_total"] == "counter");
  CHECK(m.types["rpc_server_calls_in_flight"] == "gauge");

  // Durations: successes apart from failures, _count as many as the calls made.
  const std::string ok = ",rpc_outcome=\"ok\"";
  const std::string error = ",rpc_outcome=\"error\"";
  CHECK(checked_histogram(m, "rpc_server_call_duration_seconds", method_labels("Sum") + ok, duration_les) == 5);
  CHECK(checked_histogram(m, "rpc_server_call_duration_seconds", method_labels("Sum") + error, duration_les) == 0);
  CHECK(checked_histogram(m, "rpc_server_call_duration_seconds", method_labels("Fail") + ok, duration_les) == 0);
  CHECK(checked_histogram(m, "rpc_server_call_duration_seconds", method_labels("Fail") + error, duration_les) == 2);
  // _sum is in seconds: more than nothing, less than each call taking the largest bound (10 s).
  for (const std::string& labels : {method_labels("Sum") + ok, method_labels("Fail") + error}) {
    INFO(labels);
    const double sum = sum_of(m, "rpc_server_call_duration_seconds", labels);
    CHECK(sum > 0);
    CHECK(sum < 10.0 * static_cast<double>(value_of(m, "rpc_server_call_duration_seconds_count", labels)));
  }
  CHECK(value_of(m, "rpc_server_calls_total", method_labels("Sum") + ",rpc_geerpc_status=\"remote_error\"") == -1);
  CHECK(value_of(m, "rpc_server_calls_total", method_labels("Fail") + ",rpc_geerpc_status=\"ok\"") == 0);

  // Sizes: Echo's 3000 bytes went both ways, in the bucket up to 4096 and not the one up to 1024.
  CHECK(checked_histogram(m, "rpc_server_request_size_bytes", method_labels("Echo"), size_les) == 1);
  CHECK(checked_histogram(m, "rpc_server_response_size_bytes", method_labels("Echo"), size_les) == 1);
  CHECK(checked_histogram(m, "rpc_server_response_size_bytes", method_labels("Fail"), size_les) == 2);
  for (const std::string name : {"rpc_server_request_size_bytes", "rpc_server_response_size_bytes"}) {
    INFO(name);
    CHECK(value_of(m, name + "_bucket", method_labels("Echo") + ",le=\"1024\"") == 0);
    CHECK(value_of(m, name + "_bucket", method_labels("Echo") + ",le=\"4096\"") == 1);
    CHECK(value_of(m, name + "_sum", method_labels("Echo")) > 3000);
  }
  // The reply's payload, as OpenTelemetry means it: the 3000 bytes and their length, not the frame's header.
  CHECK(value_of(m, "rpc_server_response_size_bytes_sum", method_labels("Echo")) <
        3000 + static_cast<long long>(geerpc::wire::frame_overhead));
  const long long waits = checked_histogram(m, "rpc_server_queue_wait_seconds", "rpc_system=\"geerpc\"", duration_les);
  CHECK(waits >= 8);
  CHECK(sum_of(m, "rpc_server_queue_wait_seconds", "rpc_system=\"geerpc\"") >= 0);
  CHECK(sum_of(m, "rpc_server_queue_wait_seconds", "rpc_system=\"geerpc\"") < 10.0 * static_cast<double>(waits));

  // The made-up name is counted by its status alone: nothing a peer sent becomes a label.
  CHECK(value_of(m, "rpc_server_unrouted_calls_total", "rpc_system=\"geerpc\",rpc_geerpc_status=\"unknown_method\"") ==
        1);
  CHECK(response.find("No\\\"pe") == std::string::npos);
  CHECK(response.find("x=") == std::string::npos);

  // What is known now, and the limits' counters. The scrape's own connection is not an RPC one.
  CHECK(value_of(m, "rpc_server_connections", "rpc_system=\"geerpc\"") == 1);
  CHECK(value_of(m, "rpc_server_http_connections", "rpc_system=\"geerpc\"") == 1);
  CHECK(value_of(m, "rpc_server_calls_in_flight", "rpc_system=\"geerpc\"") == 0);
  CHECK(value_of(m, "rpc_server_method_calls_in_flight", method_labels("Sum")) == 0);
  CHECK(value_of(m, "rpc_server_turned_away_total", "rpc_system=\"geerpc\",limit=\"max_inflight\"") == 0);
}

TEST_CASE("metrics: a peer the debug page's policy refuses gets the 404 of a path that does not exist", "[metrics]") {
  test::arith_server<geerpc::threaded> s(test::with_debug_page(geerpc::debug_page_policy::off()));
  for (const std::string method : {"GET", "HEAD", "POST"}) {
    INFO(method);
    const std::string refused = test::http_exchange(s.address, method + " /metrics HTTP/1.0\r\n\r\n");
    std::string missing = test::http_exchange(s.address, method + " /metric~ HTTP/1.0\r\n\r\n");
    CHECK(refused.starts_with("HTTP/1.0 404 Not Found\r\n"));
    if (const auto at = missing.find("/metric~"); at != std::string::npos) missing.replace(at, 8, "/metrics");
    CHECK(refused == missing);
  }
}

TEST_CASE("metrics: with statistics off, only what is known without them", "[metrics]") {
  geerpc::server_options opts;
  opts.observability.statistics = false;
  test::arith_server<geerpc::threaded> s(opts);
  auto client = geerpc::dial<geerpc::threaded>(s.address);
  CHECK(client.call<int>("Arith.Sum", Args{1, 2}) == 3);
  const std::string body = body_of(get_metrics(s.address));
  INFO(body);
  const scrape m = parse(body);
  CHECK(value_of(m, "rpc_server_connections", "rpc_system=\"geerpc\"") >= 1);
  CHECK(m.samples.count("rpc_server_calls_in_flight{rpc_system=\"geerpc\"}") == 1);
  CHECK(m.samples.count("rpc_server_handler_threads{rpc_system=\"geerpc\"}") == 1);
  CHECK(m.types.count("rpc_server_calls_total") == 0);
  CHECK(m.types.count("rpc_server_call_duration_seconds") == 0);
}

TEST_CASE("metrics: with statistics off, a valid scrape of the server-wide gauges alone, a call in flight counted",
          "[metrics]") {
  geerpc::server_options opts;
  opts.observability.statistics = false;
  test::arith_server<geerpc::threaded> s(opts);
  auto client = geerpc::dial<geerpc::threaded>(s.address);
  auto held = client.async_call<int>("Arith.Late", Args{1, 0});
  REQUIRE(s.arith.started.wait_for_at_least(1));
  const std::string body = body_of(get_metrics(s.address));
  s.arith.release.set();
  CHECK(held.get() == 1000);
  INFO(body);
  for (const auto& problem : format_problems(body)) FAIL_CHECK(problem);
  const scrape m = parse(body);
  const std::map<std::string, std::string> expected = {
      {"rpc_server_connections", "gauge"},
      {"rpc_server_http_connections", "gauge"},
      {"rpc_server_connections_refused_total", "counter"},
      {"rpc_server_calls_in_flight", "gauge"},
      {"rpc_server_queued_request_bytes", "gauge"},
      {"rpc_server_pending_output_bytes", "gauge"},
      {"rpc_server_handler_threads", "gauge"},
      {"rpc_server_handler_threads_busy", "gauge"},
  };
  CHECK(m.types == expected);
  // One sample each, labelled rpc_system alone: no method's row, no call's.
  CHECK(m.samples.size() == expected.size());
  for (const auto& [name, type] : expected) CHECK(m.samples.count(name + "{rpc_system=\"geerpc\"}") == 1);
  CHECK(value_of(m, "rpc_server_calls_in_flight", "rpc_system=\"geerpc\"") == 1);
  CHECK(value_of(m, "rpc_server_handler_threads_busy", "rpc_system=\"geerpc\"") >= 1);
  CHECK(value_of(m, "rpc_server_http_connections", "rpc_system=\"geerpc\"") == 1);
  CHECK(body.find("Late") == std::string::npos);
}

// Not run by itself ([.]): writes a scrape after known calls to $GEERPC_METRICS_OUT, for
// tests/metrics/parse_scrape.py, which parses it with Prometheus's Python client.
TEST_CASE("metrics: a scrape for Prometheus's parser", "[.metrics_scrape]") {
  const char* path = std::getenv("GEERPC_METRICS_OUT");
  REQUIRE(path != nullptr);
  test::arith_server<geerpc::threaded> s;
  auto client = geerpc::dial<geerpc::threaded>(s.address);
  make_known_calls(client);
  std::string body;
  REQUIRE(test::eventually([&] {
    body = body_of(get_metrics(s.address));
    const scrape m = parse(body);
    return value_of(m, "rpc_server_calls_total", method_labels("Echo") + ",rpc_geerpc_status=\"ok\"") == 1 &&
           value_of(m, "rpc_server_unrouted_calls_total",
                    "rpc_system=\"geerpc\",rpc_geerpc_status=\"unknown_method\"") == 1;
  }));
  std::ofstream(path, std::ios::binary) << body;
}

}  // namespace metrics_test
