// JSON-RPC 2.0 over HTTP, POST /rpc on the RPC port (docs/protocol.md section 11; issue 29 point
// 5): a raw loopback socket posts a body and reads the whole answer; the server's ordinary
// dispatch runs each call (deadline, stop_token, interceptors, statistics), beside binary clients.
// The hidden case "[.curl]" is what the ctest http_rpc.curl runs, with real curl, where installed.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <geerpc/detail/byte_order.hpp>
#include <geerpc/json.hpp>
#include <geerpc/json/http_rpc.hpp>
#include <geerpc/json/tape.hpp>
#include <geerpc/wire/frame.hpp>
#include <geerpc/wire/http_rpc.hpp>

#include "catch.hpp"
#include "jsonrpc_peer.hpp"
#include "support.hpp"

namespace http_rpc_test {

using namespace std::chrono_literals;
using jsonrpc_test::both_codecs;
using jsonrpc_test::Pair;

struct Calc {
  test::counter notes;  // note()'s handlers that returned
  test::counter stops;  // slow()'s handlers that saw their stop_token fire
  test::event slow_begun;

  int sum(const Pair& p) { return p.a + p.b; }
  int add(int a, int b) { return a + b; }
  void note(const Pair&) { notes.add(); }
  int fail(const Pair&) { throw std::runtime_error("boom: \"quoted\"\n\xff"); }
  int slow(const Pair&, std::stop_token stop) {
    slow_begun.set();
    std::mutex mutex;
    std::condition_variable_any never;
    std::unique_lock lock(mutex);
    never.wait_for(lock, stop, 10s, [] { return false; });  // the bound only catches a hang
    if (stop.stop_requested()) stops.add();
    return 0;
  }
};
using CalcApi = geerpc::service<"Arith", geerpc::method<"Sum", &Calc::sum>, geerpc::method<"Add", &Calc::add>,
                                geerpc::method<"Note", &Calc::note>, geerpc::method<"Fail", &Calc::fail>,
                                geerpc::method<"Slow", &Calc::slow>>;

template <class Transport, class Codecs = both_codecs>
struct calc_server {
  Calc calc;
  geerpc::basic_server<Transport, Codecs> server;
  std::string address;
  // `prepare` runs before the server listens (interceptors are added then).
  explicit calc_server(geerpc::server_options opts = {},
                       const std::function<void(geerpc::basic_server<Transport, Codecs>&)>& prepare = {})
      : server(test::with_test_io_threads(std::move(opts))) {
    server.template add<CalcApi>(calc);
    if (prepare) prepare(server);
    address = server.listen("127.0.0.1:0");
  }
};

struct answer {
  int status = 0;
  std::string head;  // the status line and headers
  std::string body;
};

// Sends `request` as it is and reads everything until the server closes.
inline answer send_request(const std::string& address, std::string_view request) {
  test::raw_peer peer(address);
  peer.send(request);
  const auto all = peer.read_all(10s);
  if (!all) throw std::runtime_error("no whole answer to: " + std::string(request.substr(0, 80)));
  answer out;
  if (all->size() < 12 || !all->starts_with("HTTP/1.0 ")) throw std::runtime_error("not an HTTP answer: " + *all);
  out.status = std::stoi(all->substr(9, 3));
  const auto end = all->find("\r\n\r\n");
  out.head = all->substr(0, end);
  out.body = end == std::string::npos ? std::string() : all->substr(end + 4);
  return out;
}

inline std::string post_text(std::string_view body, std::string_view headers = {},
                             std::string_view type = "application/json") {
  return "POST /rpc HTTP/1.1\r\nHost: localhost\r\nContent-Type: " + std::string(type) +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + std::string(headers) + "\r\n" +
         std::string(body);
}

inline answer post(const std::string& address, std::string_view body, std::string_view headers = {}) {
  return send_request(address, post_text(body, headers));
}

inline std::string call(std::string_view method, std::string_view params, std::string_view id) {
  std::string out = R"({"jsonrpc":"2.0","method":")" + std::string(method) + "\"";
  if (!params.empty()) out += ",\"params\":" + std::string(params);
  if (!id.empty()) out += ",\"id\":" + std::string(id);
  return out + "}";
}

inline std::string error(int code, std::string_view message, std::string_view errc, std::string_view id) {
  return R"({"jsonrpc":"2.0","error":{"code":)" + std::to_string(code) + R"(,"message":")" + std::string(message) +
         R"(","data":{"errc":")" + std::string(errc) + R"("}},"id":)" + std::string(id) + "}";
}

TEMPLATE_TEST_CASE("http_rpc: a call's result comes back under its id, with positional params", "[json][http_rpc]",
                   GEERPC_TRANSPORTS) {
  calc_server<TestType> s;
  const answer a = post(s.address, call("Arith.Sum", R"([{"a":1,"b":2}])", "1"));
  CHECK(a.status == 200);
  CHECK(a.head.find("Content-Type: application/json\r\n") != std::string::npos);
  CHECK(a.body == R"({"jsonrpc":"2.0","result":3,"id":1})");
  CHECK(post(s.address, call("Arith.Add", "[2, 40]", R"("x\"y")")).body ==
        R"({"jsonrpc":"2.0","result":42,"id":"x\"y"})");
  CHECK(post(s.address, call("Arith.Note", R"([{"a":0,"b":0}])", "null")).body ==
        R"({"jsonrpc":"2.0","result":null,"id":null})");
  // The path's query is not looked at; bytes after the body are not read.
  const std::string body = call("Arith.Sum", R"([{"a":5,"b":5}])", "2");
  std::string request = post_text(body) + "GARBAGE";
  request.replace(request.find("/rpc"), 4, "/rpc?x=1");
  CHECK(send_request(s.address, request).body == R"({"jsonrpc":"2.0","result":10,"id":2})");
}

TEMPLATE_TEST_CASE("http_rpc: a batch answers its calls in an array, notifications run and get no entry",
                   "[json][http_rpc]", GEERPC_TRANSPORTS) {
  calc_server<TestType> s;
  const answer a = post(s.address, "[" + call("Arith.Sum", R"([{"a":1,"b":1}])", "1") + "," +
                                       call("Arith.Note", R"([{"a":1,"b":1}])", "") + "," +
                                       call("Arith.Add", "[3,4]", R"("three")") + "]");
  CHECK(a.status == 200);
  CHECK(a.body == R"([{"jsonrpc":"2.0","result":2,"id":1},{"jsonrpc":"2.0","result":7,"id":"three"}])");
  CHECK(s.calc.notes.value() == 1);  // the answer waited for the notification to finish

  const answer none =
      post(s.address, "[" + call("Arith.Note", "[{}]", "") + "," + call("Arith.Nope", "[{}]", "") + "]");
  CHECK(none.status == 204);
  CHECK(none.body.empty());
  CHECK(none.head.find("Content-Length") == std::string::npos);
  CHECK(s.calc.notes.value() == 2);
  CHECK(post(s.address, call("Arith.Note", "[{}]", "")).status == 204);
}

TEMPLATE_TEST_CASE("http_rpc: JSON-RPC 2.0's errors, with geerpc's errc in data", "[json][http_rpc]",
                   GEERPC_TRANSPORTS) {
  calc_server<TestType> s;
  const answer parse = post(s.address, R"({"jsonrpc":"2.0",)");
  CHECK(parse.status == 200);
  CHECK(parse.body.starts_with(R"({"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error: )"));
  CHECK(parse.body.ends_with(R"(","data":{"errc":"bad_request"}},"id":null})"));

  CHECK(post(s.address, R"({"jsonrpc":"1.0","method":"Arith.Sum","params":[],"id":7})").body ==
        error(-32600, R"(invalid request: \"jsonrpc\" must be \"2.0\")", "bad_request", "7"));
  CHECK(post(s.address, "[]").body == error(-32600, "invalid request: an empty batch", "bad_request", "null"));
  CHECK(post(s.address, "[1]").body ==
        "[" + error(-32600, "invalid request: a request is a JSON object", "bad_request", "null") + "]");
  CHECK(post(s.address, R"({"jsonrpc":"2.0","method":"Arith.Sum","id":{}})").body ==
        error(-32600, R"(invalid request: \"id\" is a string, a number or null)", "bad_request", "null"));
  CHECK(post(s.address, R"({"jsonrpc":"2.0","method":"Arith.Add","params":{"a":1},"id":3})")
            .body.starts_with(R"({"jsonrpc":"2.0","error":{"code":-32602,"message":"invalid params: by name)"));

  const answer method = post(s.address, call("Arith.Nope", "[{}]", "4"));
  CHECK(method.body.starts_with(R"({"jsonrpc":"2.0","error":{"code":-32601,"message":"rpc server: can't find method)"));
  CHECK(method.body.ends_with(R"("data":{"errc":"unknown_method"}},"id":4})"));
  CHECK(post(s.address, call("Nope.Sum", "[{}]", "5")).body.ends_with(R"("data":{"errc":"unknown_service"}},"id":5})"));
  // A name the peer sent comes back escaped, in valid JSON (the server's text writes a control
  // byte and what is not ASCII as \xNN: unknown_name.hpp).
  const answer odd = post(s.address, call(R"(Arith.N\"o\u0001\ud83d\ude00)", "[]", "9"));
  INFO(odd.body);
  CHECK(odd.body.find(R"(method N\"o\\x01\\xf0)") != std::string::npos);
  geerpc::json::tape parsed(std::as_bytes(std::span(odd.body.data(), odd.body.size())));
  CHECK(parsed.parse());

  const answer arity = post(s.address, call("Arith.Add", "[1]", "6"));
  CHECK(arity.body.starts_with(R"({"jsonrpc":"2.0","error":{"code":-32602,)"));
  const answer types = post(s.address, call("Arith.Sum", R"(["x"])", "7"));
  CHECK(types.body.starts_with(R"({"jsonrpc":"2.0","error":{"code":-32602,)"));
  CHECK(types.body.ends_with(R"("data":{"errc":"bad_request"}},"id":7})"));

  CHECK(post(s.address, call("Arith.Fail", "[{}]", "8")).body ==
        error(-32000, "boom: \\\"quoted\\\"\\n\xef\xbf\xbd", "remote_error", "8"));
}

TEMPLATE_TEST_CASE("http_rpc: Geerpc-Timeout is the calls' deadline: the handler's stop_token fires",
                   "[json][http_rpc]", GEERPC_TRANSPORTS) {
  calc_server<TestType> s;
  const auto start = std::chrono::steady_clock::now();
  const answer a = post(s.address, call("Arith.Slow", "[{}]", "1"), "Geerpc-Timeout: 100ms\r\n");
  CHECK(std::chrono::steady_clock::now() - start >= 100ms);
  CHECK(a.body.starts_with(R"({"jsonrpc":"2.0","error":{"code":-32001,)"));
  CHECK(a.body.ends_with(R"("data":{"errc":"deadline_exceeded"}},"id":1})"));
  CHECK(s.calc.stops.wait_for_at_least(1));
  CHECK(send_request(s.address, post_text("{}", "Geerpc-Timeout: 100\r\n")).status == 400);
  CHECK(send_request(s.address, post_text("{}", "Geerpc-Timeout: 0ms\r\n")).status == 400);
}

TEMPLATE_TEST_CASE("http_rpc: a batch past max_inflight_per_connection is refused whole, one within it runs",
                   "[json][http_rpc]", GEERPC_TRANSPORTS) {
  geerpc::server_options opts;
  opts.limits.max_inflight_per_connection = 2;
  calc_server<TestType> s(opts);
  const answer refused = post(s.address, "[" + call("Arith.Note", "[{}]", "") + "," + call("Arith.Note", "[{}]", "") +
                                             "," + call("Arith.Sum", "[{}]", "3") + "]");
  CHECK(refused.status == 200);
  CHECK(refused.body == error(-32600,
                              "invalid request: a batch of 3 calls, more than the server's "
                              "max_inflight_per_connection (2)",
                              "bad_request", "null"));
  const answer ran = post(s.address, "[" + call("Arith.Note", "[{}]", "") + "," + call("Arith.Sum", "[{}]", "3") + "]");
  CHECK(ran.body == R"([{"jsonrpc":"2.0","result":0,"id":3}])");
  CHECK(s.calc.notes.value() == 1);  // the refused batch's notes never ran
}

TEMPLATE_TEST_CASE("http_rpc: heads refused: type, length, size, method", "[json][http_rpc]", GEERPC_TRANSPORTS) {
  geerpc::server_options opts;
  opts.limits.max_frame_size = 4096;
  calc_server<TestType> s(opts);
  const std::string body = call("Arith.Sum", "[{}]", "1");
  CHECK(send_request(s.address, post_text(body, {}, "text/plain")).status == 415);
  CHECK(send_request(s.address, post_text(body, {}, "application/x-www-form-urlencoded")).status == 415);
  CHECK(send_request(s.address, post_text(body, {}, "application/json; charset=latin1")).status == 415);
  CHECK(send_request(s.address, post_text(body, {}, "Application/JSON ; charset=\"UTF-8\"")).status == 200);
  CHECK(send_request(s.address, "POST /rpc HTTP/1.1\r\nContent-Type: application/json\r\n\r\n" + body).status == 411);
  CHECK(send_request(s.address,
                     "POST /rpc HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: "
                     "chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
            .status == 411);
  CHECK(send_request(s.address, "POST /rpc HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 4097\r\n\r\n")
            .status == 413);
  CHECK(send_request(s.address, "POST /rpc HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: x\r\n\r\n")
            .status == 400);
  // DNS rebinding: a web page whose own name resolves to 127.0.0.1 posts as same-origin.
  std::string rebound = post_text(body);
  rebound.replace(rebound.find("Host: localhost"), 15, "Host: evil.example:80");
  CHECK(send_request(s.address, rebound).status == 403);
  const answer get = send_request(s.address, "GET /rpc HTTP/1.1\r\n\r\n");
  CHECK(get.status == 405);
  CHECK(get.head.find("\r\nAllow: POST") != std::string::npos);
  CHECK(send_request(s.address, "OPTIONS /rpc HTTP/1.1\r\nOrigin: http://evil.example\r\n\r\n").status == 405);
  CHECK(send_request(s.address, post_text(body).replace(5, 4, "/rpc/")).status == 404);
}

TEMPLATE_TEST_CASE("http_rpc: a body that stops coming is dropped at timeouts.frame", "[json][http_rpc]",
                   GEERPC_TRANSPORTS) {
  geerpc::server_options opts;
  opts.timeouts.frame = 200ms;
  calc_server<TestType> s(opts);
  test::raw_peer peer(s.address);
  peer.send("POST /rpc HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jso");
  const auto start = std::chrono::steady_clock::now();
  CHECK(peer.closed_by_peer(5s));
  CHECK(std::chrono::steady_clock::now() - start < 4s);
  test::raw_peer silent(s.address);  // the head and nothing of the body
  silent.send("POST /rpc HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n");
  CHECK(silent.closed_by_peer(5s));
}

TEST_CASE("http_rpc: the policy admits the door: off, or a predicate that refuses, is a 404", "[json][http_rpc]") {
  const std::string body = call("Arith.Sum", "[{}]", "1");
  {
    geerpc::server_options opts;
    opts.observability.http_rpc = geerpc::debug_page_policy::off();
    calc_server<geerpc::threaded> s(opts);
    CHECK(post(s.address, body).status == 404);
  }
  {
    geerpc::server_options opts;
    opts.observability.http_rpc = geerpc::debug_page_policy::allow_if([](const geerpc::debug_peer&) { return false; });
    opts.observability.debug_page = geerpc::debug_page_policy::any();  // the page's policy is not /rpc's
    calc_server<geerpc::threaded> s(opts);
    CHECK(post(s.address, body).status == 404);
  }
  // A server without json_codec has no /rpc.
  calc_server<geerpc::threaded, geerpc::codecs<geerpc::binary_codec>> binary_only;
  CHECK(post(binary_only.address, body).status == 404);
}

TEMPLATE_TEST_CASE("http_rpc: interceptors and statistics see the calls, and a binary client shares the port",
                   "[json][http_rpc]", GEERPC_TRANSPORTS) {
  std::mutex mutex;
  std::vector<std::string> seen;
  calc_server<TestType> s({}, [&](auto& server) {
    server.use({.after = [&](const geerpc::call_context& ctx, const geerpc::call_result&) {
      std::lock_guard lock(mutex);
      seen.emplace_back(ctx.method());
    }});
  });
  auto client = geerpc::dial<TestType>(s.address);
  CHECK(client.template call<int>("Arith.Add", 1, 2) == 3);
  CHECK(post(s.address, call("Arith.Add", "[20,22]", "1")).body == R"({"jsonrpc":"2.0","result":42,"id":1})");
  CHECK(client.template call<int>("Arith.Sum", Pair{2, 3}) == 5);
  REQUIRE(test::eventually([&] {
    std::lock_guard lock(mutex);
    return seen.size() == 3;
  }));
  std::sort(seen.begin(), seen.end());  // an `after` may run once its answer is out: any order
  CHECK(seen == std::vector<std::string>{"Arith.Add", "Arith.Add", "Arith.Sum"});
  const std::string stats = test::http_get(s.address, "/debug/geerpc/stats.json");
  const auto add = stats.find("\"Arith.Add\"");
  REQUIRE(add != std::string::npos);
  CHECK(stats.find("\"calls\":2", add) != std::string::npos);
}

// The translator alone: the frames it makes, and its one answer once every call has answered.
namespace {

std::string text_of(const std::vector<std::byte>& bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// The answer `translator` gives to a response frame of `seq` with `result` (empty while calls wait).
std::string respond_to(geerpc::json::detail::http_rpc_translator& translator, std::uint64_t seq,
                       std::string_view result) {
  std::vector<std::byte> frame, text;
  const std::size_t start = geerpc::wire::begin_frame(frame, {geerpc::wire::frame_kind::response, 0, seq, 0}, "");
  const auto json = std::as_bytes(std::span(result.data(), result.size()));
  frame.insert(frame.end(), json.begin(), json.end());
  geerpc::wire::finish_frame(frame, start);
  translator.outbound(frame, text);
  return text_of(text);
}

}  // namespace

TEST_CASE("http_rpc: the translator gives one answer, once every call has answered, each once", "[json][http_rpc]") {
  const std::string body = "[" + call("A.B", "[1]", "1") + ",{}," + call("A.C", "", R"("z")") + "]";
  geerpc::json::detail::http_rpc_translator translator({1 << 20, body.size(), 5000, 16, 1 << 20});
  std::vector<std::byte> frames, replies;
  const auto bytes = std::as_bytes(std::span(body.data(), body.size()));
  CHECK(translator.inbound(bytes.first(10), frames, replies).outcome ==
        geerpc::detail::frame_translator::verdict::more);
  CHECK(frames.empty());
  CHECK(translator.buffered() > 0);  // the frame timeout watches the body
  CHECK(translator.inbound(bytes.subspan(10), frames, replies).outcome ==
        geerpc::detail::frame_translator::verdict::more);
  CHECK(replies.empty());
  CHECK(translator.buffered() == 0);
  std::vector<geerpc::wire::frame_view> made;
  for (std::size_t at = 0; at < frames.size();) {
    const std::size_t size = geerpc::wire::length_prefix_size + geerpc::detail::load_le<std::uint32_t>(&frames[at]);
    REQUIRE(geerpc::wire::parse_frame(std::span(frames).subspan(at, size), made.emplace_back()) == nullptr);
    at += size;
  }
  REQUIRE(made.size() == 2);
  CHECK((made[0].header.seq == 1 && made[0].text == "A.B" && made[0].header.budget_us == 5000));
  CHECK((made[1].header.seq == 2 && made[1].text == "A.C" && made[1].header.budget_us == 5000));
  CHECK(std::string_view(reinterpret_cast<const char*>(made[1].body.data()), made[1].body.size()) == "[]");

  CHECK(respond_to(translator, 2, "7").empty());
  CHECK(respond_to(translator, 2, "8").empty());  // a second response for a seq: dropped
  const std::string answer = respond_to(translator, 1, "6");
  CHECK(answer.starts_with("HTTP/1.0 200 OK\r\n"));
  CHECK(
      answer.ends_with("\r\n\r\n"
                       R"([{"jsonrpc":"2.0","result":6,"id":1},)" +
                       error(-32600, R"(invalid request: \"jsonrpc\" must be \"2.0\")", "bad_request", "null") +
                       R"(,{"jsonrpc":"2.0","result":7,"id":"z"}])"));
  CHECK(respond_to(translator, 1, "6").empty());  // after the answer, nothing
}

TEST_CASE("http_rpc: a batch longer than max_calls is refused whole, before any call is made", "[json][http_rpc]") {
  const std::string body = "[" + call("A.B", "[1]", "1") + ",1," + call("A.C", "", "3") + "]";
  geerpc::json::detail::http_rpc_translator translator({1 << 20, body.size(), 0, 2, 1 << 20});
  std::vector<std::byte> frames, replies;
  CHECK(translator.inbound(std::as_bytes(std::span(body.data(), body.size())), frames, replies).outcome ==
        geerpc::detail::frame_translator::verdict::broken);  // answered now: its last words
  CHECK(frames.empty());
  CHECK(text_of(replies).ends_with("\r\n\r\n" + error(-32600,
                                                      "invalid request: a batch of 3 calls, more than the server's "
                                                      "max_inflight_per_connection (2)",
                                                      "bad_request", "null")));
}

TEST_CASE("http_rpc: the answer's results stay within max_answer_bytes, a result past it refused", "[json][http_rpc]") {
  const std::string body = "[" + call("A.B", "[]", "1") + "," + call("A.B", "[]", "2") + "]";
  geerpc::json::detail::http_rpc_translator translator({1 << 20, body.size(), 0, 16, 200});
  std::vector<std::byte> frames, replies;
  translator.inbound(std::as_bytes(std::span(body.data(), body.size())), frames, replies);
  const std::string big = "\"" + std::string(120, 'x') + "\"";
  CHECK(respond_to(translator, 1, big).empty());
  const std::string answer = respond_to(translator, 2, big);
  CHECK(answer.find(R"({"jsonrpc":"2.0","result":)" + big + R"(,"id":1})") != std::string::npos);
  CHECK(answer.find(error(-32603,
                          "rpc server: the answer would pass the server's max_pending_output (200 bytes) with "
                          "this result",
                          "remote_error", "2")) != std::string::npos);
}

TEST_CASE("http_rpc: the head's checks, alone", "[json][http_rpc]") {
  using namespace geerpc::wire::http;
  std::uint64_t us = 0;
  CHECK((parse_timeout("200ms", us) && us == 200'000));
  CHECK((parse_timeout("2s", us) && us == 2'000'000));
  CHECK((parse_timeout("1m", us) && us == 60'000'000));
  CHECK((parse_timeout("250us", us) && us == 250));
  for (const char* bad : {"", "ms", "0s", "1.5s", "-1s", "1 s", "1h", "99999999999999999999s", "1ns"})
    CHECK_FALSE(parse_timeout(bad, us));
  for (const char* host : {"127.0.0.1:7000", "127.0.0.1", "[::1]:7000", "[::1]", "LocalHost:1"})
    CHECK(is_address_host(host));
  for (const char* host : {"", "evil.example", "localhost.evil.example", "127.0.0.1.nip.io:80", "[::1", "[::1]x"})
    CHECK_FALSE(is_address_host(host));
  std::string_view value;
  CHECK(find_header("POST / HTTP/1.1\r\nA: 1\r\ncontent-type:  x y \r\n\r\n", "Content-Type", value) == 1);
  CHECK(value == "x y");
  CHECK(find_header("POST / HTTP/1.1\nB: 1\nB: 2\n\nB: 3", "b", value) == 2);
  CHECK(value == "1");
}

// Real curl against a server (the ctest http_rpc.curl gives GEERPC_CURL, where curl is installed).
TEST_CASE("http_rpc: curl calls a method", "[.curl]") {
  const char* curl = std::getenv("GEERPC_CURL");
  REQUIRE(curl != nullptr);
  calc_server<geerpc::threaded> s;
  const std::string command = std::string(curl) + " -sS --max-time 10 -H 'Content-Type: application/json' " +
                              "-H 'Geerpc-Timeout: 2s' --data '" + call("Arith.Sum", R"([{"a":1,"b":2}])", "1") +
                              "' http://" + s.address + "/rpc";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buffer[512];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  CHECK(::pclose(pipe) == 0);
  CHECK(out == R"({"jsonrpc":"2.0","result":3,"id":1})");
}

}  // namespace http_rpc_test
