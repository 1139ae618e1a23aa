// Large replies over TLS, where a session's write differs from a socket's: a deferred reply sent
// from another thread on the blocking server (which has no thread to finish a short write), and
// small output limits (whose queue blocks are shorter than a TLS record a retry must offer again).
#include <sys/socket.h>

#include <array>
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

struct Maker {
  std::string make(std::size_t size) { return std::string(size, 'm'); }
};
using MakerApi = geerpc::service<"Maker", geerpc::method<"Make", &Maker::make>>;

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

TEMPLATE_TEST_CASE("TLS with a small output limit: a reply that fills the socket goes out whole", "[tls]",
                   geerpc::blocking, geerpc::threaded) {
  // Blocks of limit/8 bytes were shorter than the 16 KiB record OpenSSL requires a retry to offer
  // again: once a reply's first write filled the socket, the retry failed with "bad length" and the
  // connection broke. A client that reads nothing until the server queues output makes it so. (Its
  // receive buffer keeps the kernel's size: shrunk below the loopback MSS after the connect, the
  // kernel advertises a window too small to send into and the connection stalls for good.)
  test::tls::pki pki;
  for (std::size_t limit : {64u << 10, 128u << 10}) {
    geerpc::server_options opts;
    opts.limits.max_pending_output = limit;
    opts.limits.max_frame_size = 16u << 20;  // for the reply below
    const auto factory = geerpc::tls::server(pki.server_settings());
    opts.session = factory;
    Maker maker;
    geerpc::basic_server<TestType> server(opts);
    server.template add<MakerApi>(maker);
    test::tls::raw_tls_client client(server.listen("127.0.0.1:0"));
    REQUIRE(client.handshake());
    std::array<std::byte, geerpc::wire::hello_size> hello{};
    geerpc::wire::encode_hello({.codec_id = geerpc::binary_codec::id, .max_response_size = 64u << 20}, hello);
    REQUIRE(client.write(hello));
    REQUIRE(client.read(geerpc::wire::hello_reply_header_size));
    // More than the two ends' socket buffers hold while the client reads nothing (loopback: up to
    // about 4 MiB sending, 128 KiB receiving).
    const std::size_t size = 12'000'000;
    REQUIRE(client.write(test::request_frame(1, "Maker.Make", size)));
    INFO("limit " << limit);
    REQUIRE(test::eventually([&] { return server.pending_output_peak() > 0; }, 10s));
    const auto expected = test::response_frame(1, std::string(size, 'm'));
    const auto reply = client.read(expected.size());
    CHECK(factory->last_failure() == "");
    REQUIRE(reply.has_value());
    CHECK(*reply == expected);
  }
}

}  // namespace tls_writes_test
