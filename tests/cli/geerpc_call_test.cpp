// geerpc-call (tools/geerpc_call) run as a program against a server in this process: list and
// describe read geerpc.Describe, a call prints its result's JSON, and each failure has its exit
// status and its `geerpc-call: errc: message` line. GEERPC_CALL_PROGRAM is the built binary.
#include <atomic>
#include <chrono>
#include <optional>
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
};
using ProbeApi = geerpc::service<"Probe", geerpc::method<"Header", &Probe::header>>;

// A server of both codecs with Arith and Probe, counting the calls that reach it.
struct test_server {
  test::Arith arith;
  Probe probe;
  std::atomic<int> calls{0};
  geerpc::basic_server<geerpc::threaded, geerpc::codecs<geerpc::binary_codec, geerpc::json_codec>> server;
  std::string address;
  test_server() {
    server.add<test::ArithApi>(arith);
    server.add<ProbeApi>(probe);
    server.use({.before = [this](const geerpc::call_context&) -> std::optional<geerpc::error> {
      ++calls;
      return std::nullopt;
    }});
    address = server.listen("127.0.0.1:0");
  }
};

finished geerpc_call(const std::vector<std::string>& arguments, const std::string& stdin_text = {}) {
  finished f = run_program(GEERPC_CALL_PROGRAM, arguments, stdin_text);
  INFO("stdout: " << f.out << "\nstderr: " << f.err);
  CHECK_FALSE(f.timed_out);
  return f;
}

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
  CHECK_THAT(help.out, Catch::StartsWith("usage: geerpc-call [options] ADDRESS list\n"));
  CHECK_THAT(help.out, Catch::Contains("--insecure-skip-verify"));
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{},
                                             {"127.0.0.1:1"},
                                             {"127.0.0.1:1", "Sum"},
                                             {"--timeout", "soon", "127.0.0.1:1", "list"},
                                             {"--metadata", "novalue", "127.0.0.1:1", "list"},
                                             {"--bogus", "127.0.0.1:1", "list"},
                                             {"127.0.0.1:1", "describe"}}) {
    const finished f = geerpc_call(bad);
    CHECK(f.exit_code == 2);
    CHECK_THAT(f.err, Catch::StartsWith("geerpc-call: "));
  }
  test::temp_dir dir;
  const finished unreachable = geerpc_call({"--connect-timeout", "2s", "unix@" + dir.path() + "/none.sock", "list"});
  CHECK(unreachable.exit_code == 1);
  CHECK_THAT(unreachable.err, Catch::StartsWith("geerpc-call: connect_failed: "));
}

}  // namespace cli_test
