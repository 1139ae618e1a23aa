// geerpc-call with a tls@ address: --ca trusts the test CA, --insecure-skip-verify trusts any
// certificate, --cert/--key answer a server that requires client certificates; without them a
// server the system's CAs do not know is refused. Built where geerpc::tls is.
#include <fstream>
#include <string>
#include <vector>

#include <geerpc/json.hpp>
#include <geerpc/tls.hpp>

#include "catch.hpp"
#include "certificates.hpp"
#include "subprocess.hpp"
#include "support.hpp"

namespace cli_tls_test {

using cli_test::finished;
using cli_test::run_program;
using geerpc::tls::pem;

namespace {

std::string written(const test::temp_dir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.path() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

struct tls_json_server {
  test::Arith arith;
  geerpc::basic_server<geerpc::threaded, geerpc::codecs<geerpc::binary_codec, geerpc::json_codec>> server;
  std::string address;
  explicit tls_json_server(const geerpc::tls::server_settings& settings)
      : server(geerpc::server_options{.session = geerpc::tls::server(settings)}) {
    server.add<test::ArithApi>(arith);
    address = "tls@" + server.listen("127.0.0.1:0");
  }
};

finished geerpc_call(const std::vector<std::string>& arguments) {
  finished f = run_program(GEERPC_CALL_PROGRAM, arguments);
  INFO("stdout: " << f.out << "\nstderr: " << f.err);
  CHECK_FALSE(f.timed_out);
  return f;
}

}  // namespace

TEST_CASE("geerpc-call over TLS: --ca, --insecure-skip-verify, --cert and --key", "[cli][tls]") {
  test::tls::authority ca;
  const test::tls::identity server_id = ca.issue({.common_name = "server", .ips = {"127.0.0.1"}});
  const test::tls::identity client_id = ca.issue({.common_name = "client"});
  test::temp_dir dir;
  const std::string ca_file = written(dir, "ca.pem", ca.certificate());
  const std::string cert_file = written(dir, "client.pem", client_id.certificate);
  const std::string key_file = written(dir, "client.key", client_id.key);
  const std::string sum = R"({"num1":1,"num2":2})";

  tls_json_server plain({.certificate = pem::in_memory(server_id.certificate), .key = pem::in_memory(server_id.key)});
  CHECK(geerpc_call({"--ca", ca_file, plain.address, "Arith.Sum", sum}).out == "3\n");
  CHECK(geerpc_call({"--insecure-skip-verify", plain.address, "Arith.Sum", sum}).out == "3\n");
  const finished untrusted = geerpc_call({"--connect-timeout", "5s", plain.address, "Arith.Sum", sum});
  CHECK(untrusted.exit_code == 1);
  CHECK_THAT(untrusted.err, Catch::StartsWith("geerpc-call: "));
  CHECK_THAT(untrusted.err, Catch::Contains("certificate"));

  tls_json_server mutual({.certificate = pem::in_memory(server_id.certificate),
                          .key = pem::in_memory(server_id.key),
                          .clients = geerpc::tls::client_certificates::require,
                          .client_ca = pem::in_memory(ca.certificate())});
  CHECK(geerpc_call({"--ca", ca_file, "--cert", cert_file, "--key", key_file, mutual.address, "Arith.Sum", sum}).out ==
        "3\n");
  CHECK(geerpc_call({"--ca", ca_file, mutual.address, "Arith.Sum", sum}).exit_code == 1);
  const finished missing = geerpc_call({"--ca", dir.path() + "/none.pem", plain.address, "list"});
  CHECK(missing.exit_code == 1);
  CHECK_THAT(missing.err, Catch::StartsWith("geerpc-call: invalid_argument: tls: "));
}

}  // namespace cli_tls_test
