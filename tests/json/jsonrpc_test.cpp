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
#include "jsonrpc_peer.hpp"
#include "support.hpp"

namespace jsonrpc_test {

using namespace std::chrono_literals;

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
        error_line("1", "rpc server: can't find method Nope (Arith has: Echo, Fail, Fill, Hold, Nothing, Sum)"));
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
  CHECK(stream.inbound(std::as_bytes(std::span(request.data(), 10)), frames, replies).outcome ==
        geerpc::detail::frame_translator::verdict::more);
  CHECK(frames.empty());
  CHECK(stream.buffered() == 10);
  CHECK(stream.inbound(std::as_bytes(std::span(request.data() + 10, request.size() - 10)), frames, replies).outcome ==
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

// A result written as its text holds it (a json::raw_value, pretty-printed) keeps the response on
// one line: its newlines, whitespace between tokens, go as spaces (the fuzzer's finding: a reply
// broken over many lines by params full of newlines, echoed back).
TEST_CASE("jsonrpc: a response whose result has newlines between its tokens is still one line", "[json][jsonrpc]") {
  geerpc::json::detail::jsonrpc_stream stream(1024);
  std::vector<std::byte> frames, replies, text;
  const std::string request = call_text("A.B", "[\n1,\r\n2\n]", "7");
  stream.inbound(std::as_bytes(std::span(request)), frames, replies);
  geerpc::wire::frame_view frame;
  REQUIRE(geerpc::wire::parse_frame(frames, frame) == nullptr);
  std::vector<std::byte> response;
  const std::size_t start =
      geerpc::wire::begin_frame(response, {geerpc::wire::frame_kind::response, 0, frame.header.seq, 0}, "");
  const std::string result = "{\n  \"a\": \"x\\ny\",\r\n  \"b\": [1,\n2]\n}";
  const auto body = std::as_bytes(std::span(result));
  response.insert(response.end(), body.begin(), body.end());
  geerpc::wire::finish_frame(response, start);
  stream.outbound(response, text);
  CHECK(std::string(reinterpret_cast<const char*>(text.data()), text.size()) ==
        "{\"id\":7,\"result\":{   \"a\": \"x\\ny\",    \"b\": [1, 2] },\"error\":null}\n");
}

// The scanner's id (json/jsonrpc_scanner.hpp), which answers a message that cannot be read: found
// whatever the reads' boundaries, at the top level only, and only when it can be echoed as it is.
TEST_CASE("jsonrpc: the scanner finds the top-level id of a message fed a byte at a time", "[json][jsonrpc]") {
  const auto id_of = [](std::string_view text) {
    geerpc::json::detail::value_scanner scanner;
    scanner.reset();
    const auto bytes = std::as_bytes(std::span(text.data(), text.size()));
    std::size_t at = 0;
    for (std::size_t end = 1; end <= bytes.size(); ++end) {
      at = scanner.scan(bytes.first(end), at);
      if (scanner.complete()) break;
    }
    CHECK(at == text.size());
    return std::string(scanner.id());
  };
  CHECK(id_of(R"({"id":12})") == "12");
  CHECK(id_of(R"({ "Id" : "a\"}{[" , "x":1})") == R"("a\"}{[")");
  CHECK(id_of(R"({"x":{"id":1},"y":["id",2],"iD":-0.5E+2})") == "-0.5E+2");
  CHECK(id_of(R"({"id":1,"id":2})") == "1");
  CHECK(id_of(R"({"i\u0064":1})").empty());  // an escaped key is not matched
  CHECK(id_of(R"({"id":null})").empty());
  CHECK(id_of(R"({"id":[1]})").empty());
  CHECK(id_of(R"({"id":1.})").empty());
  CHECK(id_of(R"({"id":-1.5e80158})").empty());  // past a double's range: 8.2 refuses it
  CHECK(id_of(R"({"id":1e-400})") == "1e-400");  // too close to 0, which it reads as 0
  CHECK(id_of(R"({"id":0.0001e309})") == "0.0001e309");
  CHECK(id_of(R"({"id":-2.5e-3321042686})").empty());                    // an exponent the parser overflows on
  CHECK(id_of(R"({"id":2e-000000000000001})") == "2e-000000000000001");  // leading zeros are no digits
  CHECK(id_of("{\"id\":\"a\tb\"}").empty());                             // a control character: no JSON string
  // A UTF-16 surrogate escaped alone is refused by JSON parsers (Boost.JSON's): not echoed.
  CHECK(id_of(R"({"id":"k\udddd0041"})").empty());  // a low surrogate first (the fuzzer's)
  CHECK(id_of(R"({"id":"k\ud83d"})").empty());      // a high one with nothing after it
  CHECK(id_of(R"({"id":"k\ud83dx"})").empty());
  CHECK(id_of(R"({"id":"k\ud83d\u0041"})").empty());                    // a high one and no low one
  CHECK(id_of(R"({"id":"k\ud83d\ude00!"})") == R"("k\ud83d\ude00!")");  // a pair
  CHECK(id_of(R"({"id":"k\u00e9\uFFFF"})") == R"("k\u00e9\uFFFF")");
  CHECK(id_of(R"({"id":")" + std::string(2000, 'x') + R"("})").empty());
  CHECK(id_of(R"({"id":")" + std::string(1022, 'x') + R"("})").size() == 1024);
  CHECK(id_of(R"(["id",1])").empty());
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
