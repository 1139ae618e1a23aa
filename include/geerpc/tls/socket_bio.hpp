// geerpc: the BIO an SSL object reads and writes its records through: the connection's
// non-blocking socket, with send(MSG_NOSIGNAL) so that a peer gone away never raises SIGPIPE (the
// core's plain path does the same; OpenSSL's own socket BIO uses write(2)). EAGAIN becomes
// OpenSSL's "retry", which SSL_get_error reports as WANT_READ / WANT_WRITE.
#pragma once

#include <openssl/bio.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "../config.hpp"
#include "errors.hpp"

GEERPC_BEGIN_NAMESPACE
namespace tls {
namespace detail {

inline int socket_of(BIO* bio) noexcept { return static_cast<int>(reinterpret_cast<std::intptr_t>(BIO_get_data(bio))); }

inline bool retryable(int error) noexcept { return error == EAGAIN || error == EWOULDBLOCK || error == EINTR; }

inline int bio_write(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  const ssize_t n = ::send(socket_of(bio), data, static_cast<std::size_t>(size), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0 && retryable(errno)) BIO_set_retry_write(bio);
  return static_cast<int>(n);
}

inline int bio_read(BIO* bio, char* out, int size) {
  BIO_clear_retry_flags(bio);
  const ssize_t n = ::recv(socket_of(bio), out, static_cast<std::size_t>(size), MSG_DONTWAIT);
  if (n < 0 && retryable(errno)) BIO_set_retry_read(bio);
  return static_cast<int>(n);
}

inline long bio_ctrl(BIO*, int command, long, void*) {
  // OpenSSL flushes after a flight of handshake records: every byte is already with the kernel.
  return command == BIO_CTRL_FLUSH ? 1 : 0;
}

inline int bio_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

// The method table, made once per process (a function-local static: thread-safe).
inline const BIO_METHOD* socket_method() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "geerpc socket");
    check(m != nullptr && BIO_meth_set_write(m, bio_write) == 1 && BIO_meth_set_read(m, bio_read) == 1 &&
              BIO_meth_set_ctrl(m, bio_ctrl) == 1 && BIO_meth_set_create(m, bio_create) == 1,
          "cannot make the socket BIO method");
    return m;
  }();
  return method;
}

// A BIO over `fd`, which it does not own (the stream does).
inline BIO* socket_bio(int fd) {
  BIO* bio = BIO_new(socket_method());
  check(bio != nullptr, "cannot make a socket BIO");
  // The descriptor itself rides in the BIO's data pointer: nothing is pointed to.
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)));  // NOLINT(performance-no-int-to-ptr)
  return bio;
}

}  // namespace detail
}  // namespace tls
GEERPC_END_NAMESPACE
