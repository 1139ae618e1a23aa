// geerpc-call (tools/geerpc_call) run as a program against a server in this process: list and
// describe read geerpc.Describe, a call prints its result's JSON, and each failure has its exit
// status and its `geerpc-call: errc: message` line; --unix and --http reach the server their way, the
// reply is pretty or one line as asked, options go anywhere. GEERPC_CALL_PROGRAM is the built binary.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <geerpc/json.hpp>

#include "catch.hpp"
#include "subprocess.hpp"
#include "support.hpp"

namespace cli_test {

using namespace std::chrono_literals;

namespace {

struct Probe {
  // The value of the call's metadata `key`, "(none)" without one.
  std::string header(const std::string& key, const geerpc::call_context& ctx) {
    return std::string(ctx.metadata(key).value_or("(none)"));
  }
  // Its argument, back: a reply with nesting, for the layouts.
  std::map<std::string, std::vector<std::string>> words(const std::map<std::string, std::vector<std::string>>& w) {
    return w;
  }
};
using ProbeApi =
    geerpc::service<"Probe", geerpc::method<"Header", &Probe::header>, geerpc::method<"Words", &Probe::words>>;

// A server of both codecs with Arith and Probe, counting the calls that reach it.
struct test_server {
  test::Arith arith;
  Probe probe;
  std::atomic<int> calls{0};
  geerpc::basic_server<geerpc::threaded, geerpc::codecs<geerpc::binary_codec, geerpc::json_codec>> server;
  std::string address;
  explicit test_server(const std::string& listen_on = "127.0.0.1:0") {
    server.add<test::ArithApi>(arith);
    server.add<ProbeApi>(probe);
    server.use({.before = [this](const geerpc::call_context&) -> std::optional<geerpc::error> {
      ++calls;
      return std::nullopt;
    }});
    address = server.listen(listen_on);
  }
};

finished geerpc_call(const std::vector<std::string>& arguments, const std::string& stdin_text = {}) {
  finished f = run_program(GEERPC_CALL_PROGRAM, arguments, stdin_text);
  INFO("stdout: " << f.out << "\nstderr: " << f.err);
  CHECK_FALSE(f.timed_out);
  return f;
}

// A TCP listener on 127.0.0.1 that takes one connection, keeps the request it reads (up to the blank
// line that ends an HTTP request's head) and answers it with `answer`: what --http sends, seen.
class one_http_answer {
 public:
  explicit one_http_answer(std::string answer) : answer_(std::move(answer)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in where{};
    where.sin_family = AF_INET;
    where.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof where;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&where), sizeof where) != 0 || ::listen(fd_, 1) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&where), &length) != 0)
      throw std::runtime_error("one_http_answer: no listener");
    address_ = "127.0.0.1:" + std::to_string(ntohs(where.sin_port));
    request_ = std::async(std::launch::async, [this] { return serve_one(); });
  }
  ~one_http_answer() { ::close(fd_); }
  const std::string& address() const { return address_; }
  // The request that came (empty when none came within 10 s).
  std::string request() { return request_.get(); }

 private:
  std::string serve_one() {
    pollfd waiting{fd_, POLLIN, 0};
    if (::poll(&waiting, 1, 10'000) != 1) return {};
    const int peer = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (peer < 0) return {};
    std::string request;
    char buffer[512];
    pollfd reading{peer, POLLIN, 0};
    while (request.find("\r\n\r\n") == std::string::npos && request.size() < 8192 && ::poll(&reading, 1, 10'000) == 1) {
      const ssize_t n = ::read(peer, buffer, sizeof buffer);
      if (n <= 0) break;
      request.append(buffer, static_cast<std::size_t>(n));
    }
    (void)!::write(peer, answer_.data(), answer_.size());
    ::close(peer);
    return request;
  }

  int fd_ = -1;
  std::string answer_, address_;
  std::future<std::string> request_;
};

}  // namespace

TEST_CASE("geerpc-call list: every method with its argument and result types", "[cli]") {
  test_server s;
  const finished f = geerpc_call({s.address, "list"});
  REQUIRE(f.exit_code == 0);
  CHECK(f.err.empty());
  CHECK_THAT(f.out, Catch::Contains("Arith.Sum({num1: int32, num2: int32}) -> int32\n"));
  CHECK_THAT(f.out, Catch::Contains("Arith.Echo(string) -> string\n"));
  CHECK_THAT(f.out, Catch::Contains("Arith.Nothing({num1: int32, num2: int32}) -> void\n"));
  CHECK_THAT(f.out, Catch::Contains("Probe.Header(string) -> string\n"));
  CHECK_THAT(f.out, Catch::Contains("geerpc.Describe() -> string\n"));
  const finished alone = geerpc_call({s.address});  // ADDRESS with nothing after it: list
  CHECK(alone.exit_code == 0);
  CHECK(alone.out == f.out);
}

TEST_CASE("geerpc-call describe: the method's argument and result schemas", "[cli]") {
  test_server s;
  const finished f = geerpc_call({s.address, "describe", "Arith.Sum"});
  REQUIRE(f.exit_code == 0);
  CHECK_THAT(f.out, Catch::StartsWith("{\n  \"name\": \"Arith.Sum\",\n  \"params\": {\n"));
  CHECK_THAT(f.out, Catch::Contains("\"prefixItems\": ["));
  CHECK_THAT(f.out, Catch::Contains("\"num1\": {"));
  CHECK_THAT(f.out, Catch::Contains("\"result\": {\n    \"type\": \"integer\",\n    \"minimum\": -2147483648,\n"));
  const finished unknown = geerpc_call({s.address, "describe", "Arith.Nope"});
  CHECK(unknown.exit_code == 1);
  CHECK_THAT(unknown.err, Catch::StartsWith("geerpc-call: unknown_method: "));
}

TEST_CASE("geerpc-call: a call prints its result's JSON", "[cli]") {
  test_server s;
  CHECK(geerpc_call({s.address, "Arith.Sum", R"({"num1":1,"num2":2})"}).out == "3\n");
  CHECK(geerpc_call({s.address, "Arith.Echo", R"("caf\u00e9 \"q\"")"}).out == "\"caf\xc3\xa9 \\\"q\\\"\"\n");
  const finished from_stdin = geerpc_call({s.address, "Arith.Sum", "-"}, R"([{"num1":40,"num2":2}])");
  CHECK(from_stdin.exit_code == 0);
  CHECK(from_stdin.out == "42\n");
  const finished nothing = geerpc_call({s.address, "Arith.Nothing", "{}"});
  CHECK(nothing.exit_code == 0);
  CHECK(nothing.out.empty());  // a void method: no value to print
  CHECK(s.calls == 4);
}

TEST_CASE("geerpc-call: a bad ARG is a usage error and sends nothing", "[cli]") {
  test_server s;
  const finished f = geerpc_call({s.address, "Arith.Sum", "{num1: 1}"});
  CHECK(f.exit_code == 2);
  CHECK_THAT(f.err, Catch::StartsWith("geerpc-call: ARG 1 is not one JSON value ("));
  CHECK(f.out.empty());
  const finished not_array = geerpc_call({s.address, "Arith.Sum", "-"}, R"({"num1":1})");
  CHECK(not_array.exit_code == 2);
  CHECK_THAT(not_array.err, Catch::Contains("one JSON array"));
  CHECK(s.calls == 0);
}

TEST_CASE("geerpc-call: the server's refusals exit 1 with their errc", "[cli]") {
  test_server s;
  const finished unknown = geerpc_call({s.address, "Arith.Nope", "{}"});
  CHECK(unknown.exit_code == 1);
  CHECK_THAT(unknown.err, Catch::StartsWith("geerpc-call: unknown_method: "));
  const finished wrong_shape = geerpc_call({s.address, "Arith.Sum", R"("text")"});
  CHECK(wrong_shape.exit_code == 1);
  CHECK_THAT(wrong_shape.err, Catch::StartsWith("geerpc-call: bad_request: "));
  const finished thrown = geerpc_call({s.address, "Arith.Fail", "{}"});
  CHECK(thrown.exit_code == 1);
  CHECK(thrown.err == "geerpc-call: remote_error: boom: handler failed\n");
}

TEST_CASE("geerpc-call --timeout: the deadline travels with the call and ends it", "[cli]") {
  test_server s;
  const finished f = geerpc_call({"--timeout", "100ms", s.address, "Arith.WaitForStop", R"({"num1":1,"num2":1})"});
  CHECK(f.exit_code == 1);
  CHECK_THAT(f.err, Catch::StartsWith("geerpc-call: deadline_exceeded: "));
  CHECK(f.took >= 100ms);
  CHECK(f.took < 5s);  // the handler's own bound is 10 s: its stop_token fired, or the caller gave up
  CHECK(s.arith.stops_seen.wait_for_at_least(1));  // the server saw the deadline too: the handler's stop_token fired
}

TEST_CASE("geerpc-call --metadata reaches the handler", "[cli]") {
  test_server s;
  CHECK(geerpc_call({"--metadata", "trace=abc-1", "--metadata=team=x", s.address, "Probe.Header", R"("trace")"}).out ==
        "\"abc-1\"\n");
  CHECK(geerpc_call({s.address, "Probe.Header", R"("trace")"}).out == "\"(none)\"\n");
}

TEST_CASE("geerpc-call: usage errors exit 2, --help 0, an unreachable server 1", "[cli]") {
  const finished help = geerpc_call({"--help"});
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::StartsWith("usage: geerpc-call [options] ADDRESS [list]\n"));
  CHECK_THAT(help.out, Catch::Contains("--insecure-skip-verify"));
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{},
                                             {"--timeout", "1s"},
                                             {"127.0.0.1:1", "Sum"},
                                             {"--timeout", "soon", "127.0.0.1:1", "list"},
                                             {"--metadata", "novalue", "127.0.0.1:1", "list"},
                                             {"--bogus", "127.0.0.1:1", "list"},
                                             {"127.0.0.1:1", "describe"},
                                             {"127.0.0.1:1", "list", "more"},
                                             {"--unix", "/tmp/x.sock", "--http", "list"},
                                             {"--http", "unix@/tmp/x.sock", "list"},
                                             {"--unix"}}) {
    const finished f = geerpc_call(bad);
    CHECK(f.exit_code == 2);
    CHECK_THAT(f.err, Catch::StartsWith("geerpc-call: "));
  }
  test::temp_dir dir;
  const finished unreachable = geerpc_call({"--connect-timeout", "2s", "unix@" + dir.path() + "/none.sock", "list"});
  CHECK(unreachable.exit_code == 1);
  CHECK_THAT(unreachable.err, Catch::StartsWith("geerpc-call: connect_failed: "));
}

TEST_CASE("geerpc-call: the reply is the server's one line when piped, indented with --pretty", "[cli]") {
  test_server s;
  const std::string words = R"({"none":[],"words":["a,b","{c: \"d\"}"]})";
  const finished piped = geerpc_call({s.address, "Probe.Words", words});
  REQUIRE(piped.exit_code == 0);
  CHECK(piped.out == words + "\n");  // the test's stdout is a pipe: the default is the server's text
  CHECK(geerpc_call({"--compact", s.address, "Probe.Words", words}).out == words + "\n");
  const finished pretty = geerpc_call({"--pretty", s.address, "Probe.Words", words});
  CHECK(pretty.exit_code == 0);
  CHECK(pretty.out ==
        "{\n"
        "  \"none\": [],\n"
        "  \"words\": [\n"
        "    \"a,b\",\n"
        "    \"{c: \\\"d\\\"}\"\n"
        "  ]\n"
        "}\n");
  CHECK(geerpc_call({s.address, "Arith.Sum", R"({"num1":1,"num2":2})", "--pretty"}).out == "3\n");
}

TEST_CASE("geerpc-call: options after the method are options, -- ends them", "[cli]") {
  test_server s;
  const finished after = geerpc_call(
      {s.address, "Probe.Header", "--timeout", "5s", R"("trace")", "--metadata", "trace=late", "--compact"});
  CHECK(after.exit_code == 0);
  CHECK(after.out == "\"late\"\n");
  const finished unknown = geerpc_call({s.address, "Arith.Echo", "--x"});
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.err, Catch::StartsWith("geerpc-call: unknown option --x"));
  const finished ended = geerpc_call({s.address, "Arith.Echo", "--", "--x"});  // an ARG now: not JSON
  CHECK(ended.exit_code == 2);
  CHECK_THAT(ended.err, Catch::StartsWith("geerpc-call: ARG 1 is not one JSON value"));
  CHECK(geerpc_call({s.address, "Arith.Sum", "--", R"({"num1":-1,"num2":-2})"}).out == "-3\n");
  CHECK(s.calls == 2);
}

TEST_CASE("geerpc-call --unix PATH calls over a Unix socket, in place of ADDRESS", "[cli]") {
  test::temp_dir dir;
  test_server s(dir.socket());
  const std::string path = dir.path() + "/s.sock";
  const finished sum = geerpc_call({"--unix", path, "Arith.Sum", R"({"num1":20,"num2":22})"});
  CHECK(sum.exit_code == 0);
  CHECK(sum.out == "42\n");
  const finished listed = geerpc_call({"--unix=" + path});
  CHECK(listed.exit_code == 0);
  CHECK_THAT(listed.out, Catch::Contains("Arith.Sum({num1: int32, num2: int32}) -> int32\n"));
  const finished described = geerpc_call({"describe", "Arith.Sum", "--unix", path});
  CHECK(described.exit_code == 0);
  CHECK_THAT(described.out, Catch::StartsWith("{\n  \"name\": \"Arith.Sum\""));
  CHECK(s.calls >= 1);
}

TEST_CASE("geerpc-call --http connects through HTTP CONNECT on the RPC port", "[cli]") {
  test_server s;
  const finished sum = geerpc_call({"--http", s.address, "Arith.Sum", R"({"num1":1,"num2":2})"});
  CHECK(sum.exit_code == 0);
  CHECK(sum.out == "3\n");
  one_http_answer refuser("HTTP/1.0 403 Forbidden\r\n\r\n");
  const finished refused = geerpc_call({"--http", "--connect-timeout", "5s", refuser.address(), "list"});
  CHECK_THAT(refuser.request(), Catch::StartsWith("CONNECT /_geerpc_ HTTP/1.0\r\n"));
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.err, Catch::StartsWith("geerpc-call: handshake_rejected: "));
  CHECK_THAT(refused.err, Catch::Contains("HTTP/1.0 403 Forbidden"));
  CHECK(std::count(refused.err.begin(), refused.err.end(), '\n') == 1);
  one_http_answer stranger("SSH-2.0-not-http\r\n\r\n");
  const finished confused = geerpc_call({"--http", stranger.address(), "list"});
  CHECK_THAT(stranger.request(), Catch::StartsWith("CONNECT /_geerpc_ "));
  CHECK(confused.exit_code == 1);
  CHECK_THAT(confused.err, Catch::StartsWith("geerpc-call: protocol_error: "));
}

}  // namespace cli_test
