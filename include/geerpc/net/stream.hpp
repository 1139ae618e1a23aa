// geerpc: one connection's byte stream: the socket it owns and, for a stream layer such as TLS,
// the session between them (stream_session.hpp). Every engine does all of a connection's I/O
// through it. A plain TCP or Unix socket has no session: each call is then the system call the
// engines made before the seam existed, behind one test of a pointer that is always null.
//
// The rules an engine follows, so that a session can plug in (docs/transports.md):
//   1. Read until would_block; a short read means "empty" only when !buffered().
//   2. A read round cut short while buffered() resumes without waiting for the descriptor.
//   3. Wait for POLLIN when reading, POLLOUT when writing, or for wants() instead when it is
//      nonzero (a write that must read first must not wake on a writable socket); with a session, on
//      any readiness retry both the read and the writer's flush().
//   4. read_some(..., true) only when blocking_reads(); otherwise poll, then read_some.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "../config.hpp"
#include "../detail/assert.hpp"
#include "socket.hpp"
#include "stream_session.hpp"

GEERPC_BEGIN_NAMESPACE
namespace net {

static_assert(static_cast<int>(io_status::data) == static_cast<int>(recv_status::data) &&
                  static_cast<int>(io_status::would_block) == static_cast<int>(recv_status::would_block) &&
                  static_cast<int>(io_status::closed) == static_cast<int>(recv_status::closed),
              "geerpc: a plain read's status passes through unchanged");

class stream {
 public:
  stream() = default;
  explicit stream(unique_fd fd, std::unique_ptr<stream_session> session = nullptr) noexcept
      : fd_(std::move(fd)), session_(std::move(session)) {}

  // For poll/epoll registration only: all I/O goes through the calls below.
  int fd() const noexcept { return fd_.get(); }
  explicit operator bool() const noexcept { return static_cast<bool>(fd_); }
  // A plain socket: no session, buffered() and wants() constant.
  bool plain() const noexcept { return session_ == nullptr; }

  // Never blocks, unless asked to `wait` on a plain socket in blocking mode (set_blocking()), which
  // only a stream with blocking_reads() allows. Both calls are forced inline: the plain path must
  // stay the system call it was before the seam, not a call to a function that makes it.
  [[gnu::always_inline]] io_result read_some(std::span<std::byte> out, bool wait = false) noexcept {
    if (session_ != nullptr) [[unlikely]]
      return session_read(out, wait);
    io_result r;
    r.status = static_cast<io_status>(recv_some(fd_.get(), out.data(), out.size(), r.bytes, wait));
    return r;
  }

  // Never blocks, never raises SIGPIPE; from any thread, beside a reader.
  [[gnu::always_inline]] io_result write_some(std::span<const std::byte> data) noexcept {
    if (session_ != nullptr) [[unlikely]]
      return session_write(data);
    const long sent = send_some(fd_.get(), data.data(), data.size());
    if (sent < 0) return {io_status::closed, 0};
    if (sent == 0 && !data.empty()) return {io_status::would_block, 0};
    return {io_status::data, static_cast<std::size_t>(sent)};
  }

  // Several buffers, written as their concatenation would be: one system call on a plain socket;
  // through a session, its write_parts().
  io_result write_some(std::span<const ::iovec> parts) noexcept {
    if (session_ != nullptr) [[unlikely]]
      return session_write(parts);
    std::size_t total = 0;
    for (const ::iovec& part : parts) total += part.iov_len;
    const long sent = send_some(fd_.get(), parts.data(), parts.size());
    if (sent < 0) return {io_status::closed, 0};
    if (sent == 0 && total != 0) return {io_status::would_block, 0};
    return {io_status::data, static_cast<std::size_t>(sent)};
  }

  bool buffered() const noexcept { return session_ != nullptr && session_->buffered(); }
  short wants() const noexcept { return session_ != nullptr ? session_->wants() : short{0}; }
  // What to wait for before trying again (rule 3): the session's wants() when it has any, which
  // replaces the `usual` readiness (POLLIN to read, POLLOUT to write).
  short readiness(short usual) const noexcept {
    const short wanted = wants();
    return wanted != 0 ? wanted : usual;
  }
  // Why the session closed the connection, if it did (stream_session::why_closed); empty if not.
  std::string why_closed() const { return session_ != nullptr ? session_->why_closed() : std::string(); }
  // What the session saw of a server's peer (stream_session::seen); plain without a session.
  peer_seen seen() const noexcept { return session_ != nullptr ? session_->seen() : peer_seen::plain; }
  // What the session proved about the peer (stream_session::identity); nothing for a plain socket.
  // Asks the session each time: a connection takes it once, when its session is established.
  const peer_identity& identity() const noexcept {
    return session_ != nullptr ? session_->identity() : no_peer_identity();
  }
  // Whether a reader may sleep inside read_some(..., true): not while a session holds its state.
  bool blocking_reads() const noexcept { return session_ == nullptr; }

  // Wakes every thread waiting on fd() (the descriptor stays open until the stream goes); a
  // session first says its last word. Safe from any thread, repeatable.
  void shutdown() noexcept {
    if (session_ != nullptr) session_->shutdown();
    ::shutdown(fd_.get(), SHUT_RDWR);
  }
  // Ends the writing side only (after a session's last word): the peer reads what was sent, then
  // EOF, while what it still sends can be read. Repeatable.
  void shutdown_write() noexcept {
    if (session_ != nullptr) session_->shutdown();
    ::shutdown(fd_.get(), SHUT_WR);
  }

 private:
  // Out of line and cold, so that the inlined plain path stays as small as it was.
  [[gnu::noinline, gnu::cold]] io_result session_read(std::span<std::byte> out, [[maybe_unused]] bool wait) noexcept {
    GEERPC_ASSERT(!wait, "stream: a session's reads never wait (blocking_reads() is false)");
    return session_->read(out);
  }
  [[gnu::noinline, gnu::cold]] io_result session_write(std::span<const std::byte> data) noexcept {
    return session_->write(data);
  }

  [[gnu::noinline, gnu::cold]] io_result session_write(std::span<const ::iovec> parts) noexcept {
    return session_->write_parts(parts);
  }

  unique_fd fd_;
  std::unique_ptr<stream_session> session_;
};

// The stream for a connected socket: with the session `factory` makes, if there is a factory, told
// the `host` a client dialed. Throws what the factory throws.
inline stream make_stream(unique_fd fd, stream_session_factory* factory, stream_session_factory::role side,
                          std::string_view host = {}) {
  if (factory == nullptr) return stream(std::move(fd));
  const int raw = fd.get();
  std::unique_ptr<stream_session> session = factory->make_for(raw, side, host);
  GEERPC_ASSERT(session != nullptr, "stream: a session factory makes a session or throws");
  return stream(std::move(fd), std::move(session));
}

}  // namespace net
GEERPC_END_NAMESPACE
