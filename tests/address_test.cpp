// The address parser (net/address.hpp): the accepted forms, and for malformed text a reason, the
// accepted forms, and for the common mistakes the form probably meant. Pure: no socket is made.
#include <string>

#include "catch.hpp"
#include "support.hpp"

namespace address_test {

using geerpc::net::address;
using geerpc::net::parse_address;
using family = address::family;

namespace {

address tcp(std::string host, std::uint16_t port) { return {family::tcp, std::move(host), port, {}}; }
address http(std::string host, std::uint16_t port) { return {family::tcp, std::move(host), port, {}, true}; }
address unix_path(std::string path) { return {family::unix_path, {}, 0, std::move(path)}; }
address unix_abstract(std::string name) { return {family::unix_abstract, {}, 0, std::move(name)}; }

std::string message_for(const std::string& text) {
  const auto parsed = parse_address(text);
  return parsed ? std::string("(parsed)") : parsed.error.message();
}

}  // namespace

TEST_CASE("address: host:port, tcp@host:port and http@host:port, for names, IPv4 and bracketed IPv6", "[address]") {
  struct row {
    const char* text;
    address expected;
    const char* canonical;
  };
  const row rows[] = {
      {"127.0.0.1:80", tcp("127.0.0.1", 80), "127.0.0.1:80"},
      {"tcp@127.0.0.1:80", tcp("127.0.0.1", 80), "127.0.0.1:80"},
      {"localhost:0", tcp("localhost", 0), "localhost:0"},
      {"example.com:65535", tcp("example.com", 65535), "example.com:65535"},
      {"[::1]:8080", tcp("::1", 8080), "[::1]:8080"},
      {"tcp@[::1]:8080", tcp("::1", 8080), "[::1]:8080"},
      {"[fe80::1%lo]:1", tcp("fe80::1%lo", 1), "[fe80::1%lo]:1"},
      {"127.0.0.1:0080", tcp("127.0.0.1", 80), "127.0.0.1:80"},
      {"http@127.0.0.1:80", http("127.0.0.1", 80), "http@127.0.0.1:80"},
      {"http@[::1]:80", http("::1", 80), "http@[::1]:80"},
      {"http@localhost:0", http("localhost", 0), "http@localhost:0"},
  };
  for (const auto& r : rows) {
    INFO(r.text);
    const auto parsed = parse_address(r.text);
    REQUIRE(parsed);
    CHECK(*parsed.value == r.expected);
    CHECK(geerpc::net::to_string(*parsed.value) == r.canonical);
  }
}

TEST_CASE("address: unix@path (absolute or relative) and unix@@name (Linux abstract)", "[address]") {
  CHECK(*parse_address("unix@/tmp/x.sock").value == unix_path("/tmp/x.sock"));
  CHECK(*parse_address("unix@x.sock").value == unix_path("x.sock"));
  CHECK(*parse_address("unix@./run/x.sock").value == unix_path("./run/x.sock"));
  CHECK(*parse_address("unix@@geerpc-test").value == unix_abstract("geerpc-test"));
  CHECK(*parse_address("unix@/a:b@c").value == unix_path("/a:b@c"));  // all after unix@ is the path
  CHECK(geerpc::net::to_string(unix_path("/tmp/x.sock")) == "unix@/tmp/x.sock");
  CHECK(geerpc::net::to_string(unix_abstract("n")) == "unix@@n");

  // sun_path holds 108 bytes: a path needs its NUL, an abstract name the NUL before it.
  const std::string longest(geerpc::net::max_unix_path, 'p');
  CHECK(parse_address("unix@/" + longest.substr(1)));
  CHECK(parse_address("unix@@" + longest));
  CHECK(parse_address("unix@/" + longest).error.reason == "the socket path is too long (at most 107 bytes)");
  CHECK(parse_address("unix@@" + longest + "p").error.reason ==
        "the abstract socket name is too long (at most 107 bytes)");
  CHECK(parse_address("unix@").error.reason == "missing the socket path after unix@");
  CHECK(parse_address("unix@@").error.reason == "missing the socket name after unix@@");
}

TEST_CASE("address: a malformed address gets its reason and the accepted forms", "[address]") {
  const std::string forms =
      "use host:port, tcp@host:port, http@host:port, tls@host:port, jsonrpc@host:port, [v6]:port or unix@/path";
  struct row {
    const char* text;
    const char* reason;
  };
  const row rows[] = {
      {"127.0.0.1", "missing port"},
      {"127.0.0.1:", "missing port"},
      {"[::1]", "missing port"},
      {"[::1]:", "missing port"},
      {"[::1:80", "missing ']' after an IPv6 host"},
      {"[::1]80", "expected ':' and a port after ']'"},
      {":80", "missing host"},
      {"[]:80", "missing host"},
      {"127.0.0.1:99999", "the port must be a number from 0 to 65535"},
      {"127.0.0.1:65536", "the port must be a number from 0 to 65535"},
      {"127.0.0.1:99999999999999999999999", "the port must be a number from 0 to 65535"},
      {"127.0.0.1:x", "the port must be a number from 0 to 65535"},
      {"127.0.0.1:-1", "the port must be a number from 0 to 65535"},
      {"127.0.0.1: 80", "the port must be a number from 0 to 65535"},
      {"127.0.0.1 :80", "the host contains a space or control character"},
      {"not an address", "missing port"},
      {"", "it is empty"},
      {"tcp@", "missing port"},
      {"tcp@unix@/x", "missing port"},
      {"udp@127.0.0.1:80", "unknown transport \"udp@\""},
      {"http@unix@/x.sock", "http@ takes a TCP host:port (HTTP CONNECT is for TCP), not unix@"},
  };
  for (const auto& r : rows) {
    INFO(r.text);
    const auto parsed = parse_address(r.text);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error.reason == r.reason);
    CHECK(parsed.error.suggestion.empty());
    CHECK(parsed.error.message() == "bad address: " + std::string(r.reason) + "; " + forms);
  }
  const std::string with_nul("127.0.0.1\0:80", 13);
  CHECK(parse_address(with_nul).error.reason == "it contains a NUL byte");
  CHECK(parse_address("unix@/x\0y").value->path == "/x");  // a C string ends at its NUL
}

TEST_CASE("address: common mistakes name the form they probably meant", "[address]") {
  const std::string forms =
      "use host:port, tcp@host:port, http@host:port, tls@host:port, jsonrpc@host:port, [v6]:port or unix@/path";
  struct row {
    const char* text;
    const char* meant;
  };
  const row rows[] = {
      {"unix:/x.sock", "unix@/x.sock"},    // gRPC's and Docker's form
      {"unix:///x.sock", "unix@/x.sock"},  // a URL with an empty authority
      {"unix:x.sock", "unix@x.sock"},      //
      {"unix:@name", "unix@@name"},        //
      {"UNIX@/x.sock", "unix@/x.sock"},    // a capital letter in the transport
      {"tcp://127.0.0.1:80", "tcp@127.0.0.1:80"},
      {"tcp:127.0.0.1:80", "tcp@127.0.0.1:80"},
      {"TCP@localhost:1", "tcp@localhost:1"},
      {"HTTP@localhost:1", "http@localhost:1"},
      {"http://localhost:1/_geerpc_", "http@localhost:1"},
      {"tcp://[::1]:80", "tcp@[::1]:80"},
      {"http://127.0.0.1:80/", "http@127.0.0.1:80"},  // HTTP: through a CONNECT
      {"https://127.0.0.1:80/", "127.0.0.1:80"},      // a URL of another scheme
      {"/tmp/x.sock", "unix@/tmp/x.sock"},            // a bare path
      {"./x.sock", "unix@./x.sock"},
  };
  for (const auto& r : rows) {
    INFO(r.text);
    const auto parsed = parse_address(r.text);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error.reason.empty());
    CHECK(parsed.error.suggestion == r.meant);
    CHECK(parsed.error.message() == "bad address: " + forms + " (did you mean " + r.meant + "?)");
    CHECK(parse_address(parsed.error.suggestion));  // a suggestion is always an accepted address
  }
}

TEST_CASE("address: an unbracketed IPv6 literal is told to use brackets, and how", "[address]") {
  const auto parsed = parse_address("::1:80");
  CHECK(parsed.error.reason == "an IPv6 host must be in brackets");
  CHECK(parsed.error.suggestion == "[::1]:80");
  CHECK(message_for("tcp@fe80::1:443") ==
        "bad address: an IPv6 host must be in brackets; use host:port, tcp@host:port, http@host:port, tls@host:port, "
        "jsonrpc@host:port, "
        "[v6]:port or "
        "unix@/path "
        "(did you mean [fe80::1]:443?)");
  // A mistake whose meant form is malformed too gets that form's reason instead of a suggestion.
  CHECK(message_for("tcp://::1:80") ==
        "bad address: an IPv6 host must be in brackets; use host:port, tcp@host:port, http@host:port, tls@host:port, "
        "jsonrpc@host:port, "
        "[v6]:port or "
        "unix@/path "
        "(did you mean [::1]:80?)");
  CHECK(message_for("http@::1:80") ==
        "bad address: an IPv6 host must be in brackets; use host:port, tcp@host:port, http@host:port, tls@host:port, "
        "jsonrpc@host:port, "
        "[v6]:port or "
        "unix@/path (did you mean http@[::1]:80?)");
  CHECK(parse_address("http@/x.sock").error.reason == "missing port");
  CHECK(parse_address("unix:").error.reason == "missing the socket path after unix@");
  CHECK(parse_address("tcp://127.0.0.1:99999").error.reason == "the port must be a number from 0 to 65535");
  CHECK(parse_address("::1").error.suggestion.empty());  // "::1" is host ":" and port "1": no valid guess
}

TEST_CASE("address: long and odd texts are judged without recursion or overflow", "[address]") {
  std::string nested;
  for (int i = 0; i < 10000; ++i) nested += "a://";
  CHECK_FALSE(parse_address(nested));
  CHECK_FALSE(parse_address(std::string(1 << 20, ':')));
  CHECK_FALSE(parse_address(std::string(1 << 20, '[')));
  CHECK_FALSE(parse_address("unix@" + std::string(1 << 20, '/')));
  for (int c = 0; c < 256; ++c) (void)parse_address(std::string(1, static_cast<char>(c)) + "x:1");
}

TEST_CASE("address: jsonrpc@host:port is TCP for a Go net/rpc/jsonrpc server: jsonrpc@unix@ is refused", "[address]") {
  address expected = tcp("127.0.0.1", 80);
  expected.jsonrpc = true;
  CHECK(*parse_address("jsonrpc@127.0.0.1:80").value == expected);
  CHECK(geerpc::net::to_string(expected) == "jsonrpc@127.0.0.1:80");
  CHECK(geerpc::net::to_string(*parse_address("jsonrpc@[::1]:1").value) == "jsonrpc@[::1]:1");
  CHECK(parse_address("jsonrpc@unix@/x.sock").error.reason == "jsonrpc@ takes a TCP host:port, not unix@");
  CHECK(parse_address("JSONRPC@localhost:1").error.suggestion == "jsonrpc@localhost:1");
  CHECK(parse_address("jsonrpc@fe80::1:443").error.suggestion == "jsonrpc@[fe80::1]:443");
}

TEST_CASE("address: tls@host:port is TCP for a TLS client: tls@unix@ is refused", "[address]") {
  address expected = tcp("127.0.0.1", 80);
  expected.tls = true;
  CHECK(*parse_address("tls@127.0.0.1:80").value == expected);
  CHECK(geerpc::net::to_string(expected) == "tls@127.0.0.1:80");
  CHECK(geerpc::net::to_string(*parse_address("tls@[::1]:1").value) == "tls@[::1]:1");
  CHECK(parse_address("tls@unix@/x.sock").error.reason ==
        "tls@ takes a TCP host:port, not unix@ (over a Unix socket, set the TLS factory alone)");
  CHECK(parse_address("TLS@localhost:1").error.suggestion == "tls@localhost:1");
  CHECK(parse_address("tls@fe80::1:443").error.suggestion == "tls@[fe80::1]:443");
}

}  // namespace address_test
