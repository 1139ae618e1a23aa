// How the etcd client words a failure (etcd/failure.hpp), alone: what libcurl reports for each TLS
// failure, under TLS 1.3 and 1.2, and etcd's refusals; and, against a real plain etcd, an https://
// endpoint that does not speak TLS. etcd_secure_test.cpp shows the same words from real failures.
#include <curl/curl.h>

#include <geerpc/etcd.hpp>
#include <string>

#include "../catch.hpp"
#include "etcd_process.hpp"

namespace {

using geerpc::etcd::detail::describe;
using geerpc::etcd::detail::transfer_failure;

const std::string url = "https://127.0.0.1:2379/v3/kv/range";

}  // namespace

TEST_CASE("a TLS failure is named by its cause, with libcurl's words after it", "[etcd][etcd_failure]") {
  CHECK_THAT(describe({url, CURLE_PEER_FAILED_VERIFICATION,
                       "SSL: no alternative certificate subject name matches "
                       "target host name 'localhost'",
                       false, false}),
             Catch::StartsWith("etcd: " + url + ": host name mismatch") && Catch::Contains("'localhost'"));
  CHECK_THAT(describe({url, CURLE_PEER_FAILED_VERIFICATION, "SSL certificate problem: unable to get local issuer",
                       false, false}),
             Catch::Contains("not trusted") && Catch::Contains("wrong CA?"));
  CHECK_THAT(
      describe({url, CURLE_SSL_CONNECT_ERROR, "error:0A00010B:SSL routines::wrong version number", false, false}),
      Catch::Contains("does not speak TLS"));
  CHECK_THAT(describe({url, CURLE_SSL_CONNECT_ERROR, "OpenSSL SSL_connect: SSL_ERROR_SYSCALL in connection to x", false,
                       false}),
             Catch::Contains("does not speak TLS"));
  CHECK_THAT(describe({url, CURLE_SSL_CACERT_BADFILE, "error setting certificate file", false, false}),
             Catch::Contains("CA bundle in tls.ca cannot be read"));
  CHECK_THAT(describe({url, CURLE_SSL_CERTPROBLEM, "could not load PEM client certificate", false, true}),
             Catch::Contains("client certificate or key in tls cannot be used"));
  // TLS 1.2: etcd's refusal is an alert during the handshake.
  CHECK_THAT(describe({url, CURLE_SSL_CONNECT_ERROR, "sslv3 alert bad certificate", false, true}),
             Catch::Contains("etcd refused the client certificate"));
  // TLS 1.3: it comes after the handshake, as an alert or a reset on the first read or write.
  CHECK_THAT(describe({url, CURLE_RECV_ERROR, "tlsv13 alert certificate required", true, false}),
             Catch::Contains("etcd requires a client certificate"));
  // Without an alert a reset may also be an etcd restarting: the message says both.
  CHECK_THAT(describe({url, CURLE_SEND_ERROR, "Connection reset by peer", true, false}),
             Catch::Contains("may require a client certificate") && Catch::Contains("restarting"));
  CHECK_THAT(describe({url, CURLE_GOT_NOTHING, "Empty reply from server", true, true}),
             Catch::Contains("may have refused the client certificate") && Catch::Contains("restarting"));
  // A reset in answer to the ClientHello: perhaps a plain server.
  CHECK_THAT(describe({url, CURLE_RECV_ERROR, "Recv failure: Connection reset by peer", false, false}),
             Catch::Contains("reset the connection at the TLS handshake: it may not speak TLS"));
  // Or as a handshake that failed, with the receive's words (seen on a loaded machine).
  CHECK_THAT(describe({url, CURLE_SSL_CONNECT_ERROR, "Recv failure: Connection reset by peer", false, false}),
             Catch::Contains("reset the connection at the TLS handshake: it may not speak TLS"));
  // The same reset before any handshake is only a connection that failed.
  CHECK_THAT(describe({url, CURLE_SEND_ERROR, "Connection reset by peer", false, false}),
             Catch::StartsWith("etcd: unreachable: " + url + ": Connection reset by peer"));
  CHECK_THAT(describe({url, CURLE_COULDNT_CONNECT, "", false, false}),
             Catch::Contains("unreachable") && Catch::Contains(curl_easy_strerror(CURLE_COULDNT_CONNECT)));
  CHECK_THAT(
      describe({"http://127.0.0.1:2379/v3/kv/range", CURLE_GOT_NOTHING, "Empty reply from server", false, false}),
      Catch::Contains("use an https:// endpoint"));
}

TEST_CASE("etcd's refusals are named, and a rejected token is told apart for a retry", "[etcd][etcd_failure]") {
  using geerpc::etcd::detail::describe_answer;
  const auto answer = [](const std::string& message) { return nlohmann::json{{"message", message}, {"code", 3}}; };
  CHECK_THAT(
      describe_answer(url, 400, answer("etcdserver: authentication failed, invalid user ID or password"), "", "app"),
      Catch::Contains("authentication of user 'app' failed"));
  CHECK_THAT(describe_answer(url, 403, answer("etcdserver: permission denied"), "", "app"),
             Catch::Contains("permission denied: user 'app'"));
  CHECK_THAT(describe_answer(url, 400, answer("etcdserver: user name is empty"), "", ""),
             Catch::Contains("set options::user and options::password"));
  const std::string common_name = "CommonName of client sending a request against gateway will be ignored";
  CHECK_THAT(describe_answer(url, 400, nlohmann::json::value_t::discarded, common_name, "app"),
             Catch::Contains("without (names in its subject alternative names)"));
  CHECK_THROWS_AS(describe_answer(url, 401, answer("etcdserver: invalid auth token"), "", "app"),
                  geerpc::etcd::token_rejected);
  CHECK_THROWS_AS(describe_answer(url, 400, answer("etcdserver: revision of auth store is old"), "", "app"),
                  geerpc::etcd::token_rejected);
  CHECK_THAT(describe_answer(url, 500, answer("boom"), "", ""), Catch::EndsWith("answered HTTP 500: boom"));
}

TEST_CASE("an https:// endpoint on a plain etcd is named as not speaking TLS", "[etcd][etcd_failure]") {
  test::etcd_process etcd;
  auto opts = etcd.options();
  opts.endpoints = {"https://127.0.0.1:" + std::to_string(etcd.client_port())};
  // It closes the connection at the ClientHello, or, with other timing (TSan's), resets it.
  CHECK_THROWS_WITH(geerpc::etcd::gateway(opts).range("/"), Catch::Contains("speak TLS (an http:// etcd?)"));
}

TEST_CASE("a user's password never goes to a remote etcd in plaintext", "[etcd][etcd_failure]") {
  geerpc::etcd::options remote;
  remote.user = "app";
  remote.password = "secret";
  for (const char* endpoint :
       {"http://10.0.0.7:2379", "http://etcd.example.com:2379", "10.0.0.7:2379", "http://127.evil.example:2379"}) {
    remote.endpoints = {"https://127.0.0.1:2379", endpoint};
    INFO(endpoint);
    try {
      geerpc::etcd::gateway refused(remote);
      FAIL("the gateway took a user with " << endpoint);
    } catch (const std::invalid_argument& e) {
      CHECK_THAT(e.what(), Catch::Contains("in plaintext") && Catch::Contains(endpoint) && !Catch::Contains("secret"));
    }
  }
  for (const char* endpoint :
       {"http://127.0.0.1:2379", "http://localhost:2379", "http://[::1]:2379", "https://etcd.example.com:2379"}) {
    remote.endpoints = {endpoint};
    INFO(endpoint);
    CHECK_NOTHROW(geerpc::etcd::gateway(remote));
  }
  remote.user.clear();  // no password to protect: plain HTTP anywhere is the user's choice
  remote.endpoints = {"http://10.0.0.7:2379"};
  CHECK_NOTHROW(geerpc::etcd::gateway(remote));
}
