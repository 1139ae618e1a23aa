// Large replies over TLS, where a session's write differs from a socket's: a deferred reply sent
// from another thread on the blocking server (which has no thread to finish a short write).
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "tls_support.hpp"

namespace tls_writes_test {

using namespace std::chrono_literals;

namespace {

// Answers from a thread of its own, after the handler has returned: on the blocking server, nobody
// is then left to send what the first write did not take.
struct Deferred {
  std::vector<std::jthread> answering;
  void big(std::size_t size, geerpc::responder<std::string> reply) {
    answering.emplace_back([size, reply = std::move(reply)]() mutable { reply(std::string(size, 'r')); });
  }
};
using DeferredApi = geerpc::service<"Deferred", geerpc::method<"Big", &Deferred::big>>;

}  // namespace

TEST_CASE("TLS on the blocking server: a deferred reply larger than a record arrives at once", "[tls]") {
  // One TLS write used to take one 16 KiB record and report the rest as "socket full": the
  // connection's thread, waiting for the next request, would send it only at the write timeout.
  test::tls::pki pki;
  Deferred deferred;
  geerpc::basic_server<geerpc::blocking> server(
      {.timeouts = {.write = 30s}, .session = geerpc::tls::server(pki.server_settings())});
  server.add<DeferredApi>(deferred);
  const std::string address = "tls@" + server.listen("127.0.0.1:0");
  auto dialed = test::tls::dial<geerpc::blocking>(address, pki.client_settings());
  REQUIRE(dialed.has_value());
  for (std::size_t size : {100'000u, 16'385u, 1'000'000u}) {
    auto reply = dialed.value().try_call<std::string>(geerpc::with_timeout(5s), "Deferred.Big", size);
    REQUIRE(reply.has_value());
    CHECK(reply.value() == std::string(size, 'r'));
  }
  server.stop();
}

}  // namespace tls_writes_test
