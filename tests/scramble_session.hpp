// A test-only stream session that behaves as a TLS session does towards the engines, without TLS:
// it transforms the bytes both ways (so a peer without it cannot talk to it), reads the socket in
// big chunks but hands them out in small, varying pieces, keeping the rest decoded inside itself
// (buffered() is true while the socket is not readable: SSL_has_pending), and now and then answers
// a read with would_block and wants() = POLLOUT, holding bytes it has already taken off the socket
// until the socket is writable (SSL_ERROR_WANT_WRITE). An engine that breaks a rule of
// net/stream.hpp waits on a socket that never becomes ready, and its calls time out.
#pragma once

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include <geerpc/net/stream_session.hpp>

namespace test {

class scramble_session final : public geerpc::net::stream_session {
 public:
  explicit scramble_session(int fd) noexcept : fd_(fd) {}

  geerpc::net::io_result read(std::span<std::byte> out) noexcept override {
    std::lock_guard lock(mutex_);
    wants_ = 0;
    if (owes_write_) {
      // What the session "must write" before its read can go on: it goes once the socket has room.
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, 0) <= 0 || (p.revents & POLLOUT) == 0) {
        wants_ = POLLOUT;
        return {geerpc::net::io_status::would_block, 0};
      }
      owes_write_ = false;
    }
    if (head_ == decoded_.size()) {
      decoded_.resize(64u << 10);
      head_ = 0;
      for (;;) {
        const ssize_t n = ::recv(fd_, decoded_.data(), decoded_.size(), MSG_DONTWAIT);
        if (n > 0) {
          decoded_.resize(static_cast<std::size_t>(n));
          break;
        }
        decoded_.clear();
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return {geerpc::net::io_status::would_block, 0};
        return {geerpc::net::io_status::closed, 0};
      }
      for (std::byte& b : decoded_) b ^= key(in_position_++);
      // Every fifth chunk taken off the socket waits for writability before any of it is handed out.
      if (++chunks_ % 5 == 0) {
        owes_write_ = true;
        wants_ = POLLOUT;
        wanted_write_.fetch_add(1, std::memory_order_relaxed);
        return {geerpc::net::io_status::would_block, 0};
      }
    }
    // Small pieces, 1 to about 3000 bytes: most reads are short while the session still holds bytes.
    const std::size_t piece = 1 + (++pieces_ * 2654435761u >> 7) % 3001;
    const std::size_t n = std::min({out.size(), piece, decoded_.size() - head_});
    std::copy_n(decoded_.begin() + static_cast<std::ptrdiff_t>(head_), n, out.begin());
    head_ += n;
    if (head_ < decoded_.size()) held_.fetch_add(1, std::memory_order_relaxed);
    return {geerpc::net::io_status::data, n};
  }

  geerpc::net::io_result write(std::span<const std::byte> data) noexcept override {
    std::lock_guard lock(mutex_);
    std::size_t taken = 0;
    std::byte chunk[16u << 10];
    while (taken < data.size()) {
      const std::size_t n = std::min(sizeof chunk, data.size() - taken);
      for (std::size_t i = 0; i < n; ++i) chunk[i] = data[taken + i] ^ key(out_position_ + i);
      const ssize_t sent = ::send(fd_, chunk, n, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent < 0 && errno == EINTR) continue;
      if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (sent < 0) return {geerpc::net::io_status::closed, 0};
      out_position_ += static_cast<std::size_t>(sent);
      taken += static_cast<std::size_t>(sent);
      if (static_cast<std::size_t>(sent) < n) break;
    }
    if (taken == 0 && !data.empty()) return {geerpc::net::io_status::would_block, 0};
    return {geerpc::net::io_status::data, taken};
  }

  bool buffered() const noexcept override {
    std::lock_guard lock(mutex_);
    return !owes_write_ && head_ < decoded_.size();
  }
  short wants() const noexcept override {
    std::lock_guard lock(mutex_);
    return wants_;
  }
  void shutdown() noexcept override {}

  // How often a read left bytes inside the session, and how often one waited for writability:
  // a test checks that both paths were taken.
  static inline std::atomic<std::size_t> held_{0};
  static inline std::atomic<std::size_t> wanted_write_{0};

 private:
  static std::byte key(std::size_t position) noexcept { return static_cast<std::byte>((position * 131 + 7) & 0xff); }

  const int fd_;
  mutable std::mutex mutex_;
  std::vector<std::byte> decoded_;  // taken off the socket and decoded; [head_, size) not handed out
  std::size_t head_ = 0;
  std::size_t in_position_ = 0, out_position_ = 0;  // bytes transformed each way: the key's position
  std::size_t chunks_ = 0, pieces_ = 0;
  bool owes_write_ = false;
  short wants_ = 0;
};

class scramble_factory final : public geerpc::net::stream_session_factory {
 public:
  std::unique_ptr<geerpc::net::stream_session> make(int fd, role) override {
    made.fetch_add(1, std::memory_order_relaxed);
    return std::make_unique<scramble_session>(fd);
  }
  std::atomic<int> made{0};
};

}  // namespace test
