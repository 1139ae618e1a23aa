// geerpc: the seam a stream layer plugs into (TLS, in a later issue): a session sits between a
// connection's bytes and its socket, transforming both ways, and a factory in the options makes one
// per connection. Only this small interface enters the core; the layer's own headers (OpenSSL's)
// stay in the layer. A connection without a session is a plain TCP or Unix socket, and the
// engines' branch into a session is then never taken (net/stream.hpp).
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "../config.hpp"
#include "peer_identity.hpp"

GEERPC_BEGIN_NAMESPACE
namespace net {

// What one read or write did: moved `bytes` bytes (data), found nothing to do without waiting
// (would_block: wait for the readiness the stream's wants() adds, then try again), or found the
// connection over (closed: the peer's end, an error, a broken session).
enum class io_status { data, would_block, closed };
struct io_result {
  io_status status = io_status::closed;
  std::size_t bytes = 0;
};

// What a server's session saw of its peer in the first bytes: told the wire session, which knows
// the protocols above it (the geerpc hello, HTTP) and so answers a refusal in the peer's own.
enum class peer_seen {
  plain,          // nothing between the bytes and the socket: no session, or a peer that does not
                  // speak the session's protocol, served as on a plain socket
  plain_refused,  // a peer that does not speak the session's protocol, which the server requires:
                  // its bytes pass through unchanged, so that it can be refused in its own protocol
  layered,        // the session's protocol (TLS) carries the server's protocols
  layered_http,   // the session's protocol, having agreed on HTTP (TLS ALPN http/1.1): HTTP only
};

// One connection's session, made for its socket right after connect or accept; it lives as long
// as the connection's stream. A reader and several writers call it at once: it serialises its own
// state (a TLS session: one mutex around every SSL_* call) and never waits, holding a lock or not:
// the socket is non-blocking, and waiting is the engine's, through poll.
class stream_session {
 public:
  stream_session() = default;
  stream_session(const stream_session&) = delete;
  stream_session& operator=(const stream_session&) = delete;
  virtual ~stream_session() = default;

  // Up to out.size() bytes of the peer's data. would_block means nothing is readable now (so
  // buffered() is false): the engine waits for wants(), or POLLIN if none, and asks again.
  virtual io_result read(std::span<std::byte> out) noexcept = 0;
  // Takes some of `data` (all of it, or what the socket had room for, never none when it has room),
  // or would_block: the engine waits for wants(), or POLLOUT if none, and offers the rest again, perhaps from
  // another buffer that starts with the same bytes.
  virtual io_result write(std::span<const std::byte> data) noexcept = 0;
  // Several buffers (a writer's queue of frames), taken as their concatenation would be by write():
  // by default one write() each, until one takes less than all of its bytes. A session whose unit
  // of output costs the same whatever its size (a TLS record) gathers small buffers instead.
  virtual io_result write_parts(std::span<const ::iovec> parts) noexcept {
    io_result all{io_status::data, 0};
    for (const ::iovec& part : parts) {
      const io_result r = write(std::span(static_cast<const std::byte*>(part.iov_base), part.iov_len));
      all.bytes += r.bytes;
      if (r.status != io_status::data) return all.bytes != 0 ? all : r;
      if (r.bytes < part.iov_len) break;
    }
    return all;
  }
  // Whether read() has an answer now without the socket being readable (bytes the session read
  // from the socket and kept: TLS's decoded bytes, SSL_pending, and whole records its BIO holds;
  // or the end of the connection, found behind the data a read returned): an engine must not wait
  // on the socket for it. Never true for part of a record (as
  // SSL_has_pending would be): the engines would spin on a peer that trickles the rest. Read-ahead
  // stays off: it would hide whole records from SSL_pending.
  virtual bool buffered() const noexcept = 0;
  // The readiness the last read or write waits for instead of the obvious one: POLLOUT for a read
  // that must write first (TLS's WANT_WRITE), POLLIN for a write that must read first; 0 for none
  // (then POLLIN for a read, POLLOUT for a write). Nonzero, it replaces that readiness: a write
  // that also waited for POLLOUT would wake at once on a writable socket, and spin.
  virtual short wants() const noexcept = 0;
  // The connection is closing: a last word to the peer if it fits without waiting (close_notify).
  // The stream then shuts the socket down, which wakes every thread waiting on it.
  virtual void shutdown() noexcept = 0;
  // Why the session closed the connection itself, if it did (a TLS handshake refused: "tls:
  // ...certificate verify failed: certificate has expired"); empty otherwise. dial() adds it to
  // its error's message.
  virtual std::string why_closed() const { return {}; }
  // What a server's session saw of its peer; asked once, by the server, after read() first
  // returned data. A session that never lets other peers through is always `layered`.
  virtual peer_seen seen() const noexcept { return peer_seen::layered; }
  // What the layer proved about the peer (peer_identity.hpp): filled once, when the session is
  // established (TLS: its handshake ended), and unchanged after that, so the reference stays valid
  // and its fields may be read without the session's lock for as long as the session lives. Before
  // that, and by default, nothing: not encrypted, no certificate.
  virtual const peer_identity& identity() const noexcept { return no_peer_identity(); }
};

// Makes each connection's session: options::session for a client, server_options::session for a
// server. Called once per connection, on the thread that connected or accepted, with the connected
// non-blocking socket (the session uses it; the stream owns it). Throws to refuse the connection
// (dial() fails with connect_failed; a server closes that connection and goes on); it never returns
// nullptr. A session may outlive its factory (a server's last connections are destroyed as its
// stop() returns, and a client's with the client): what it needs of the factory's (a TLS
// context), it holds by shared_ptr.
class stream_session_factory {
 public:
  enum class role { client, server };
  virtual ~stream_session_factory() = default;
  virtual std::unique_ptr<stream_session> make(int fd, role side) = 0;
  // make(), told the host a client dialed (a name or an IP literal, as the address wrote it;
  // empty for a Unix socket and for a server), which a TLS client checks the server's certificate
  // against. The engines call this one; by default it is make(fd, side).
  virtual std::unique_ptr<stream_session> make_for(int fd, role side, std::string_view host) {
    static_cast<void>(host);
    return make(fd, side);
  }
};

}  // namespace net
GEERPC_END_NAMESPACE
