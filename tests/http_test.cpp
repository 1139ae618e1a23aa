// HTTP on the RPC port (docs/protocol.md, "HTTP on the RPC port"): the head parser alone, then a
// server's answers to raw HTTP peers (CONNECT, the debug page, 404/405/400/431, hostile heads),
// then the client's dial("http@..."), against a real server and against fake
// servers that answer CONNECT wrongly.
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <initializer_list>
#include <string>
#include <string_view>
#include <thread>

#include "catch.hpp"
#include "support.hpp"

namespace http_test {

using namespace std::chrono_literals;
using test::Args;
namespace http = geerpc::wire::http;

namespace {

http::head_status parse(std::string_view text, http::request_head& head, const char*& why) {
  return http::parse_request_head(text, head, why);
}

// Feeds `text` to one parser a byte at a time, as a trickling peer sends it.
http::head_status parse_trickled(std::string_view text, http::request_head& head, const char*& why) {
  http::head_parser parser;
  for (std::size_t n = 1; n <= text.size(); ++n) {
    const auto status = parser.feed(text.substr(0, n), head, why);
    if (status != http::head_status::incomplete) return status;
  }
  return http::head_status::incomplete;
}

geerpc::server_options quick_limits() {
  geerpc::server_options opts;
  opts.timeouts.handshake = 300ms;
  return opts;
}

// The status line of an HTTP response.
std::string status_line(const std::string& response) { return response.substr(0, response.find("\r\n")); }
std::string body_of(const std::string& response) {
  const auto at = response.find("\r\n\r\n");
  return at == std::string::npos ? std::string() : response.substr(at + 4);
}

}  // namespace

// ------------------------------------------------------------------------------ the parser

TEST_CASE("http head: request lines and headers with LF or CRLF, whole or trickled", "[http]") {
  const std::string heads[] = {
      "GET /debug/geerpc HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n",
      "GET /debug/geerpc HTTP/1.1\nHost: x\nAccept: */*\n\n",
      "CONNECT /_geerpc_ HTTP/1.0\n\n",
      "GET /debug/geerpc HTTP/1.0\r\nX-Empty:\r\nX-Utf8: caf\xc3\xa9\tok\r\n\r\n",
  };
  for (const auto& text : heads) {
    INFO(text);
    for (const bool trickled : {false, true}) {
      http::request_head head;
      const char* why = nullptr;
      const std::string with_more = text + "\x5c\xef\x3b";  // the hello's first bytes may follow
      REQUIRE((trickled ? parse_trickled(with_more, head, why) : parse(with_more, head, why)) ==
              http::head_status::complete);
      CHECK(head.size == text.size());
      CHECK((head.method == "GET" || head.method == "CONNECT"));
      CHECK(head.target.starts_with('/'));
    }
  }
  http::request_head head;
  const char* why = nullptr;
  REQUIRE(parse("GET /debug/geerpc?x=1#y HTTP/1.1\r\n\r\n", head, why) == http::head_status::complete);
  CHECK(head.target == "/debug/geerpc?x=1#y");
  CHECK(http::target_path(head.target) == "/debug/geerpc");
  CHECK(parse("GET / HTTP/1.1\r\nHost: x\r\n", head, why) == http::head_status::incomplete);
  CHECK(parse("GET / HTT", head, why) == http::head_status::incomplete);
}

TEST_CASE("http head: what is not a request head is refused with its reason, as soon as it shows", "[http]") {
  struct row {
    std::string text;
    const char* why;
  };
  const row rows[] = {
      {"GET /\r\n\r\n", "the request line is not \"METHOD target HTTP/1.x\""},
      {"GET  / HTTP/1.1\r\n\r\n", "the request target is empty"},
      {"GET / HTTP/2.0\r\n\r\n", "the version is not HTTP/1.0 or HTTP/1.1"},
      {"GET / HTTP/1.1 \r\n\r\n", "the version is not HTTP/1.0 or HTTP/1.1"},
      {"G(T / HTTP/1.1\r\n\r\n", "the method is not a token"},
      {"GET /\x01 HTTP/1.1\r\n\r\n", "the request target holds a byte that is not visible ASCII"},
      {"GET /\xc3\xa9 HTTP/1.1\r\n\r\n", "the request target holds a byte that is not visible ASCII"},
      {"GET / HTTP/1.1\r\nHost x\r\n\r\n", "a header line is not \"name: value\""},
      {"GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", "a header line is not \"name: value\""},
      {"GET / HTTP/1.1\r\n: empty name\r\n\r\n", "a header line is not \"name: value\""},
      {"GET / HTTP/1.1\r\nX: a\x01z\r\n\r\n", "a header value holds a control byte"},
      {"GET / HTTP/1.1\r\nX: a\rz\r\n\r\n", "a CR that does not end a line"},
      {"GET / HTTP/1.1\r\r\n\r\n", "a CR that does not end a line"},
  };
  for (const auto& r : rows) {
    INFO(r.text);
    for (const bool trickled : {false, true}) {
      http::request_head head;
      const char* why = nullptr;
      REQUIRE((trickled ? parse_trickled(r.text, head, why) : parse(r.text, head, why)) == http::head_status::bad);
      CHECK(std::string(why) == r.why);
    }
  }
  // A bad request line is refused when it ends, before any header arrives.
  http::request_head head;
  const char* why = nullptr;
  CHECK(parse("GET / HTTP/9\r\nHost:", head, why) == http::head_status::bad);
}

TEST_CASE("http head: a head past 8 KiB is too large, however its lines are cut", "[http]") {
  http::request_head head;
  const char* why = nullptr;
  const std::string line = "GET / HTTP/1.1\r\n";
  // One endless header line; many short ones; a complete head one byte too long.
  const std::string endless = line + "X: " + std::string(9000, 'a');
  std::string many = line;
  while (many.size() < 9000) many += "X: a\r\n";
  std::string just_over = line + "X: " + std::string(http::max_head - line.size() - 3 - 4 + 1, 'a') + "\r\n\r\n";
  std::string just_fits = just_over;
  just_fits.erase(line.size() + 3, 1);
  REQUIRE(just_fits.size() == http::max_head);
  for (const std::string* text : std::initializer_list<const std::string*>{&endless, &many, &just_over}) {
    CHECK(parse(*text, head, why) == http::head_status::too_large);
    CHECK(std::string(why) == "the request head is larger than 8 KiB");
    CHECK(parse_trickled(*text, head, why) == http::head_status::too_large);
  }
  CHECK(parse(just_fits, head, why) == http::head_status::complete);
  CHECK(head.size == http::max_head);
}

// ------------------------------------------------------------------------------ the server's side

TEMPLATE_TEST_CASE("http: CONNECT on either RPC path answers as GeeRPC does, then the geerpc protocol follows",
                   "[http]", GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s(quick_limits());
  for (const char* path : {"/_geerpc_", "/_geeprc_"}) {
    INFO(path);
    test::raw_peer peer(s.address);
    // The CONNECT and the hello in one segment: the hello's bytes are not taken as the head's.
    peer.send("CONNECT " + std::string(path) + " HTTP/1.0\n\n");
    std::array<std::byte, geerpc::wire::hello_size> hello{};
    geerpc::wire::encode_hello({geerpc::wire::protocol_version, geerpc::binary_codec::id, 0, 0}, hello);
    peer.send(hello);
    const std::string expected = "HTTP/1.0 200 Connected to Gee RPC\n\n";
    const auto answer = peer.read(expected.size());
    REQUIRE(answer);
    CHECK(std::string(reinterpret_cast<const char*>(answer->data()), answer->size()) == expected);
    const auto reply = peer.read_hello_reply();
    REQUIRE(reply);
    CHECK(reply->accepted);
    peer.send(test::request_frame(1, "Arith.Sum", Args{40, 2}));
    const auto frame = peer.read_frame();
    REQUIRE(frame);
    CHECK(frame->header.status == 0);
    CHECK(test::decode_body<int>(frame->body) == 42);
  }
}

TEMPLATE_TEST_CASE("http: the debug page and its JSON are served on the RPC port, then the connection closes", "[http]",
                   GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s(quick_limits());
  {
    test::raw_peer peer(s.address);
    peer.send("GET /debug/geerpc HTTP/1.1\r\nHost: localhost\r\n\r\n");
    const auto response = peer.read_all();
    REQUIRE(response);
    CHECK(status_line(*response) == "HTTP/1.0 200 OK");
    CHECK(response->find("Content-Type: text/html; charset=utf-8\r\n") != std::string::npos);
    const std::string body = body_of(*response);
    CHECK(response->find("Content-Length: " + std::to_string(body.size()) + "\r\n") != std::string::npos);
    CHECK(body.find("<td>Arith.Sum</td>") != std::string::npos);
    CHECK(body.find("<td>Arith.WaitForStop</td>") != std::string::npos);
    CHECK(body.find("<script") == std::string::npos);
    CHECK(body.find("id=\"limits/handshake_timeout_ns\">300ms</td>") != std::string::npos);
  }
  {
    test::raw_peer peer(s.address);
    peer.send("GET /debug/geerpc/stats.json?pretty=no HTTP/1.0\n\n");
    const auto response = peer.read_all();
    REQUIRE(response);
    CHECK(status_line(*response) == "HTTP/1.0 200 OK");
    const std::string body = body_of(*response);
    CHECK(body.starts_with("{\"statistics\":true,\"methods\":[{\"name\":\"Arith.Sum\",\"signature\":\""));
    CHECK(body.find("{\"name\":\"Arith.WaitForStop\",\"signature\":\"(test::Args{num1: int, num2: int}) -> "
                    "int\",\"fingerprint\":\"") != std::string::npos);
    CHECK(body.find("\"takes_stop_token\":true") != std::string::npos);
    CHECK(body.find("\"handshake_timeout_ns\":300000000") != std::string::npos);
    CHECK(body.ends_with("}\n"));
  }
  {
    test::raw_peer peer(s.address);
    peer.send("HEAD /debug/geerpc HTTP/1.1\r\n\r\n");  // the head alone, its length kept
    const auto response = peer.read_all();
    REQUIRE(response);
    CHECK(status_line(*response) == "HTTP/1.0 200 OK");
    CHECK(body_of(*response).empty());
    CHECK(response->find("Content-Length: 0\r\n") == std::string::npos);
  }
  auto client = geerpc::dial<TestType>(s.address);  // the RPC port still serves RPC
  CHECK(client.template call<int>("Arith.Sum", Args{1, 2}) == 3);
}

TEMPLATE_TEST_CASE("http: other paths get 404, other methods 405, broken heads 400 and huge ones 431: each closed",
                   "[http][hostile]", GEERPC_TRANSPORTS) {
  geerpc::server_options no_page = quick_limits();
  no_page.observability.debug_page = false;
  test::arith_server<TestType> s(quick_limits());
  test::arith_server<TestType> without_page(no_page);
  struct row {
    const std::string* address;
    std::string request;
    std::string status;
    std::string body;
    std::string header;  // one the response must carry, or empty
  };
  const row rows[] = {
      {&s.address, "GET / HTTP/1.1\r\n\r\n", "HTTP/1.0 404 Not Found", "geerpc: nothing at /\n", ""},
      {&s.address, "GET /<b>x HTTP/1.1\r\n\r\n", "HTTP/1.0 404 Not Found", "geerpc: nothing at /<b>x\n",
       "X-Content-Type-Options: nosniff"},
      {&s.address, "CONNECT /elsewhere HTTP/1.0\n\n", "HTTP/1.0 404 Not Found", "geerpc: nothing at /elsewhere\n", ""},
      {&s.address, "GET /_geerpc_ HTTP/1.0\n\n", "HTTP/1.0 405 Method Not Allowed",
       "geerpc: /_geerpc_ takes CONNECT only\n", "Allow: CONNECT"},
      {&s.address, "POST /debug/geerpc HTTP/1.1\r\nContent-Length: 50000\r\n\r\n" + std::string(50000, 'b'),
       "HTTP/1.0 405 Method Not Allowed",  // the body is read and dropped: the answer is not reset away
       "geerpc: /debug/geerpc takes GET or HEAD only\n", "Allow: GET, HEAD"},
      {&without_page.address, "GET /debug/geerpc HTTP/1.1\r\n\r\n", "HTTP/1.0 404 Not Found",
       "geerpc: nothing at /debug/geerpc\n", ""},
      {&s.address, "GET / HTTP/1.1\r\nHost x\r\n\r\n", "HTTP/1.0 400 Bad Request",
       "geerpc: bad request: a header line is not \"name: value\"\n", ""},
      {&s.address, "GET / HTTP/3\r\n", "HTTP/1.0 400 Bad Request",
       "geerpc: bad request: the version is not HTTP/1.0 or HTTP/1.1\n", ""},
      {&s.address, "GET / HTTP/1.1\r\nX: " + std::string(20000, 'a'), "HTTP/1.0 431 Request Header Fields Too Large",
       "geerpc: the request head is larger than 8 KiB\n", ""},
  };
  for (const auto& r : rows) {
    INFO(r.request.substr(0, 60));
    test::raw_peer peer(*r.address);
    try {
      peer.send(r.request);
    } catch (const std::runtime_error&) {  // a huge head may be cut off by the server's close
    }
    const auto response = peer.read_all();
    REQUIRE(response);
    CHECK(status_line(*response) == r.status);
    CHECK(body_of(*response) == r.body);
    CHECK(response->find("Connection: close\r\n") != std::string::npos);
    if (!r.header.empty()) CHECK(response->find(r.header + "\r\n") != std::string::npos);
  }
  CHECK(test::eventually([&] { return s.server.connection_count() == 0; }));
  auto client = geerpc::dial<TestType>(s.address);
  CHECK(client.template call<int>("Arith.Sum", Args{1, 2}) == 3);
}

TEMPLATE_TEST_CASE("http: a trickled head, or a CONNECT whose hello never comes, is dropped at the handshake timeout",
                   "[http][hostile]", GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s(quick_limits());  // a 300 ms handshake timeout
  {
    const auto start = std::chrono::steady_clock::now();
    test::raw_peer peer(s.address);
    const std::string head = "GET /debug/geerpc HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    bool dropped = false;
    for (const char c : head) {
      if (peer.closed_by_peer(20ms) || ::send(peer.fd(), &c, 1, MSG_NOSIGNAL) != 1) {
        dropped = true;
        break;
      }
    }
    CHECK((dropped || peer.closed_by_peer()));
    CHECK(std::chrono::steady_clock::now() - start >= 300ms);
  }
  {
    test::raw_peer peer(s.address);
    peer.send("CONNECT /_geerpc_ HTTP/1.0\r\n\r\n");
    const auto response = peer.read_all(2s);  // the 200, then the close at the timeout
    REQUIRE(response);
    CHECK(*response == "HTTP/1.0 200 Connected to Gee RPC\n\n");
  }
  CHECK(test::eventually([&] { return s.server.connection_count() == 0; }));
}

TEMPLATE_TEST_CASE("http: a CONNECT followed by garbage is refused as a bad hello is", "[http][hostile]",
                   GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s(quick_limits());
  test::raw_peer peer(s.address);
  peer.send("CONNECT /_geerpc_ HTTP/1.0\n\nGET / HTTP/1.1\r\nHost: x\r\n\r\n");  // 27 bytes: a whole hello
  const std::string expected = "HTTP/1.0 200 Connected to Gee RPC\n\n";
  const auto answer = peer.read(expected.size());
  REQUIRE(answer);
  const auto reply = peer.read_hello_reply();
  REQUIRE(reply);
  CHECK_FALSE(reply->accepted);
  CHECK(reply->reason == "rpc server: invalid magic number");
  CHECK(peer.closed_by_peer());
}

// ------------------------------------------------------------------------------ the client's side

TEMPLATE_TEST_CASE("http: dial(\"http@...\") reaches the server through CONNECT, dial(\"tcp@...\") without", "[http]",
                   GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s(quick_limits());
  auto through_http = geerpc::dial<TestType>("http@" + s.address, {.timeouts = {.connect = 2s}});
  CHECK(through_http.template call<int>("Arith.Sum", Args{1, 2}) == 3);
  auto plain = geerpc::dial<TestType>("tcp@" + s.address);
  CHECK(plain.template call<int>("Arith.Sum", Args{4, 2}) == 6);
  const auto on_unix = geerpc::try_dial<TestType>("http@unix@/tmp/nothing.sock");
  CHECK(on_unix.code() == geerpc::errc::connect_failed);
  CHECK(on_unix.message() ==
        "rpc client: dial \"http@unix@/tmp/nothing.sock\": bad address: http@ takes a TCP host:port (HTTP CONNECT is "
        "for TCP), not unix@; use host:port, tcp@host:port, http@host:port, tls@host:port, jsonrpc@host:port, "
        "[v6]:port or unix@/path");
}

TEST_CASE("http: a server that answers CONNECT with anything but 2xx, or not HTTP, or nothing, fails the dial",
          "[http]") {
  struct row {
    std::string answer;  // what the fake server sends after reading the CONNECT; empty: nothing
    geerpc::errc code;
    std::string message_end;
  };
  const row rows[] = {
      {"HTTP/1.0 404 Not Found\r\n\r\n", geerpc::errc::handshake_rejected,
       "the server answered HTTP CONNECT with \"HTTP/1.0 404 Not Found\""},
      {"HTTP/1.0 2000 Odd\r\n\r\n", geerpc::errc::handshake_rejected,
       "the server answered HTTP CONNECT with \"HTTP/1.0 2000 Odd\""},
      {"SSH-2.0-OpenSSH\r\n", geerpc::errc::protocol_error, "the answer to HTTP CONNECT is not HTTP"},
      {"HTTP/1.0 200 OK\r\nX: " + std::string(9000, 'a'), geerpc::errc::protocol_error,
       "the answer to HTTP CONNECT is larger than 8 KiB"},
      {"", geerpc::errc::connect_timeout, ""},
  };
  for (const auto& r : rows) {
    INFO(r.answer.substr(0, 40));
    test::listener fake;
    std::thread server([&] {
      auto peer = test::accept_raw(fake, 2s);
      if (!peer) return;
      const std::string request = "CONNECT /_geerpc_ HTTP/1.0\r\n\r\n";
      const auto got = peer->read(request.size());
      if (!got || std::string(reinterpret_cast<const char*>(got->data()), got->size()) != request) return;
      if (!r.answer.empty()) peer->send(r.answer);
      peer->closed_by_peer(2s);  // holds the connection until the client gives up
    });
    const auto client = geerpc::try_dial("http@" + fake.address(), {.timeouts = {.connect = 300ms}});
    server.join();
    CHECK(client.code() == r.code);
    CHECK(client.message().ends_with(r.message_end));
  }
  // Go's net/rpc answers "200 Connected to Go RPC": any 2xx is taken, and the hello follows.
  test::listener go_like;
  std::thread server([&] {
    auto peer = test::accept_raw(go_like, 2s);
    if (!peer) return;
    if (!peer->read(std::string_view("CONNECT /_geerpc_ HTTP/1.0\r\n\r\n").size())) return;
    peer->send("HTTP/1.0 200 Connected to Go RPC\n\n");
    const auto hello = peer->read(geerpc::wire::hello_size);
    if (!hello) return;
    std::vector<std::byte> reply;
    geerpc::wire::encode_hello_reply({true, geerpc::wire::default_max_frame_size, {}}, reply);
    peer->send(reply);
    peer->closed_by_peer(2s);
  });
  auto client = geerpc::try_dial("http@" + go_like.address(), {.timeouts = {.connect = 2s}});
  CHECK(client.has_value());
  if (client) client->close();
  server.join();
}

}  // namespace http_test
