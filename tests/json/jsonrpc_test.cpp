// JSON-RPC 1.0 streams on a geerpc port (docs/protocol.md section 9), as Go's net/rpc/jsonrpc
// writes them: a raw loopback socket writes request objects and reads the response lines; a server
// whose codecs include json_codec serves them beside binary clients and HTTP, on every transport.
// The hidden case "[.go_server]" is the server tests/go/jsonrpc_client runs against.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <geerpc/json.hpp>
#include <geerpc/json/jsonrpc_stream.hpp>

#include "catch.hpp"
#include "support.hpp"

namespace jsonrpc_test {

using namespace std::chrono_literals;

namespace {

using both_codecs = geerpc::codecs<geerpc::binary_codec, geerpc::json_codec>;

// What Go's net/rpc examples serve: Go's field names are A and B, which match these ignoring case.
struct Pair {
  int a;
  int b;
};

struct GoArith {
  test::event release;  // lets Hold's handlers go
  test::counter held;   // Hold's handlers that began

  int sum(const Pair& p) { return p.a + p.b; }
  std::string echo(const std::string& text) { return text; }
  int fail(const Pair&) { throw std::runtime_error("boom: \"quoted\"\n\xff"); }
  void nothing(const Pair&) {}
  int hold(const Pair& p) {
    held.add();
    release.wait();
    return p.a;
  }
};
using GoArithApi =
    geerpc::service<"Arith", geerpc::method<"Sum", &GoArith::sum>, geerpc::method<"Echo", &GoArith::echo>,
                    geerpc::method<"Fail", &GoArith::fail>, geerpc::method<"Nothing", &GoArith::nothing>,
                    geerpc::method<"Hold", &GoArith::hold>>;

template <class Transport, class Codec = both_codecs>
struct go_server {
  GoArith arith;
  geerpc::basic_server<Transport, Codec> server;
  std::string address;
  explicit go_server(geerpc::server_options opts = {}) : server(test::with_test_io_threads(std::move(opts))) {
    server.template add<GoArithApi>(arith);
    address = server.listen("127.0.0.1:0");
  }
};

// A JSON-RPC peer over a raw socket: writes text, reads the server's lines.
class line_peer {
 public:
  explicit line_peer(const std::string& address) : peer_(address) {
    const int on = 1;  // each send its own segment, for the test of many small ones
    ::setsockopt(peer_.fd(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  }
  void send(std::string_view text) { peer_.send(text); }
  // The next line, without its newline; throws when none comes whole within `limit`.
  std::string line(std::chrono::milliseconds limit = 5s) {
    for (;;) {
      if (const auto at = buffered_.find('\n'); at != std::string::npos) {
        std::string out = buffered_.substr(0, at);
        buffered_.erase(0, at + 1);
        return out;
      }
      const auto byte = peer_.read(1, limit);
      if (!byte) throw std::runtime_error("no whole line from the server; have: " + buffered_);
      buffered_ += static_cast<char>((*byte)[0]);
    }
  }
  // Everything until the server closes (after the lines already read); nullopt if it does not.
  std::optional<std::string> rest_until_close(std::chrono::milliseconds limit = 5s) {
    auto rest = peer_.read_all(limit);
    if (!rest) return std::nullopt;
    return buffered_ + *rest;
  }
  test::raw_peer& raw() { return peer_; }

 private:
  test::raw_peer peer_;
  std::string buffered_;
};

std::string call_text(std::string_view method, std::string_view params, std::string_view id) {
  return R"({"method":")" + std::string(method) + R"(","params":)" + std::string(params) + R"(,"id":)" +
         std::string(id) + "}\n";
}

// An error response's line: its text as JSON writes it (only quotes and backslashes in these).
std::string error_line(std::string_view id, std::string_view text) {
  std::string escaped;
  for (const char c : text) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return "{\"id\":" + std::string(id) + ",\"result\":null,\"error\":\"" + escaped + "\"}";
}

}  // namespace

TEMPLATE_TEST_CASE("jsonrpc: a call as Go's client writes it gets the line Go's client reads", "[json][jsonrpc]",
                   GEERPC_TRANSPORTS) {
  go_server<TestType> s;
  line_peer peer(s.address);
  peer.send(std::string(R"({"method":"Arith.Sum","params":[{"A":1,"B":2}],"id":0})") + "\n");
  CHECK(peer.line() == R"({"id":0,"result":3,"error":null})");
  // A void result is an empty object, which Go reads into any reply struct (null it takes for an
  // error without a reason); then a 4 KiB string both ways.
  peer.send(call_text("Arith.Nothing", R"([{"a":1,"b":1}])", "1"));
  CHECK(peer.line() == R"({"id":1,"result":{},"error":null})");
  const std::string text(4096, 'x');
  peer.send(call_text("Arith.Echo", "[\"" + text + "\"]", "2"));
  CHECK(peer.line() == R"({"id":2,"result":")" + text + R"(","error":null})");
}

TEMPLATE_TEST_CASE("jsonrpc: 100 calls in one send are all answered, each under its id", "[json][jsonrpc]",
                   GEERPC_TRANSPORTS) {
  go_server<TestType> s;
  line_peer peer(s.address);
  std::string burst;
  std::set<std::string> expected;
  for (int i = 0; i < 100; ++i) {
    // Any whitespace, or none, between messages.
    burst += call_text("Arith.Sum", "[{\"A\":" + std::to_string(i) + ",\"B\":1000}]", std::to_string(i));
    if (i % 3 == 0) burst.back() = ' ';
    if (i % 3 == 1) burst.pop_back();
    expected.insert("{\"id\":" + std::to_string(i) + ",\"result\":" + std::to_string(i + 1000) + ",\"error\":null}");
  }
  peer.send(burst);
  std::set<std::string> got;
  for (int i = 0; i < 100; ++i) got.insert(peer.line());
  CHECK(got == expected);
}

TEMPLATE_TEST_CASE("jsonrpc: an id is echoed as it was written, and a missing one is null", "[json][jsonrpc]",
                   GEERPC_TRANSPORTS) {
  go_server<TestType> s;
  line_peer peer(s.address);
  for (const std::string id : {R"("call-\u0041 \"7\"")", "18446744073709551616000", "1.50e1", "-0", "true", "null"}) {
    peer.send(call_text("Arith.Sum", R"([{"A":2,"B":3}])", id));
    CHECK(peer.line() == "{\"id\":" + id + ",\"result\":5,\"error\":null}");
  }
  peer.send(R"( {"params":[{"A":1,"B":1}], "method":"Arith.Sum", "extra":{"id":[1]}} )");
  CHECK(peer.line() == R"({"id":null,"result":2,"error":null})");
}

TEMPLATE_TEST_CASE("jsonrpc: errors are the server's texts, and the connection goes on", "[json][jsonrpc]",
                   GEERPC_TRANSPORTS) {
  go_server<TestType> s;
  line_peer peer(s.address);
  peer.send(call_text("Arith.Nope", "[{}]", "1"));
  CHECK(peer.line() ==
        error_line("1", "rpc server: can't find method Nope (Arith has: Echo, Fail, Hold, Nothing, Sum)"));
  // The handler's what(), JSON-escaped; its byte that is no UTF-8 becomes U+FFFD.
  peer.send(call_text("Arith.Fail", "[{}]", "2"));
  CHECK(peer.line() == "{\"id\":2,\"result\":null,\"error\":\"boom: \\\"quoted\\\"\\n\xef\xbf\xbd\"}");
  // A params array the method cannot take: the decoder's reason, naming the field, at its byte in
  // the params.
  peer.send(call_text("Arith.Sum", R"([{"A":"one","B":2}])", "3"));
  CHECK(peer.line() ==
        error_line("3", R"(rpc server: bad request body: field "a": expected an integer, got a string at byte 6)"));
}

TEMPLATE_TEST_CASE("jsonrpc: an object that is no request is answered with its id, and the connection goes on",
                   "[json][jsonrpc]", GEERPC_TRANSPORTS) {
  go_server<TestType> s;
  line_peer peer(s.address);
  std::size_t sent = 0;  // the stream's bytes so far: errors say where, counting from its first
  const auto send = [&](const std::string& text, std::string_view culprit) {
    peer.send(text);
    const std::size_t at = sent + (culprit.empty() ? 0 : text.find(culprit));
    sent += text.size();
    return " at byte " + std::to_string(at);
  };
  std::string at = send(R"({"method":"Arith.Sum","id":4})", "");
  CHECK(peer.line() == error_line("4", R"(rpc server: bad request: no "params")" + at));
  at = send(R"( {"method":7,"params":[],"id":"five"})", "7");
  CHECK(peer.line() == error_line(R"("five")", R"(rpc server: bad request: "method" is not a string)" + at));
  at = send(R"({"method":"Arith.Sum","params":{"A":1},"id":6})", "{\"A");
  CHECK(peer.line() == error_line("6", R"(rpc server: bad request: "params" is not an array)" + at));
  at = send(R"({"params":[],"id":{"n":7}})", "{\"n");
  CHECK(
      peer.line() ==
      error_line(
          "null",
          R"~(rpc server: bad request: "id" is an array or an object (a string, number, boolean or null is echoed))~" +
              at));
  at = send(R"({"Method":"Arith.Sum","method":"Arith.Sum","params":[],"id":8})", "\"method");
  CHECK(peer.line() == error_line("null", R"(rpc server: bad request: duplicate key "method")" + at));
  send(call_text("Arith.Sum", R"([{"A":3,"B":4}])", "9"), "");
  CHECK(peer.line() == R"({"id":9,"result":7,"error":null})");
}

TEMPLATE_TEST_CASE("jsonrpc: malformed JSON is answered with the reason, then the connection closes", "[json][jsonrpc]",
                   GEERPC_TRANSPORTS) {
  go_server<TestType> s;
  struct bad_case {
    std::string text, error, before;  // `before`: the lines answered first
  };
  // An unknown service is answered at once, by the thread that reads the stream: before its end.
  const std::string unknown = R"({"method":"Nope.Sum","params":[],"id":1})";
  const std::vector<bad_case> cases = {
      {R"({"method":"Arith.Sum","params":[1,],"id":2})", "syntax error at byte 34", ""},
      {R"({"method":"Arith.Sum","params":[NaN],"id":1})", "syntax error at byte 32", ""},
      {unknown + "\n [1]", "expected a JSON object ('{') at byte " + std::to_string(unknown.size() + 2),
       std::string(R"({"id":1,"result":null,"error":"rpc server: can't find service Nope"})") + "\n"},
      {R"({"id":1,"id":2})", R"(duplicate key \"id\" at byte 8)", ""},
  };
  for (const bad_case& c : cases) {
    CAPTURE(c.text);
    line_peer peer(s.address);
    peer.send(c.text);
    CHECK(peer.rest_until_close() ==
          c.before + R"({"id":null,"result":null,"error":"rpc server: bad request: )" + c.error + "\"}\n");
  }
}

TEMPLATE_TEST_CASE("jsonrpc: a message split into many small sends is read whole", "[json][jsonrpc]",
                   GEERPC_TRANSPORTS) {
  go_server<TestType> s;
  line_peer peer(s.address);
  const std::string text = call_text("Arith.Echo", R"(["a \"}]\\ {["])", R"("x\"}")");
  for (const char c : text) {
    peer.send(std::string_view(&c, 1));
    std::this_thread::sleep_for(1ms);
  }
  CHECK(peer.line() == R"({"id":"x\"}","result":"a \"}]\\ {[","error":null})");
}

TEMPLATE_TEST_CASE("jsonrpc: a message longer than max_frame_size is refused, then the connection closes",
                   "[json][jsonrpc]", GEERPC_TRANSPORTS) {
  go_server<TestType> s({.limits = {.max_frame_size = 1024}});
  line_peer peer(s.address);
  peer.send(call_text("Arith.Echo", "[\"" + std::string(900, 'x') + "\"]",
                      "1"));  // fits
  CHECK(peer.line() == R"({"id":1,"result":")" + std::string(900, 'x') + R"(","error":null})");
  peer.send(call_text("Arith.Echo", "[\"" + std::string(1100, 'x') + "\"]", "2"));
  CHECK(peer.rest_until_close() ==
        "{\"id\":null,\"result\":null,\"error\":\"rpc server: bad request: a message longer than 1024 bytes at byte " +
            std::to_string(call_text("Arith.Echo", "[\"" + std::string(900, 'x') + "\"]", "1").size()) + "\"}\n");
}

TEST_CASE("jsonrpc: past max_inflight_per_connection a call is answered busy, and the ids go with their answers",
          "[json][jsonrpc]") {
  go_server<geerpc::threaded> s({.limits = {.max_inflight_per_connection = 2}});
  line_peer peer(s.address);
  peer.send(call_text("Arith.Hold", R"([{"A":1}])", "1") + call_text("Arith.Hold", R"([{"A":2}])", "2"));
  REQUIRE(s.arith.held.wait_for_at_least(2));
  peer.send(call_text("Arith.Sum", R"([{"A":1}])", "3"));
  CHECK(peer.line() == R"({"id":3,"result":null,"error":"rpc server: too many requests in flight"})");
  s.arith.release.set();
  std::set<std::string> got{peer.line(), peer.line()};
  CHECK(got == std::set<std::string>{R"({"id":1,"result":1,"error":null})", R"({"id":2,"result":2,"error":null})"});
}

TEST_CASE("jsonrpc: a graceful shutdown sends no goaway: calls in flight finish, new ones are refused in words",
          "[json][jsonrpc]") {
  go_server<geerpc::threaded> s;
  line_peer peer(s.address);
  peer.send(call_text("Arith.Hold", R"([{"A":5}])", "0"));
  REQUIRE(s.arith.held.wait_for_at_least(1));
  std::thread stopper([&] { s.server.shutdown(10s); });
  // Until the shutdown has begun, a call runs; then it is refused, and nothing else comes before.
  std::string refused;
  for (int id = 1; id < 1000 && refused.empty(); ++id) {
    peer.send(call_text("Arith.Sum", R"([{"A":1,"B":1}])", std::to_string(id)));
    const std::string line = peer.line();
    if (line != "{\"id\":" + std::to_string(id) + ",\"result\":2,\"error\":null}") refused = line;
    std::this_thread::sleep_for(1ms);
  }
  CHECK_THAT(refused,
             Catch::Matchers::Matches(
                 R"(\{"id":[0-9]+,"result":null,"error":"rpc server: shutting down: the call was not run"\})"));
  s.arith.release.set();
  CHECK(peer.line() == R"({"id":0,"result":5,"error":null})");
  CHECK(peer.rest_until_close() == "");
  stopper.join();
}

TEST_CASE("jsonrpc: the translator keeps an id until its response goes out, and drops a goaway", "[json][jsonrpc]") {
  geerpc::json::detail::jsonrpc_stream stream(1024);
  std::vector<std::byte> frames, replies, text;
  const std::string request = call_text("A.B", "[1, 2]", R"("k")");
  CHECK(stream.inbound(std::as_bytes(std::span(request.data(), 10)), frames, replies) ==
        geerpc::detail::frame_translator::verdict::more);
  CHECK(frames.empty());
  CHECK(stream.buffered() == 10);
  CHECK(stream.inbound(std::as_bytes(std::span(request.data() + 10, request.size() - 10)), frames, replies) ==
        geerpc::detail::frame_translator::verdict::more);
  CHECK(stream.buffered() == 0);
  CHECK(replies.empty());
  geerpc::wire::frame_view frame;
  REQUIRE(geerpc::wire::parse_frame(frames, frame) == nullptr);
  CHECK(frame.header.kind == geerpc::wire::frame_kind::request);
  CHECK(frame.header.status == 0);
  CHECK(frame.header.budget_us == 0);
  CHECK(frame.text == "A.B");
  CHECK(std::string_view(reinterpret_cast<const char*>(frame.body.data()), frame.body.size()) == "[1, 2]");
  CHECK(stream.ids_held() == 1);

  std::vector<std::byte> goaway;
  geerpc::wire::finish_frame(goaway, geerpc::wire::begin_frame(goaway, {geerpc::wire::frame_kind::goaway, 0, 0, 0},
                                                               "rpc server: shutting down"));
  stream.outbound(goaway, text);
  CHECK(text.empty());
  std::vector<std::byte> response;
  geerpc::wire::finish_frame(
      response,
      geerpc::wire::begin_frame(response, {geerpc::wire::frame_kind::response, 8, frame.header.seq, 0}, "no"));
  stream.outbound(response, text);
  CHECK(std::string(reinterpret_cast<const char*>(text.data()), text.size()) ==
        "{\"id\":\"k\",\"result\":null,\"error\":\"no\"}\n");
  CHECK(stream.ids_held() == 0);
  text.clear();
  stream.outbound(response, text);  // its id is gone: nothing
  CHECK(text.empty());
}

TEMPLATE_TEST_CASE("jsonrpc: the same port still serves binary clients and HTTP", "[json][jsonrpc]",
                   GEERPC_TRANSPORTS) {
  go_server<TestType> s;
  line_peer peer(s.address);
  auto binary = geerpc::dial<TestType>(s.address, {.timeouts = {.connect = 2s}});
  peer.send(call_text("Arith.Sum", R"([{"A":20,"B":1}])", "1"));
  CHECK(binary.template call<int>(geerpc::with_timeout(5s), "Arith.Sum", Pair{10, 1}) == 11);
  CHECK(peer.line() == R"({"id":1,"result":21,"error":null})");
  const std::string page = test::http_get(s.address, "/debug/geerpc/stats.json");
  CHECK(page.find("\"Arith.Sum\"") != std::string::npos);
}

TEMPLATE_TEST_CASE("jsonrpc: a server without json_codec refuses '{' as a bad hello, as before", "[json][jsonrpc]",
                   GEERPC_TRANSPORTS) {
  go_server<TestType, geerpc::binary_codec> s;
  test::raw_peer peer(s.address);
  peer.send(call_text("Arith.Sum", R"([{"A":1,"B":2}])", "1"));
  const auto reply = peer.read_hello_reply();
  REQUIRE(reply);
  CHECK_FALSE(reply->accepted);
  CHECK(reply->reason == "rpc server: invalid magic number");
  CHECK(peer.closed_by_peer());
}

// The server tests/go/jsonrpc_client calls (tests/json/CMakeLists.txt, label go): listens on
// loopback with the transport GEERPC_JSONRPC_TRANSPORT names (blocking or threaded), writes its
// address to the file GEERPC_JSONRPC_ADDRESS_FILE, and serves until its driver stops it by PID (or
// 120 s pass).
TEST_CASE("jsonrpc: a server for the Go client", "[.go_server]") {
  const char* file = std::getenv("GEERPC_JSONRPC_ADDRESS_FILE");
  const char* transport = std::getenv("GEERPC_JSONRPC_TRANSPORT");
  REQUIRE(file != nullptr);
  const auto serve = [&](const std::string& address) {
    const std::string temporary = std::string(file) + ".tmp";
    std::ofstream(temporary) << address << "\n";
    REQUIRE(std::rename(temporary.c_str(), file) == 0);
    std::this_thread::sleep_for(120s);
  };
  if (transport != nullptr && std::string_view(transport) == "blocking") {
    go_server<geerpc::blocking> s;
    serve(s.address);
  } else {
    go_server<geerpc::threaded> s;
    serve(s.address);
  }
}

}  // namespace jsonrpc_test
