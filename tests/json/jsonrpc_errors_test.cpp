// JSON-RPC streams (docs/protocol.md 9.4): messages the server cannot read. One that ended where
// the scanner says (malformed, too long, no object) is answered under its caller's id, and the
// connection goes on; a stream out of step gets its last words whole, even while handler threads
// write, and the connection then waits for the peer's EOF for timeouts.handshake.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <geerpc/json.hpp>

#include "catch.hpp"
#include "jsonrpc_peer.hpp"
#include "support.hpp"

namespace jsonrpc_test {

namespace {

// Writes messages to a peer and says where each culprit lies: errors count bytes from the
// stream's first.
struct counted_sender {
  line_peer& peer;
  std::size_t sent = 0;
  // Sends `text`; returns " at byte <n>", n being where `culprit` is in it (its start: empty).
  std::string send(const std::string& text, std::string_view culprit = {}) {
    peer.send(text);
    const std::size_t at = sent + (culprit.empty() ? 0 : text.find(culprit));
    sent += text.size();
    return " at byte " + std::to_string(at);
  }
  // A call that must be answered: the connection goes on.
  void check_served(int id) {
    send(call_text("Arith.Sum", R"([{"A":1,"B":2}])", std::to_string(id)));
    CHECK(peer.line() == "{\"id\":" + std::to_string(id) + ",\"result\":3,\"error\":null}");
  }
};

std::string nested(std::size_t levels) { return std::string(levels, '[') + std::string(levels, ']'); }

}  // namespace

TEMPLATE_TEST_CASE("jsonrpc: a malformed message is answered under its id, and the connection goes on",
                   "[json][jsonrpc]", GEERPC_TRANSPORTS) {
  go_server<TestType> s;
  line_peer peer(s.address);
  counted_sender out{peer};
  struct bad_case {
    std::string text, culprit, id, reason;
  };
  const std::vector<bad_case> cases = {
      {R"({"method":"Arith.Sum","params":[1,],"id":2})", "]", "2", "syntax error"},
      {R"({"method":"Arith.Sum","params":[NaN],"id":"n \"7\""})", "N", R"("n \"7\"")", "syntax error"},
      {R"({"id":1,"id":2})", R"("id":2)", "1", R"(duplicate key "id")"},
      {"{\"params\":[tru], \"ID\" :\n -1.5e3 }", "tru", "-1.5e3", "syntax error"},
      // No id that can be echoed: a literal, a number JSON has not, an id deeper than the top.
      {R"({"id":nul})", "nul", "null", "syntax error"},
      {R"({"id":01,"params":[,]})", "1", "null", "syntax error"},
      {R"({"x":{"id":3},"params":[,]})", ",]", "null", "syntax error"},
      // A value, but no object: a JSON-RPC 2.0 batch.
      {R"([{"method":"Arith.Sum","params":[],"id":4}])", "", "null", "a request is a JSON object"},
  };
  int id = 100;
  for (const bad_case& c : cases) {
    CAPTURE(c.text);
    const std::string at = out.send(c.text + "\n", c.culprit);
    CHECK(peer.line() == error_line(c.id, "rpc server: bad request: " + c.reason + at));
    out.check_served(id++);
  }
}

TEMPLATE_TEST_CASE("jsonrpc: a message longer than max_frame_size is answered under its id, and the connection goes on",
                   "[json][jsonrpc]", GEERPC_TRANSPORTS) {
  go_server<TestType> s({.limits = {.max_frame_size = 1024}});
  line_peer peer(s.address);
  counted_sender out{peer};
  out.check_served(1);
  // The id after 4 KiB, the message in many sends: the server keeps none of it past the limit,
  // and still finds the id at its top level (a "id" deeper down is not it).
  const std::string late =
      R"({"method":"Arith.Echo","params":[{"id":9},")" + std::string(4096, 'x') + R"("],"id":"late"})";
  std::string at = " at byte " + std::to_string(out.sent);
  for (std::size_t from = 0; from < late.size(); from += 500) out.send(late.substr(from, 500));
  CHECK(peer.line() == error_line(R"("late")", "rpc server: bad request: a message longer than 1024 bytes" + at));
  out.check_served(2);
  // Malformed as well as too long: the size is what is answered.
  at = out.send(R"({"id":3,"params":[)" + std::string(2000, '1') + ",]}");
  CHECK(peer.line() == error_line("3", "rpc server: bad request: a message longer than 1024 bytes" + at));
  out.check_served(4);
  // An id too long to echo is answered null.
  at = out.send(R"({"id":")" + std::string(2000, 'i') + R"(","params":[]})");
  CHECK(peer.line() == error_line("null", "rpc server: bad request: a message longer than 1024 bytes" + at));
  out.check_served(5);
}

// The envelope's object is one of the 64 levels of 8.2, so params (the array itself counted) may
// nest 63.
TEMPLATE_TEST_CASE("jsonrpc: params may nest 63 levels, and at 64 the message is answered, and the connection goes on",
                   "[json][jsonrpc]", GEERPC_TRANSPORTS) {
  go_server<TestType> s;
  line_peer peer(s.address);
  counted_sender out{peer};
  out.send(call_text("Arith.Sum", nested(63), "1"));
  const std::string deepest = peer.line();  // read by the method's decoder, which takes no arrays
  CHECK_THAT(deepest, Catch::Matchers::StartsWith(R"({"id":1,"result":null,"error":"rpc server: bad request body: )"));
  CHECK_THAT(deepest, !Catch::Matchers::Contains("deeper"));
  out.send(call_text("Arith.Sum", nested(64), "2"));
  CHECK_THAT(peer.line(),
             Catch::Matchers::StartsWith(
                 R"({"id":2,"result":null,"error":"rpc server: bad request: nested deeper than 64 levels)"));
  out.check_served(3);
}

TEMPLATE_TEST_CASE("jsonrpc: a stream out of step gets its last words, then the connection closes", "[json][jsonrpc]",
                   GEERPC_TRANSPORTS) {
  go_server<TestType> s;
  for (const std::string bad : {"x", "]", "\"a string\"", "7"}) {
    CAPTURE(bad);
    line_peer peer(s.address);
    counted_sender out{peer};
    out.check_served(1);
    const std::string at = out.send(" " + bad + "\n", bad);
    CHECK(peer.rest_until_close() ==
          error_line("null", "rpc server: bad request: expected a JSON object ('{')" + at) + "\n");
  }
}

// The handlers answer 64 calls of 16 KiB each while the reader answers the byte that puts the
// stream out of step: that answer may find a handler thread sending. It goes out after what is
// being sent, whole, and nothing after it; then the connection closes.
TEMPLATE_TEST_CASE("jsonrpc: the last words arrive whole while many calls are in flight", "[json][jsonrpc]",
                   GEERPC_TRANSPORTS) {
  go_server<TestType> s;
  const std::string text(16384, 'x');
  const std::string answer = R"(","result":")" + text + R"(","error":null})";
  for (int round = 0; round < 5; ++round) {
    CAPTURE(round);
    line_peer peer(s.address);
    std::string burst;
    for (int id = 0; id < 64; ++id)
      burst += call_text("Arith.Echo", "[\"" + text + "\"]", "\"" + std::to_string(id) + "\"");
    const std::string last = error_line(
        "null", "rpc server: bad request: expected a JSON object ('{') at byte " + std::to_string(burst.size()));
    peer.send(burst + "x");
    const auto rest = peer.rest_until_close(10s);
    REQUIRE(rest);
    CAPTURE(rest->find(last), rest->find("\"error\":\"rpc"), rest->size(),
            rest->substr(rest->size() - std::min<std::size_t>(rest->size(), 300)));
    REQUIRE((rest->ends_with("\n" + last + "\n") || *rest == last + "\n"));
    std::size_t from = 0, lines = 0;
    for (std::size_t end = rest->find('\n'); end != std::string::npos; from = end + 1, end = rest->find('\n', from)) {
      const std::string line = rest->substr(from, end - from);
      if (line == last) break;
      ++lines;
      CHECK(line.starts_with("{\"id\":\""));
      CHECK(line.ends_with(answer));
    }
    CHECK(from + last.size() + 1 == rest->size());
    CHECK(lines <= 64);
  }
}

// One bound for the wait after the last words, whatever they were: timeouts.handshake
// (last_words::eof_wait()). A peer that reads them and keeps its end open is closed then, not
// after timeouts.frame.
TEMPLATE_TEST_CASE("jsonrpc: after its last words the server waits timeouts.handshake for the peer's EOF",
                   "[json][jsonrpc]", GEERPC_TRANSPORTS) {
  go_server<TestType> s({.timeouts = {.handshake = 200ms, .frame = 60s}});
  line_peer peer(s.address);
  counted_sender out{peer};
  out.check_served(1);
  REQUIRE(s.server.connection_count() == 1);
  out.send("x");
  CHECK(peer.rest_until_close() == error_line("null", "rpc server: bad request: expected a JSON object ('{') at byte " +
                                                          std::to_string(out.sent - 1)) +
                                       "\n");
  // The peer's end stays open: the server closes its own once the handshake timeout has passed.
  CHECK(test::eventually([&] { return s.server.connection_count() == 0; }, 5s));
}

// The wait for EOF starts once the last words are out, not when they are queued: a peer that reads
// a backlog of replies slowly still gets them. This peer reads nothing for five times
// timeouts.handshake after the stream goes out of step, with 10 MiB of replies (more than the
// sockets take: the writer holds at least 4 MiB of them) in front of the words; timeouts.write (30 s) bounds
// that wait instead.
TEMPLATE_TEST_CASE("jsonrpc: the wait for EOF starts once the last words are out, behind a backlog", "[json][jsonrpc]",
                   GEERPC_TRANSPORTS) {
  go_server<TestType> s({.limits = {.max_pending_output = 64u << 20}, .timeouts = {.handshake = 200ms, .frame = 60s}});
  line_peer peer(s.address);
  std::string burst;  // small requests, so that sending them never waits for the server to read
  for (int id = 0; id < 160; ++id) burst += call_text("Arith.Fill", R"([{"A":65536,"B":0}])", std::to_string(id));
  peer.send(burst);
  // The replies the sockets could not take wait in the server's writer: then the byte out of step.
  REQUIRE(test::eventually([&] { return s.server.pending_output_bytes() >= (4u << 20); }, 10s));
  peer.send("x");
  // Long enough for the server to answer the byte out of step, on a loaded machine; when it is not,
  // the test checks less (it cannot fail for it).
  std::this_thread::sleep_for(1s);
  const auto rest = peer.rest_until_close(20s);
  REQUIRE(rest);
  const std::string last = error_line(
      "null", "rpc server: bad request: expected a JSON object ('{') at byte " + std::to_string(burst.size()));
  CAPTURE(rest->size());
  CHECK(rest->ends_with(last + "\n"));
}

}  // namespace jsonrpc_test
