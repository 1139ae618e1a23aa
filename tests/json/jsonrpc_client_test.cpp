// A client of the JSON codec calling a Go net/rpc server (jsonrpc@host:port, docs/protocol.md 9.6),
// against a fake one written here: a loopback socket that reads request lines and writes response
// lines as Go's jsonrpc.ServeConn would, or as it never should (an unknown id, text that is no
// JSON, a response past the client's limit). tests/go/jsonrpc_server runs Go's own server.
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include <geerpc/json.hpp>

#include "catch.hpp"
#include "support.hpp"

namespace jsonrpc_client_test {

using namespace std::chrono_literals;

// The transports that keep several calls on the wire at once (the blocking one sends a call when
// the one before it is answered).
#define THREADED_TRANSPORTS geerpc::threaded, test::plain_threaded

namespace {

struct Pair {
  int a;
  int b;
};

struct Point {
  int x;
  int y;
};

// The server's end of the client's connection: reads request lines, writes response lines.
class go_side {
 public:
  explicit go_side(test::listener& l) : peer_(test::accept_raw(l)) {
    if (!peer_) throw std::runtime_error("the client did not connect");
  }
  // The next request line, without its newline; throws when none comes whole within `limit`.
  std::string line(std::chrono::milliseconds limit = 5s) {
    for (std::size_t searched = 0;;) {
      if (const auto at = buffered_.find('\n', searched); at != std::string::npos) {
        std::string out = buffered_.substr(0, at);
        buffered_.erase(0, at + 1);
        return out;
      }
      pollfd p{peer_->fd(), POLLIN, 0};
      char chunk[64 * 1024];
      const ssize_t n = ::poll(&p, 1, static_cast<int>(limit.count())) == 1 ? ::recv(p.fd, chunk, sizeof chunk, 0) : -1;
      if (n <= 0) throw std::runtime_error("no whole request line; have: " + buffered_.substr(0, 200));
      searched = buffered_.size();
      buffered_.append(chunk, static_cast<std::size_t>(n));
    }
  }
  // Sends all of `text`, or throws when the client has not taken it within `limit` (a client that
  // stopped reading must fail the test, not hang it).
  void send(std::string_view text, std::chrono::milliseconds limit = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!text.empty()) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{peer_->fd(), POLLOUT, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) != 1)
        throw std::runtime_error("the client did not read the response");
      const ssize_t n = ::send(p.fd, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno != EAGAIN) throw std::runtime_error("send failed");
      if (n > 0) text.remove_prefix(static_cast<std::size_t>(n));
    }
  }

 private:
  std::unique_ptr<test::raw_peer> peer_;
  std::string buffered_;
};

template <class Transport>
geerpc::basic_client<Transport, geerpc::json_codec> dial_go(const test::listener& l, geerpc::options opts = {}) {
  opts.timeouts.connect = 2s;
  return geerpc::dial<Transport, geerpc::json_codec>("jsonrpc@" + l.address(), opts);
}

std::string where(const test::listener& l) { return "rpc client: jsonrpc@" + l.address() + ": "; }

// A call on its own thread, with a deadline long enough for a sanitizer's pace.
template <class R, class Client, class... A>
std::future<geerpc::result<R>> call_later(Client& client, std::string method, A... arguments) {
  return std::async(std::launch::async, [&client, method, arguments...] {
    return client.template try_call<R>(geerpc::with_timeout(30s), method, arguments...);
  });
}

}  // namespace

TEMPLATE_TEST_CASE("jsonrpc client: calls become request lines, answered in any order", "[json][jsonrpc_client]",
                   THREADED_TRANSPORTS) {
  test::listener l;
  auto client = dial_go<TestType>(l);
  go_side go(l);
  std::vector<std::future<geerpc::result<int>>> calls;
  std::vector<std::string> lines;
  // One at a time, so that each line's id is known: seqs count from 1 on a connection.
  for (int i = 0; i < 3; ++i) {
    calls.push_back(call_later<int>(client, "Arith.Sum", Pair{i, 10}));
    lines.push_back(go.line());
  }
  CHECK(lines[0] == R"({"method":"Arith.Sum","params":[{"a":0,"b":10}],"id":1})");
  CHECK(lines[1] == R"({"method":"Arith.Sum","params":[{"a":1,"b":10}],"id":2})");
  CHECK(lines[2] == R"({"method":"Arith.Sum","params":[{"a":2,"b":10}],"id":3})");
  // In reverse order, with Go's member order and a case Go's encoder would not write.
  go.send(
      "{\"id\":3,\"result\":12,\"error\":null}\n{\"ID\":2,\"Result\":11}\n{\"error\":null,\"id\":1,\"result\":10}\n");
  for (int i = 0; i < 3; ++i) {
    const auto r = calls[static_cast<std::size_t>(i)].get();
    REQUIRE(r.has_value());
    CHECK(*r == 10 + i);
  }
  // A struct result's exact text reaches the decoder, which matches Go's field names ignoring case.
  auto point = call_later<Point>(client, "Geo.Move", Point{1, 2});
  CHECK(go.line() == R"({"method":"Geo.Move","params":[{"x":1,"y":2}],"id":4})");
  go.send("{\"id\":4,\"result\":{\"X\":3,\"Y\":-4},\"error\":null}\n");
  const auto moved = point.get();
  REQUIRE(moved.has_value());
  CHECK(moved->x == 3);
  CHECK(moved->y == -4);
}

TEMPLATE_TEST_CASE("jsonrpc client: a request larger than the socket's buffers goes out whole",
                   "[json][jsonrpc_client]", GEERPC_TRANSPORTS) {
  test::listener l;
  auto client = dial_go<TestType>(l, {.limits = {.max_frame_size = 32u << 20}});
  go_side go(l);
  // 6 MiB, more than the socket takes at once (Linux's tcp_wmem grows to 4 MiB): the session
  // keeps the rest of the line until the socket has room.
  const std::string text(6u << 20, 'z');
  auto call = call_later<std::string>(client, "Arith.Echo", text);
  const std::string line = go.line();
  CHECK(line == R"({"method":"Arith.Echo","params":[")" + text + R"("],"id":1})");
  go.send("{\"id\":1,\"result\":\"" + text + "\",\"error\":null}\n");
  const auto echoed = call.get();
  REQUIRE(echoed.has_value());
  CHECK(*echoed == text);
}

TEMPLATE_TEST_CASE("jsonrpc client: Go's error texts keep their words and get geerpc's statuses",
                   "[json][jsonrpc_client]", GEERPC_TRANSPORTS) {
  test::listener l;
  auto client = dial_go<TestType>(l);
  go_side go(l);
  struct answer {
    std::string error;  // as the server writes it
    geerpc::errc code;
    std::string message;
  };
  const std::vector<answer> answers = {
      {R"("rpc: can't find method Arith.Nope")", geerpc::errc::unknown_method, "rpc: can't find method Arith.Nope"},
      {R"("rpc: can't find service Nope.Sum")", geerpc::errc::unknown_service, "rpc: can't find service Nope.Sum"},
      {R"("rpc: service/method request ill-formed: Sum")", geerpc::errc::bad_request,
       "rpc: service/method request ill-formed: Sum"},
      {R"("divide by zero: \"quoted\"\n")", geerpc::errc::remote_error, "divide by zero: \"quoted\"\n"},
      {R"("")", geerpc::errc::remote_error, "unspecified error"},  // as Go's client reads it
  };
  std::uint64_t id = 0;
  for (const answer& a : answers) {
    auto call = call_later<int>(client, "Arith.Sum", Pair{1, 2});
    go.line();
    go.send("{\"id\":" + std::to_string(++id) + ",\"result\":null,\"error\":" + a.error + "}\n");
    const auto r = call.get();
    CHECK(r.code() == a.code);
    CHECK(r.message() == a.message);
  }
  // An error with a result (Go's server writes none): the error wins.
  auto call = call_later<int>(client, "Arith.Sum", Pair{1, 2});
  go.line();
  go.send("{\"id\":" + std::to_string(++id) + ",\"result\":5,\"error\":\"no\"}\n");
  CHECK(call.get().message() == "no");
}

TEMPLATE_TEST_CASE("jsonrpc client: a null result with no error is decoded as the result type reads null",
                   "[json][jsonrpc_client]", GEERPC_TRANSPORTS) {
  test::listener l;
  auto client = dial_go<TestType>(l);
  go_side go(l);
  // Go's client calls this a failure ("invalid error <nil>", golang/go#19588) and drops the
  // connection; JSON-RPC 1.0 allows it, and an optional reads it as empty.
  auto empty = call_later<std::optional<int>>(client, "Arith.Maybe", Pair{1, 2});
  go.line();
  go.send("{\"id\":1,\"result\":null,\"error\":null}\n");
  const auto maybe = empty.get();
  REQUIRE(maybe.has_value());
  CHECK_FALSE(maybe->has_value());
  // A struct cannot: the decoder's error, and the connection goes on.
  auto point = call_later<Point>(client, "Geo.Move", Point{1, 2});
  go.line();
  go.send("{\"id\":2,\"result\":null,\"error\":null}\n");
  const auto failed = point.get();
  CHECK(failed.code() == geerpc::errc::bad_response);
  CHECK_THAT(failed.message(), Catch::Contains("expected an object, got null"));
  auto sum = call_later<int>(client, "Arith.Sum", Pair{1, 2});
  go.line();
  go.send("{\"id\":3,\"result\":3,\"error\":null}\n");
  CHECK(sum.get().value() == 3);
}

TEMPLATE_TEST_CASE("jsonrpc client: a response that breaks the protocol fails the calls with protocol_error",
                   "[json][jsonrpc_client]", THREADED_TRANSPORTS) {
  struct bad_stream {
    std::string text;  // what the server sends after the client's two calls (ids 1 and 2)
    std::string what;  // the message's end
  };
  const std::vector<bad_stream> cases = {
      {"{\"id\":99,\"result\":1,\"error\":null}\n",
       "a response for id 99, which no call waits for (never sent, or answered) (the response at byte 0)"},
      {"{\"id\":1,\"result\":1,\"error\":null}\n{\"id\":1,\"result\":1,\"error\":null}\n",
       "a response for id 1, which no call waits for (never sent, or answered) (the response at byte 33)"},
      {"{\"id\":\"1\",\"result\":1,\"error\":null}\n",
       "a response for id \"1\", which no call waits for (never sent, or answered) (the response at byte 0)"},
      {"{\"result\":1,\"error\":null}\n", "a response without an \"id\" (the response at byte 0)"},
      {"hello\n", "the server sent something that is no JSON object (byte 0: 'h')"},
      {"[1]\n", "the server sent something that is no JSON object (byte 0: '[')"},
      // NaN and the infinities are no JSON, whatever Go's decoder would make of them.
      {"{\"id\":1,\"result\":NaN,\"error\":null}\n", "a response that is not JSON: "},
      {"{\"id\":1,\"result\":1,\"error\":{\"code\":1}}\n",
       "a response whose \"error\" is neither null nor a string (the response at byte 0)"},
      {"{\"id\":1,\"id\":2,\"result\":1}\n", "a response that is not JSON: "},
  };
  for (const bad_stream& c : cases) {
    CAPTURE(c.text);
    test::listener l;
    auto client = dial_go<TestType>(l);
    go_side go(l);
    auto first = call_later<int>(client, "Arith.Sum", Pair{1, 2});
    go.line();
    auto second = call_later<int>(client, "Arith.Sum", Pair{3, 4});
    go.line();
    go.send(c.text);
    for (auto* call : {&first, &second}) {
      const auto r = call->get();
      if (c.text.starts_with("{\"id\":1,\"result\":1,\"error\":null}\n{") && call == &first) {
        CHECK(r.value() == 1);  // answered before the duplicate came
        continue;
      }
      CHECK(r.code() == geerpc::errc::protocol_error);
      CHECK_THAT(r.message(), Catch::StartsWith(where(l) + c.what));
    }
    // The connection is over: a later call fails at once.
    CHECK(client.template try_call<int>(geerpc::with_timeout(5s), "Arith.Sum", Pair{1, 2}).code() ==
          geerpc::errc::connection_closed);
  }
}

TEST_CASE("jsonrpc client: the blocking transport's call fails with protocol_error on a response never asked for",
          "[json][jsonrpc_client]") {
  test::listener l;
  auto client = dial_go<geerpc::blocking>(l);
  go_side go(l);
  auto call = call_later<int>(client, "Arith.Sum", Pair{1, 2});
  CHECK(go.line() == R"({"method":"Arith.Sum","params":[{"a":1,"b":2}],"id":1})");
  go.send("{\"id\":7,\"result\":3,\"error\":null}\n");
  const auto r = call.get();
  CHECK(r.code() == geerpc::errc::protocol_error);
  CHECK(r.message() ==
        where(l) + "a response for id 7, which no call waits for (never sent, or answered) (the response at byte 0)");
  CHECK(client.template try_call<int>(geerpc::with_timeout(5s), "Arith.Sum", Pair{1, 2}).code() ==
        geerpc::errc::connection_closed);
}

TEMPLATE_TEST_CASE("jsonrpc client: a large response in one send is delivered, whichever read completes it",
                   "[json][jsonrpc_client]", GEERPC_TRANSPORTS) {
  // The session reads the socket in rounds of 16 KiB, 16 to a read(); a response the last round
  // completes must be given to the engine, not left behind a would_block (the blocking engine then
  // waited on an empty socket until the call's deadline).
  test::listener l;
  auto client = dial_go<TestType>(l);
  go_side go(l);
  for (const std::size_t size : {250'000, 520'000}) {
    CAPTURE(size);
    auto call = call_later<std::string>(client, "Arith.Echo", std::string("x"));
    const std::string line = go.line();
    const std::string id = line.substr(line.find("\"id\":") + 5, line.size() - line.find("\"id\":") - 6);
    go.send("{\"id\":" + id + ",\"result\":\"" + std::string(size, 'y') + "\",\"error\":null}\n");
    const auto r = call.get();
    REQUIRE(r);
    CHECK(r->size() == size);
  }
}

TEMPLATE_TEST_CASE("jsonrpc client: a response past options.limits.max_frame_size fails the connection",
                   "[json][jsonrpc_client]", GEERPC_TRANSPORTS) {
  test::listener l;
  auto client = dial_go<TestType>(l, {.limits = {.max_frame_size = 1024}});
  go_side go(l);
  auto call = call_later<std::string>(client, "Arith.Echo", std::string("x"));
  go.line();
  // Its end never comes: the client stops at its limit, not at the response's end.
  go.send("{\"id\":1,\"result\":\"" + std::string(4096, 'y'));
  const auto r = call.get();
  CHECK(r.code() == geerpc::errc::protocol_error);
  CHECK(r.message() == where(l) + "a response longer than 1024 bytes (options.limits.max_frame_size), from byte 0");
}

TEMPLATE_TEST_CASE("jsonrpc client: a call takes exactly one argument, refused before anything is sent",
                   "[json][jsonrpc_client]", GEERPC_TRANSPORTS) {
  test::listener l;
  auto client = dial_go<TestType>(l);
  go_side go(l);
  const auto none = client.template try_call<int>(geerpc::with_timeout(5s), "Arith.Now");
  CHECK(none.code() == geerpc::errc::invalid_argument);
  CHECK(none.message() ==
        "rpc client: a jsonrpc@ server (Go's net/rpc) takes exactly one argument per call, not 0: pass one struct");
  const auto two = client.template try_call<int>(geerpc::with_timeout(5s), "Arith.Add", 1, 2);
  CHECK(two.code() == geerpc::errc::invalid_argument);
  CHECK(two.message() ==
        "rpc client: a jsonrpc@ server (Go's net/rpc) takes exactly one argument per call, not 2: pass one struct");
  // The next line is the next call's: nothing went out for those, and the metadata of a call has
  // no place in Go's request.
  auto call = std::async(std::launch::async, [&] {
    return client.template try_call<int>(geerpc::with_timeout(5s).with_metadata("k", "v"), "Arith.Sum", Pair{1, 2});
  });
  CHECK(go.line() == R"({"method":"Arith.Sum","params":[{"a":1,"b":2}],"id":1})");
  go.send("{\"id\":1,\"result\":3,\"error\":null}\n");
  CHECK(call.get().value() == 3);
}

TEMPLATE_TEST_CASE(
    "jsonrpc client: a deadline is the client's own, the late answer is dropped, the connection serves on",
    "[json][jsonrpc_client]", GEERPC_TRANSPORTS) {
  test::listener l;
  auto client = dial_go<TestType>(l);
  go_side go(l);
  auto late = std::async(std::launch::async, [&] {
    return client.template try_call<int>(geerpc::with_timeout(100ms), "Arith.Slow", Pair{1, 2});
  });
  // The request carries no deadline: Go's server never hears of it.
  CHECK(go.line() == R"({"method":"Arith.Slow","params":[{"a":1,"b":2}],"id":1})");
  const auto timed_out = late.get();  // Go's server has not answered
  CHECK(timed_out.code() == geerpc::errc::deadline_exceeded);
  CHECK(timed_out.message() == "rpc client: call failed: context deadline exceeded");
  auto next = call_later<int>(client, "Arith.Sum", Pair{2, 3});
  // No cancel went out before it (Go has none): the next line is the next call.
  CHECK(go.line() == R"({"method":"Arith.Sum","params":[{"a":2,"b":3}],"id":2})");
  go.send("{\"id\":1,\"result\":3,\"error\":null}\n{\"id\":2,\"result\":5,\"error\":null}\n");
  CHECK(next.get().value() == 5);
  CHECK(client.is_open());
}

TEST_CASE("jsonrpc client: jsonrpc@ needs the JSON codec and plain TCP", "[json][jsonrpc_client]") {
  test::listener l;
  const auto binary = geerpc::try_dial<geerpc::threaded>("jsonrpc@" + l.address(), {.timeouts = {.connect = 2s}});
  CHECK(binary.code() == geerpc::errc::invalid_argument);
  CHECK(binary.message() == "rpc client: dial jsonrpc@" + l.address() +
                                ": jsonrpc@ needs the JSON codec: dial<Transport, geerpc::json_codec>");
  struct no_session final : geerpc::net::stream_session_factory {
    std::unique_ptr<geerpc::net::stream_session> make(int, role) override { throw std::runtime_error("unused"); }
  };
  const auto tls = geerpc::try_dial<geerpc::threaded, geerpc::json_codec>(
      "jsonrpc@" + l.address(), {.timeouts = {.connect = 2s}, .session = std::make_shared<no_session>()});
  CHECK(tls.code() == geerpc::errc::invalid_argument);
  CHECK(tls.message() == "rpc client: dial jsonrpc@" + l.address() +
                             ": jsonrpc@ speaks plain TCP: options.session (TLS) cannot be used with it");
  geerpc::basic_server<geerpc::threaded, geerpc::json_codec> server;
  CHECK_THROWS_WITH(server.listen("jsonrpc@127.0.0.1:0"),
                    Catch::Contains("jsonrpc@ is a client's form: a server with the JSON codec serves JSON-RPC"));
}

}  // namespace jsonrpc_client_test
