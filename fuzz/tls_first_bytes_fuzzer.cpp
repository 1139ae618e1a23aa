// Fuzzes what a TLS server does with the first bytes of a connection: its session's look at the
// first byte (a TLS record, or a plaintext peer served or refused), the TLS handshake records that
// follow, and the wire session above them (the geerpc hello, the HTTP door, the refusals written
// back in the peer's protocol). A real server_connection whose stream has a TLS session, over a
// socketpair: the input goes into the peer's end in chunks, and the connection is read and
// written as a transport would, until it closes or stalls. The last byte's low bit picks a port
// that requires TLS or one that does not. Nothing may crash, hang or leak.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <geerpc/geerpc.hpp>
#include <geerpc/tls.hpp>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../tests/tls/certificates.hpp"

namespace {

struct Args {
  int num1;
  int num2;
};

int sum(const Args& a) { return static_cast<int>(static_cast<unsigned>(a.num1) + static_cast<unsigned>(a.num2)); }

using Api = geerpc::service<"Arith", geerpc::method<"Sum", &sum>>;

// A server's context with a TLS factory: `required` or not.
struct port {
  geerpc::detail::server_context context;
  port(geerpc::detail::dispatcher& handlers, const test::tls::identity& server, bool required) {
    geerpc::server_options options;
    options.limits.max_frame_size = 4096;
    options.limits.max_pending_output = 64u << 10;
    options.timeouts.handshake = std::chrono::nanoseconds{0};  // no timers firing mid-input
    options.timeouts.frame = std::chrono::nanoseconds{0};
    options.session = geerpc::tls::server({.certificate = geerpc::tls::pem::in_memory(server.certificate),
                                           .key = geerpc::tls::pem::in_memory(server.key),
                                           .required = required});
    context.config.set_options(std::move(options));
    context.config.set_handlers(&handlers, geerpc::detail::codec_ids::of(geerpc::codecs<geerpc::binary_codec>{}));
    context.config.bind_runtime();  // the default runtime
  }
};

struct servers {
  geerpc::detail::dispatcher handlers;
  test::tls::authority ca;
  test::tls::identity identity = ca.issue({.common_name = "server", .dns = {"localhost"}, .ips = {"127.0.0.1"}});
  port required{handlers, identity, true};
  port optional{handlers, identity, false};

  servers() { handlers.add<geerpc::binary_codec, Api, void>(nullptr); }
};

servers& server() {
  static servers instance;
  return instance;
}

void drain(int fd) {
  std::byte sink[4096];
  while (::recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0) {
  }
}

// Reads the connection until its socket has nothing more (or it closes); false when it closed.
bool read_all(geerpc::detail::server_connection& connection, std::vector<std::byte>& buffer, bool& progressed) {
  std::vector<geerpc::detail::server_request*> ready;
  for (int reads = 0; reads < 64; ++reads) {
    const geerpc::net::io_result r = connection.stream().read_some(buffer);
    if (r.status != geerpc::net::io_status::data) return r.status == geerpc::net::io_status::would_block;
    progressed = true;
    const bool alive = connection.on_bytes(std::span(buffer).first(r.bytes), ready);
    for (auto* request : ready) geerpc::detail::server_connection::run(request);
    ready.clear();
    if (!alive) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const bool required = size != 0 && (data[size - 1] & 1) != 0;
  port& where = required ? server().required : server().optional;
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) return 0;
  const int peer = fds[1];
  std::shared_ptr<geerpc::detail::server_connection> connection;
  try {
    connection =
        std::make_shared<geerpc::detail::server_connection>(where.context, geerpc::net::unique_fd(fds[0]), nullptr);
  } catch (...) {  // the factory refused the connection
    ::close(peer);
    return 0;
  }
  std::vector<std::byte> buffer(16u << 10);
  const std::size_t chunk = size == 0 ? 1 : 1 + data[0] % 97;
  std::size_t at = 0;
  // Bounded: each round sends a chunk or reads something, or the connection has stalled.
  for (int round = 0; round < 4096; ++round) {
    bool progressed = false;
    if (at < size) {
      const ssize_t n = ::send(peer, data + at, std::min(chunk, size - at), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n > 0) {
        at += static_cast<std::size_t>(n);
        progressed = true;
      }
    }
    const bool alive = read_all(*connection, buffer, progressed) && connection->flush_output();
    drain(peer);
    if (!alive || !progressed) break;
  }
  static_cast<void>(connection->stream().seen());
  connection->close();
  ::close(peer);
  return 0;
}
