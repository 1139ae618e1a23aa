// geerpc: the BIO an SSL object reads and writes its records through: the connection's
// non-blocking socket, with send(MSG_NOSIGNAL) so that a peer gone away never raises SIGPIPE (the
// core's plain path does the same; OpenSSL's own socket BIO uses write(2)). EAGAIN becomes
// OpenSSL's "retry", which SSL_get_error reports as WANT_READ / WANT_WRITE.
//
// Reads go through a buffer: OpenSSL, read-ahead off, asks for a record's 5-byte header and then
// its body, two system calls a record; the buffer takes whatever the socket holds in one, several
// records of a busy connection included. It has one record's size, and grows to the engines' 64 KiB
// once a recv filled it (a busy connection: one recv where a plain socket makes one, not four), and
// shrinks back when a recv finds less than a record. Bytes it holds are invisible to poll, so the
// session counts a whole record in it as buffered() (rule 2 of net/stream.hpp); part of a record is
// not (its rest comes through the socket, which then becomes readable). With release_idle_buffers
// the buffer is freed each time it empties, as OpenSSL frees its own.
//
// A session's read may limit the recvs its SSL_read calls make (recvs_left): a recv that found
// less than it asked for emptied the socket, as the engines' short read means on a plain socket,
// and the next one would only meet EAGAIN, a system call for nothing; OpenSSL is told to retry
// instead (WANT_READ), and the engines' level-triggered wait sees any byte that came since.
#pragma once

#include <openssl/bio.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#include "../config.hpp"
#include "errors.hpp"

GEERPC_BEGIN_NAMESPACE
namespace tls {
namespace detail {

// A record's header and its largest body (TLS 1.2's ciphertext limit, above TLS 1.3's).
inline constexpr std::size_t record_header_size = 5;
inline constexpr std::size_t read_buffer_size = record_header_size + 16384 + 2048;
// A busy connection's buffer: what the engines read from a plain socket at once.
inline constexpr std::size_t busy_read_buffer_size = std::size_t{64} << 10;

// What a socket BIO holds: the socket (not owned) and the bytes read from it that OpenSSL has not
// asked for yet, buffer_[begin_, end_).
struct socket_state {
  int fd = -1;
  bool release_when_empty = true;
  bool busy = false;     // the last recv filled the buffer: the next one gets the larger size
  bool drained = false;  // the last recv emptied the socket (it returned less than it asked for)
  std::unique_ptr<unsigned char[]> buffer;
  std::size_t capacity = 0;  // buffer's size
  std::size_t begin = 0, end = 0;
  // How many more recvs the SSL_read calls of the session's read() may make: -1, any (the
  // handshake, a peek); 0 after a recv that emptied the socket (it returned less than it asked
  // for, or nothing). Set by the session, under its lock.
  int recvs_left = -1;

  // Whether a whole record waits in the buffer: OpenSSL will read it without the socket.
  bool holds_record() const noexcept {
    const std::size_t have = end - begin;
    if (have < record_header_size) return false;
    const std::size_t length = (std::size_t{buffer[begin + 3]} << 8) | buffer[begin + 4];
    return have >= record_header_size + length;
  }
};

inline socket_state& state_of(BIO* bio) noexcept { return *static_cast<socket_state*>(BIO_get_data(bio)); }

inline bool retryable(int error) noexcept { return error == EAGAIN || error == EWOULDBLOCK || error == EINTR; }

inline int bio_write(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  const ssize_t n = ::send(state_of(bio).fd, data, static_cast<std::size_t>(size), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0 && retryable(errno)) BIO_set_retry_write(bio);
  return static_cast<int>(n);
}

inline int bio_read(BIO* bio, char* out, int size) {
  BIO_clear_retry_flags(bio);
  socket_state& s = state_of(bio);
  if (s.begin == s.end) {
    if (s.recvs_left == 0) {  // the socket was found empty: nothing but EAGAIN would come
      BIO_set_retry_read(bio);
      return -1;
    }
    const std::size_t wanted = s.busy ? busy_read_buffer_size : read_buffer_size;
    if (s.buffer != nullptr && s.capacity != wanted) s.buffer.reset();
    if (s.buffer == nullptr) {
      s.buffer.reset(new (std::nothrow) unsigned char[wanted]);
      if (s.buffer == nullptr) return -1;  // no memory: the session fails as on a socket error
      s.capacity = wanted;
    }
    const ssize_t n = ::recv(s.fd, s.buffer.get(), wanted, MSG_DONTWAIT);
    const bool full = n == static_cast<ssize_t>(wanted);
    s.drained = !full;
    if (s.recvs_left > 0) s.recvs_left = full ? s.recvs_left - 1 : 0;
    if (n <= 0) {
      if (n < 0 && retryable(errno)) BIO_set_retry_read(bio);
      if (s.release_when_empty) s.buffer.reset();
      return static_cast<int>(n);
    }
    s.busy = full || (s.busy && static_cast<std::size_t>(n) >= read_buffer_size);
    s.begin = 0;
    s.end = static_cast<std::size_t>(n);
  }
  const std::size_t give = std::min(static_cast<std::size_t>(size), s.end - s.begin);
  std::memcpy(out, s.buffer.get() + s.begin, give);
  s.begin += give;
  if (s.begin == s.end && s.release_when_empty) s.buffer.reset();
  return static_cast<int>(give);
}

inline long bio_ctrl(BIO*, int command, long, void*) {
  // OpenSSL flushes after a flight of handshake records: every byte is already with the kernel.
  return command == BIO_CTRL_FLUSH ? 1 : 0;
}

inline int bio_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

inline int bio_destroy(BIO* bio) {
  delete static_cast<socket_state*>(BIO_get_data(bio));
  BIO_set_data(bio, nullptr);
  return 1;
}

// The method table, made once per process (a function-local static: thread-safe).
inline const BIO_METHOD* socket_method() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "geerpc socket");
    check(m != nullptr && BIO_meth_set_write(m, bio_write) == 1 && BIO_meth_set_read(m, bio_read) == 1 &&
              BIO_meth_set_ctrl(m, bio_ctrl) == 1 && BIO_meth_set_create(m, bio_create) == 1 &&
              BIO_meth_set_destroy(m, bio_destroy) == 1,
          "cannot make the socket BIO method");
    return m;
  }();
  return method;
}

// A BIO over `fd`, which it does not own (the stream does); its read buffer is freed whenever it
// empties if `release_when_empty`.
inline BIO* socket_bio(int fd, bool release_when_empty) {
  auto state = std::make_unique<socket_state>();
  state->fd = fd;
  state->release_when_empty = release_when_empty;
  BIO* bio = BIO_new(socket_method());
  check(bio != nullptr, "cannot make a socket BIO");
  BIO_set_data(bio, state.release());
  return bio;
}

}  // namespace detail
}  // namespace tls
GEERPC_END_NAMESPACE
