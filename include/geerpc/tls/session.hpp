// geerpc: one TLS connection's session (net::stream_session): an SSL object over the connection's
// non-blocking socket (socket_bio.hpp), made by a factory (factories.hpp) right after connect or
// accept. The handshake is driven by the first reads and writes, as any other record is. A
// server's session first peeks at the peer's first byte (sniff_first_byte): a peer that does not
// begin with a TLS record passes the session by, served or refused (server_settings::required).
//
// One SSL object is never used by two threads at once (OpenSSL forbids it): every SSL_* call on
// it, the const ones behind buffered() and wants() included, is made with this session's mutex
// held, and the mutex is never held while waiting: the socket is non-blocking, so each call returns
// at once (WANT_READ / WANT_WRITE become would_block and wants()), and the engines wait in poll or
// epoll with no lock of the session's (net/stream.hpp, rule 4: a stream with a session never reads
// asleep). The reader and the writers of a connection therefore take turns, briefly.
//
// OpenSSL's error queue is per thread: it is emptied before each call and read (and so emptied)
// after, so that one connection's failure never shows up as another's.
#pragma once

#include <arpa/inet.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>

#include <sys/socket.h>
#include <sys/uio.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

#include "../config.hpp"
#include "../net/socket.hpp"
#include "../net/stream_session.hpp"
#include "context.hpp"
#include "errors.hpp"
#include "gathered_parts.hpp"
#include "peer_certificate.hpp"
#include "socket_bio.hpp"

GEERPC_BEGIN_NAMESPACE
namespace tls {

// What a server's sessions failed with: how many connections failed their handshake, how many
// broke later on a TLS error (a record that does not authenticate, a bad record header), and the
// last reason of either, for the server's owner (server_factory::failed_handshakes(),
// failed_after_handshake(), last_failure()). Shared by the factory and its sessions.
class failure_log {
 public:
  void record(const std::string& reason, bool in_handshake) {
    std::lock_guard lock(mutex_);
    ++(in_handshake ? handshakes_ : later_);
    last_ = reason;
  }
  std::size_t handshakes() const {
    std::lock_guard lock(mutex_);
    return handshakes_;
  }
  std::size_t later() const {
    std::lock_guard lock(mutex_);
    return later_;
  }
  std::string last() const {
    std::lock_guard lock(mutex_);
    return last_;
  }
  // Plaintext peers refused on a port that requires TLS (server_settings::required).
  void refuse_plaintext() noexcept { plaintext_refusals_.fetch_add(1, std::memory_order_relaxed); }
  std::size_t plaintext_refusals() const noexcept { return plaintext_refusals_.load(std::memory_order_relaxed); }

 private:
  mutable std::mutex mutex_;
  std::size_t handshakes_ = 0;
  std::size_t later_ = 0;
  std::string last_;
  std::atomic<std::size_t> plaintext_refusals_{0};
};

namespace detail {

inline bool is_ip_literal(const std::string& host) noexcept {
  unsigned char address[16];
  return ::inet_pton(AF_INET, host.c_str(), address) == 1 || ::inet_pton(AF_INET6, host.c_str(), address) == 1;
}

struct ssl_deleter {
  void operator()(SSL* ssl) const noexcept { SSL_free(ssl); }
};

}  // namespace detail

class session final : public net::stream_session {
 public:
  using role = net::stream_session_factory::role;

  // A client's session checks the server's certificate against `host` (a DNS name: the name, sent
  // as SNI too; an IP literal: the address, and no SNI, as RFC 6066 says) when `ctx` verifies.
  session(SSL_CTX* ctx, int fd, role side, const std::string& host, std::shared_ptr<failure_log> log)
      // The queue emptied before SSL_new, not after: check() reports why SSL_new failed from it.
      : ssl_((ERR_clear_error(), SSL_new(ctx))), log_(std::move(log)) {
    detail::check(ssl_ != nullptr, "cannot make an SSL object");
    BIO* bio = detail::socket_bio(fd, (SSL_CTX_get_mode(ctx) & SSL_MODE_RELEASE_BUFFERS) != 0);
    socket_ = &detail::state_of(bio);
    SSL_set_bio(ssl_.get(), bio, bio);  // one BIO both ways: the SSL object takes its one reference
    if (side == role::server) {
      SSL_set_accept_state(ssl_.get());
      return;
    }
    SSL_set_connect_state(ssl_.get());
    if ((SSL_CTX_get_verify_mode(ctx) & SSL_VERIFY_PEER) == 0) return;
    if (host.empty())
      throw tls_error("tls: no host name to check the server's certificate against: set client_settings::server_name");
    if (detail::is_ip_literal(host)) {
      detail::check(X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_.get()), host.c_str()) == 1,
                    "cannot check the IP address " + host);
    } else {
      // Names in the SANs only: without these flags OpenSSL checks the subject's CN of a
      // certificate that has no DNS SAN, and lets a wildcard match part of a label.
      SSL_set_hostflags(ssl_.get(), X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      detail::check(SSL_set1_host(ssl_.get(), host.c_str()) == 1, "cannot check the host name " + host);
      // SSL_set_tlsext_host_name, without the macro's C cast.
      detail::check(SSL_ctrl(ssl_.get(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                             const_cast<char*>(host.c_str())) == 1,
                    "cannot send the host name " + host);
    }
  }

  // A server's session, before its first read: it looks at the peer's first byte before TLS does.
  // 0x16 begins a TLS handshake record: TLS as ever. Anything else is a plaintext peer, whose bytes
  // then pass the session by, to and from the socket `fd` (buffered() false, wants() 0): served as
  // on a plain socket, or, when TLS is `required`, refused by the server in the peer's own
  // protocol, which the session does not know: it only says what it saw (seen()).
  void sniff_first_byte(int fd, bool required) noexcept {
    std::lock_guard lock(mutex_);
    fd_ = fd;
    required_ = required;
    mode_.store(mode::unknown, std::memory_order_relaxed);
  }

  // Decodes every record that can be had without waiting, up to out.size() bytes: one SSL_read
  // returns one record's data, and a session that stopped there handed the engines a short read
  // while whole records, or the socket's rest, waited (a busy connection's records came one read,
  // one turn of the engine's loop and one buffered() each). Its SSL_read calls make at most
  // max_recvs recvs, and none after one that emptied the socket (socket_bio.hpp): so a short read
  // means what it means on a plain socket, emptied (or a record's rest still on its way), and the
  // work done under the lock stays bounded while a peer keeps the socket full.
  net::io_result read(std::span<std::byte> out) noexcept override {
    if (mode_.load(std::memory_order_acquire) != mode::tls) [[unlikely]]
      if (const std::optional<net::io_result> r = read_before_tls(out)) return *r;
    std::lock_guard lock(mutex_);
    if (failed_ || read_over_) return {net::io_status::closed, 0};
    // Records left from a recv that emptied the socket come without a recv: the engines look at
    // the socket again after a short read, as they do after one on a plain socket.
    socket_->recvs_left = holds_whole_records() && socket_->drained ? 0 : max_recvs;
    std::size_t total = 0;
    net::io_result r;
    do {
      r = read_record(out.subspan(total));
      if (r.status == net::io_status::data) total += r.bytes;
    } while (r.status == net::io_status::data && total < out.size() &&
             (socket_->recvs_left != 0 || holds_whole_records()));
    socket_->recvs_left = -1;
    detail::clear_errors();  // nothing of this connection's is left for the thread's next OpenSSL call
    if (total == 0) return r;
    // What ended the round after data (the peer's close_notify, an error) is the next read's answer;
    // a failure has been recorded already (finish()).
    read_over_ = r.status == net::io_status::closed;
    return {net::io_status::data, total};
  }

  // With SSL_MODE_ENABLE_PARTIAL_WRITE one SSL_write_ex sends one record (16 KiB) and returns,
  // whether the socket has room for more or not. Records go out here until the bytes run out or
  // one would block, so that a write shorter than `data` means what it means on a socket: full
  // (the engines then wait for it to drain; the blocking server's thread would not come back for a
  // deferred reply's rest until its next request).
  net::io_result write(std::span<const std::byte> data) noexcept override {
    if (mode_.load(std::memory_order_acquire) != mode::tls) [[unlikely]]
      if (const std::optional<net::io_result> r = write_before_tls(data)) return *r;
    std::lock_guard lock(mutex_);
    return write_locked(data);
  }

  // A record costs a seal, a header and, through the socket BIO, a send, whatever its size: small
  // buffers (a writer's queue of replies) are copied together into whole records, where a record
  // each cost all of that per frame. A buffer of a record's size or more, and the last one, go as
  // they are. OpenSSL requires a retry after WANT_WRITE to offer at least what the try before it
  // did, from the same start: a retry starts with the same bytes (the writer keeps them), and
  // each of these records is then at least as long again (a record gathered from what is there,
  // or the same buffer, which only grows).
  net::io_result write_parts(std::span<const ::iovec> parts) noexcept override {
    if (parts.size() < 2 || mode_.load(std::memory_order_acquire) != mode::tls)
      return stream_session::write_parts(parts);
    std::byte* const staging = staging_buffer();
    std::lock_guard lock(mutex_);
    std::size_t total = 0;
    net::io_result r{net::io_status::data, 0};
    for (detail::gathered_parts next(parts); !next.done();) {
      const std::span<const std::byte> record = next.record(staging);
      r = write_locked(record);
      total += r.bytes;
      if (r.status != net::io_status::data || r.bytes < record.size()) break;
      next.advance(r.bytes);
    }
    if (total == 0) return r;
    if (r.status == net::io_status::closed) write_over_ = true;  // the next write says so
    return {net::io_status::data, total};
  }

  bool buffered() const noexcept override {
    std::lock_guard lock(mutex_);
    // The next read's answer is known already when a read's later record ended the connection
    // (the peer's close_notify came with its data, and it may keep the socket open, waiting for
    // ours): the engines must read again, not wait on a socket that has nothing more to say.
    if (read_over_) return true;
    // Not while a read waits to write first (a KeyUpdate's answer met a full socket): OpenSSL
    // finishes that write before it reads anything, so the engines must wait for POLLOUT (wants()).
    return !failed_ && wants_ != POLLOUT && holds_whole_records();
  }
  short wants() const noexcept override {
    std::lock_guard lock(mutex_);
    return wants_;
  }

  // close_notify, once, if the handshake finished and the socket takes it now; never waits.
  void shutdown() noexcept override {
    std::lock_guard lock(mutex_);
    if (shut_) return;
    shut_ = true;
    if (failed_ || !established_) return;
    ERR_clear_error();
    SSL_shutdown(ssl_.get());
    ERR_clear_error();
  }

  std::string why_closed() const override {
    std::lock_guard lock(mutex_);
    return reason_;
  }

  net::peer_seen seen() const noexcept override {
    switch (mode_.load(std::memory_order_acquire)) {
      case mode::plain:
        return net::peer_seen::plain;
      case mode::plain_refused:
        return net::peer_seen::plain_refused;
      default:
        break;
    }
    std::lock_guard lock(mutex_);
    return http_ ? net::peer_seen::layered_http : net::peer_seen::layered;
  }

  // Filled once, as the handshake ends (establish()), and never changed after: the reference a
  // caller keeps stays valid and unchanging for the session's life, and reading it touches no SSL
  // object. Until then, and for a connection that never finished a handshake, nothing.
  const net::peer_identity& identity() const noexcept override {
    std::lock_guard lock(mutex_);
    return established_ ? identity_ : net::no_peer_identity();
  }

 private:
  // How a connection's bytes go: TLS (a client's always), not known yet (a server's before the
  // peer's first byte), or past the session (a plaintext peer, served or to be refused).
  enum class mode : std::uint8_t { tls, unknown, plain, plain_refused };
  static constexpr unsigned char tls_handshake_record = 0x16;

  // The first byte decides, peeked (recv MSG_PEEK), so that it stays for whoever reads it; none
  // yet: still unknown. An error or the peer's EOF goes to TLS, which reports it as it always has.
  mode sniff() noexcept {
    mode now = mode_.load(std::memory_order_acquire);
    if (now != mode::unknown) return now;  // decided: a plaintext peer's I/O takes no lock
    std::lock_guard lock(mutex_);
    now = mode_.load(std::memory_order_relaxed);
    if (now != mode::unknown) return now;
    unsigned char first = 0;
    const ssize_t n = ::recv(fd_, &first, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && detail::retryable(errno)) return mode::unknown;
    now = n != 1 || first == tls_handshake_record ? mode::tls : required_ ? mode::plain_refused : mode::plain;
    if (now == mode::plain_refused && log_ != nullptr) log_->refuse_plaintext();
    wants_ = 0;  // a write before the first byte may have asked for POLLIN
    mode_.store(now, std::memory_order_release);
    return now;
  }

  // A read or a write while the mode is not TLS: nullopt once the first byte says TLS.
  std::optional<net::io_result> read_before_tls(std::span<std::byte> out) noexcept {
    const mode now = sniff();
    if (now == mode::tls) return std::nullopt;
    if (now == mode::unknown) return net::io_result{net::io_status::would_block, 0};
    net::io_result r;
    r.status = static_cast<net::io_status>(net::recv_some(fd_, out.data(), out.size(), r.bytes));
    return r;
  }
  std::optional<net::io_result> write_before_tls(std::span<const std::byte> data) noexcept {
    const mode now = sniff();
    if (now == mode::tls) return std::nullopt;
    if (now == mode::unknown) {  // nothing is written before the peer has spoken
      std::lock_guard lock(mutex_);
      if (mode_.load(std::memory_order_relaxed) == mode::unknown) wants_ = POLLIN;
      return net::io_result{net::io_status::would_block, 0};
    }
    const long sent = net::send_some(fd_, data.data(), data.size());
    if (sent < 0) return net::io_result{net::io_status::closed, 0};
    if (sent == 0 && !data.empty()) return net::io_result{net::io_status::would_block, 0};
    return net::io_result{net::io_status::data, static_cast<std::size_t>(sent)};
  }

  // Records from `data` until its bytes run out or one would block, with the mutex held.
  net::io_result write_locked(std::span<const std::byte> data) noexcept {
    if (failed_ || write_over_) return {net::io_status::closed, 0};
    std::size_t total = 0;
    net::io_result r;
    do {
      detail::clear_errors();
      errno = 0;
      std::size_t n = 0;
      const int rc = SSL_write_ex(ssl_.get(), data.data() + total, data.size() - total, &n);
      r = finish(rc, n, false);
      if (r.status == net::io_status::data) total += r.bytes;
    } while (r.status == net::io_status::data && total < data.size());
    detail::clear_errors();
    if (total == 0) return r;
    write_over_ = r.status == net::io_status::closed;  // the next write says so
    return {net::io_status::data, total};
  }
  // Where write_parts() gathers a record: a buffer per thread that gathers (16 KiB a thread, none
  // a connection), made on first use. A retry may run on another thread: only the bytes must be
  // the same (SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER). Null without memory for it: then a record per
  // buffer, and a retry of a gathered record fails the connection (OpenSSL's bad length).
  static std::byte* staging_buffer() noexcept {
    thread_local std::unique_ptr<std::byte[]> buffer;
    if (buffer == nullptr) buffer.reset(new (std::nothrow) std::byte[detail::max_record_data]);
    return buffer.get();
  }

  // The most recvs one read() makes (above).
  static constexpr int max_recvs = 2;

  // Whether data can be had without the socket, with the mutex held: decoded bytes OpenSSL holds,
  // or whole records in the BIO's buffer (never part of one: see stream_session::buffered()).
  bool holds_whole_records() const noexcept { return SSL_pending(ssl_.get()) > 0 || socket_->holds_record(); }

  // One SSL_read_ex into `out`, with the mutex held: one record's data at most.
  net::io_result read_record(std::span<std::byte> out) noexcept {
    detail::clear_errors();
    errno = 0;
    std::size_t n = 0;
    int rc = SSL_read_ex(ssl_.get(), out.data(), out.size(), &n);
    // A record without data (a KeyUpdate) returns WANT_READ: go on while the BIO's buffer holds
    // whole records, which no readiness of the socket would announce (bounded by the buffer).
    while (rc != 1 && socket_->holds_record() && SSL_get_error(ssl_.get(), rc) == SSL_ERROR_WANT_READ) {
      detail::clear_errors();
      rc = SSL_read_ex(ssl_.get(), out.data(), out.size(), &n);
    }
    return finish(rc, n, true);
  }

  // The result of an SSL_read_ex / SSL_write_ex that returned `rc`, with the mutex held.
  net::io_result finish(int rc, std::size_t n, bool reading) noexcept {
    if (!established_ && SSL_is_init_finished(ssl_.get()) && !establish()) return {net::io_status::closed, 0};
    if (rc == 1) {
      wants_ = 0;
      return {net::io_status::data, n};
    }
    switch (SSL_get_error(ssl_.get(), rc)) {
      case SSL_ERROR_WANT_READ:
        wants_ = reading ? 0 : POLLIN;
        return {net::io_status::would_block, 0};
      case SSL_ERROR_WANT_WRITE:
        wants_ = reading ? POLLOUT : 0;
        return {net::io_status::would_block, 0};
      case SSL_ERROR_ZERO_RETURN:  // the peer's close_notify
        ERR_clear_error();
        return {net::io_status::closed, 0};
      case SSL_ERROR_SYSCALL:  // EOF or a socket error, with no TLS alert read
        if (!established_)
          fail(errno != 0 ? "the connection failed during the TLS handshake: " + std::generic_category().message(errno)
                          : "the peer closed the connection during the TLS handshake");
        else if (!reading)
          read_last_words();
        ERR_clear_error();
        return {net::io_status::closed, 0};
      default:
        fail(detail::failure_text(ssl_.get()));
        return {net::io_status::closed, 0};
    }
  }

  // A write found the connection gone: a server that refused this client after the handshake (a
  // TLS 1.3 server checks the client's certificate after the client has finished) said why in an
  // alert that may wait, unread, in the socket. Reading it names the reason; a peek, so that
  // application data before it (replies, a goaway) stays for the reader.
  void read_last_words() noexcept {
    std::byte sink[1];
    std::size_t n = 0;
    ERR_clear_error();
    if (SSL_peek_ex(ssl_.get(), sink, sizeof sink, &n) != 1 && SSL_get_error(ssl_.get(), 0) == SSL_ERROR_SSL)
      fail(detail::failure_text(ssl_.get()));
  }

  // The handshake just finished: both sides must have agreed on geerpc/1, or, on a server, on
  // http/1.1 (a browser's HTTPS: the server lets it through the HTTP door only, seen()).
  bool establish() noexcept {
    const unsigned char* protocol = nullptr;
    unsigned int size = 0;
    SSL_get0_alpn_selected(ssl_.get(), &protocol, &size);
    const std::string_view agreed(reinterpret_cast<const char*>(protocol), protocol != nullptr ? size : 0);
    http_ = SSL_is_server(ssl_.get()) != 0 && agreed == http_alpn_protocol;
    if (agreed != alpn_protocol && !http_) {
      fail(SSL_is_server(ssl_.get()) != 0 ? "the client offered no ALPN protocol geerpc/1"
                                          : "the server selected no ALPN protocol (geerpc/1 is required)");
      return false;
    }
    try {
      identity_ = detail::identity_of(ssl_.get());
    } catch (...) {  // no memory for its names: the connection closes, as after any failure
      failed_ = true;
      return false;
    }
    established_ = true;
    return true;
  }

  void fail(const std::string& reason) noexcept {
    try {
      failed_ = true;
      ERR_clear_error();
      if (shut_) return;  // what fails after our own close_notify is no news
      reason_ = "tls: " + reason;
      if (log_ != nullptr) log_->record(reason_, !established_);
    } catch (...) {  // no memory for the message: the connection closes all the same
    }
  }

  mutable std::mutex mutex_;
  std::unique_ptr<SSL, detail::ssl_deleter> ssl_;
  detail::socket_state* socket_ = nullptr;  // its BIO's, which lives as long as ssl_
  std::shared_ptr<failure_log> log_;
  std::string reason_;
  net::peer_identity identity_;  // set by establish()
  short wants_ = 0;
  bool established_ = false;
  bool failed_ = false;
  bool shut_ = false;
  bool write_over_ = false;  // a write's later record found the connection gone
  bool read_over_ = false;   // a read's later record found the connection over
  bool http_ = false;        // a server's, agreed on http/1.1 in ALPN
  int fd_ = -1;              // a server's socket, for the first byte and a plaintext peer's bytes
  bool required_ = true;     // a server's: plaintext peers are refused
  std::atomic<mode> mode_{mode::tls};
};

}  // namespace tls
GEERPC_END_NAMESPACE
