// One TLS session driven directly over a socketpair, its engine's part played by the test: what
// read(), buffered() and wants() say in states the engines must not spin in.
#include <fcntl.h>
#include <sys/socket.h>

#include <memory>
#include <span>
#include <string_view>

#include "catch.hpp"
#include "tls_support.hpp"

namespace tls_session_test {

namespace {

struct socket_pair {
  int fds[2] = {-1, -1};
  socket_pair() {
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    for (int fd : fds) ::fcntl(fd, F_SETFL, O_NONBLOCK);
  }
  ~socket_pair() {
    for (int fd : fds) ::close(fd);
  }
};

// A server session over one end of `pair`, and an OpenSSL client over the other, handshaken.
struct session_and_client {
  geerpc::tls::context_ptr server_ctx;
  geerpc::tls::session server;
  std::unique_ptr<SSL_CTX, test::tls::ssl_ctx_deleter> client_ctx{SSL_CTX_new(TLS_client_method())};
  std::unique_ptr<SSL, test::tls::ssl_deleter> client;

  session_and_client(test::tls::pki& pki, socket_pair& pair)
      : server_ctx(geerpc::tls::make_server_context(pki.server_settings())),
        server(server_ctx.get(), pair.fds[0], geerpc::net::stream_session_factory::role::server, "",
               std::make_shared<geerpc::tls::failure_log>()) {
    static constexpr unsigned char alpn[] = {8, 'g', 'e', 'e', 'r', 'p', 'c', '/', '1'};
    SSL_CTX_set_alpn_protos(client_ctx.get(), alpn, sizeof alpn);
    client.reset(SSL_new(client_ctx.get()));
    SSL_set_fd(client.get(), pair.fds[1]);
    SSL_set_connect_state(client.get());
    std::byte buffer[4096];
    for (int i = 0; i < 100 && SSL_do_handshake(client.get()) != 1; ++i) server.read(buffer);
    REQUIRE(SSL_is_init_finished(client.get()) == 1);
    for (int i = 0; i < 5; ++i) server.read(buffer);  // the client's Finished
  }
};

}  // namespace

TEST_CASE("records that arrived together come out of one read, and a short one means the socket was emptied", "[tls]") {
  // One SSL_read returns one record's data: a session that stopped there gave the engines a
  // short read per record, each one more turn of their loop (and a recv or an epoll_wait more).
  test::tls::pki pki;
  socket_pair pair;
  session_and_client s(pki, pair);
  for (const char* record : {"alpha", "bravo", "delta"}) REQUIRE(SSL_write(s.client.get(), record, 5) == 5);
  std::byte buffer[4096];
  const geerpc::net::io_result all = s.server.read(buffer);
  REQUIRE(all.status == geerpc::net::io_status::data);
  CHECK(std::string_view(reinterpret_cast<const char*>(buffer), all.bytes) == "alphabravodelta");
  CHECK_FALSE(s.server.buffered());
  CHECK(s.server.read(buffer).status == geerpc::net::io_status::would_block);
  // A read with less room than the records hold stops when full; the rest is buffered().
  for (const char* record : {"AAAA", "BBBB"}) REQUIRE(SSL_write(s.client.get(), record, 4) == 4);
  std::span<std::byte> six(buffer, 6);
  const geerpc::net::io_result part = s.server.read(six);
  REQUIRE(part.status == geerpc::net::io_status::data);
  CHECK(part.bytes == 6);
  CHECK(s.server.buffered());
  const geerpc::net::io_result rest = s.server.read(buffer);
  REQUIRE(rest.status == geerpc::net::io_status::data);
  CHECK(std::string_view(reinterpret_cast<const char*>(buffer), rest.bytes) == "BB");
  ERR_clear_error();
}

TEST_CASE("the peer's close_notify behind its data: the data first, then closed", "[tls]") {
  test::tls::pki pki;
  socket_pair pair;
  session_and_client s(pki, pair);
  REQUIRE(SSL_write(s.client.get(), "last", 4) == 4);
  REQUIRE(SSL_shutdown(s.client.get()) >= 0);
  std::byte buffer[4096];
  const geerpc::net::io_result last = s.server.read(buffer);
  REQUIRE(last.status == geerpc::net::io_status::data);
  CHECK(std::string_view(reinterpret_cast<const char*>(buffer), last.bytes) == "last");
  // The close came in the same recv, and the socket is empty now (the peer keeps it open, waiting
  // for our close_notify): buffered() must say there is more to read, or the engines wait on the
  // socket for ever (review).
  CHECK(s.server.buffered());
  CHECK(s.server.read(buffer).status == geerpc::net::io_status::closed);
  CHECK(s.server.read(buffer).status == geerpc::net::io_status::closed);
  ERR_clear_error();
}

TEST_CASE("a read that must write first never says buffered: the engines wait for writability", "[tls]") {
  // The peer asks for a KeyUpdate and sends two records behind it; the server's socket is full, so
  // the update's answer cannot go out. OpenSSL then finishes that write before any read: while the
  // records wait in the session's buffer, a buffered() of true had the blocking server and a
  // caller reading its own reply loop without waiting, at full CPU, until the peer read.
  test::tls::pki pki;
  socket_pair pair;
  session_and_client s(pki, pair);
  geerpc::tls::session& server = s.server;
  SSL* const client = s.client.get();
  std::byte buffer[4096];
  REQUIRE(SSL_key_update(client, SSL_KEY_UPDATE_REQUESTED) == 1);
  REQUIRE(SSL_do_handshake(client) == 1);
  REQUIRE(SSL_write(client, "A", 1) == 1);
  REQUIRE(SSL_write(client, "B", 1) == 1);
  const char junk = 0;  // the server's socket full, at a record boundary (the client never reads)
  while (::send(pair.fds[0], &junk, 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1) {
  }
  const geerpc::net::io_result first = server.read(buffer);
  REQUIRE(first.status == geerpc::net::io_status::data);  // "A", the update noted
  const std::byte reply[1] = {std::byte{'r'}};
  CHECK(server.write(reply).status == geerpc::net::io_status::would_block);  // the update's answer waits
  for (int i = 0; i < 3; ++i) {
    const geerpc::net::io_result r = server.read(buffer);
    INFO("read " << i);
    CHECK(r.status == geerpc::net::io_status::would_block);
    CHECK_FALSE(server.buffered());
    CHECK(server.wants() == POLLOUT);
  }
  ERR_clear_error();
}

}  // namespace tls_session_test
