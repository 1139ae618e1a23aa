// geerpc: the thin layer over POSIX sockets: an owning file descriptor, "host:port" addresses,
// listening, connecting before a deadline, and waiting for readiness with a deadline and a wake-up
// descriptor. Every socket geerpc makes is non-blocking; waiting is always explicit, through poll.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <ctime>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "../config.hpp"
#include "../detail/integer_cast.hpp"
#include "../error.hpp"

GEERPC_BEGIN_NAMESPACE
namespace net {

using clock = std::chrono::steady_clock;

class unique_fd {
 public:
  unique_fd() = default;
  explicit unique_fd(int fd) noexcept : fd_(fd) {}
  unique_fd(unique_fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  unique_fd& operator=(unique_fd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  ~unique_fd() { reset(); }

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

inline std::string errno_text(int err) { return std::generic_category().message(err); }

// A resolved "host:port". Hosts are IPv4 or IPv6 literals (IPv6 in brackets) or names.
struct endpoint {
  sockaddr_storage address{};
  socklen_t size = 0;
};

struct split_address {
  std::string host;
  std::string port;
};

// Splits "host:port" or "[v6]:port". Returns nullptr or why the text is not an address.
inline const char* split_host_port(std::string_view text, split_address& out) {
  std::size_t colon;
  if (!text.empty() && text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return "missing ']'";
    out.host = std::string(text.substr(1, close - 1));
    colon = close + 1;
    if (colon >= text.size() || text[colon] != ':') return "missing port";
  } else {
    colon = text.rfind(':');
    if (colon == std::string_view::npos) return "missing port";
    out.host = std::string(text.substr(0, colon));
    if (out.host.find(':') != std::string::npos) return "an IPv6 host must be in brackets";
  }
  out.port = std::string(text.substr(colon + 1));
  if (out.host.empty()) return "missing host";
  if (out.port.empty() || out.port.size() > 5 || out.port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(out.port) > 65535)
    return "port must be a number from 0 to 65535";
  return nullptr;
}

// Resolves `text`; on failure returns nullopt and sets `why`.
inline std::optional<endpoint> resolve(std::string_view text, std::string& why) {
  split_address parts;
  if (const char* bad = split_host_port(text, parts)) {
    why = bad;
    return std::nullopt;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(parts.host.c_str(), parts.port.c_str(), &hints, &found); rc != 0) {
    why = ::gai_strerror(rc);
    return std::nullopt;
  }
  endpoint e;
  std::memcpy(&e.address, found->ai_addr, found->ai_addrlen);
  e.size = found->ai_addrlen;
  ::freeaddrinfo(found);
  return e;
}

inline std::string endpoint_text(const sockaddr_storage& address) {
  char host[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET6) {
    const auto& a6 = reinterpret_cast<const sockaddr_in6&>(address);
    ::inet_ntop(AF_INET6, &a6.sin6_addr, host, sizeof host);
    return "[" + std::string(host) + "]:" + std::to_string(ntohs(a6.sin6_port));
  }
  const auto& a4 = reinterpret_cast<const sockaddr_in&>(address);
  ::inet_ntop(AF_INET, &a4.sin_addr, host, sizeof host);
  return std::string(host) + ":" + std::to_string(ntohs(a4.sin_port));
}

// Puts a socket in blocking mode, for a reader that may then wait in recv() itself; every other
// send_some() and recv_some() on it still passes MSG_DONTWAIT and never blocks.
inline void set_blocking(int fd) noexcept {
  if (const int flags = ::fcntl(fd, F_GETFL); flags >= 0 && (flags & O_NONBLOCK) != 0)
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
}

inline void set_no_delay(int fd) noexcept {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// A listening socket. A server stops taking connections in two steps: shutdown() at once, so that
// the kernel refuses new connects while the server winds down (a thread may still be inside
// accept() on it: the descriptor stays valid, and accept() fails or returns connections queued
// earlier); close() once no thread can touch the descriptor any more, which frees the address.
class listener {
 public:
  listener() = default;
  explicit listener(unique_fd fd) noexcept : fd_(std::move(fd)) {}
  listener(listener&&) noexcept = default;
  listener& operator=(listener&& other) noexcept {
    if (this != &other) {
      close();
      fd_ = std::move(other.fd_);
    }
    return *this;
  }
  ~listener() { close(); }

  int get() const noexcept { return fd_.get(); }
  explicit operator bool() const noexcept { return static_cast<bool>(fd_); }

  // Refuses new connections from now on. Safe while another thread waits on or accepts from it.
  void shutdown() const noexcept {
    if (fd_) ::shutdown(fd_.get(), SHUT_RDWR);
  }
  // Frees the address. Only once no other thread can use the descriptor.
  void close() noexcept { fd_.reset(); }

 private:
  unique_fd fd_;
};

// Binds and listens on `address`; returns the socket and sets `bound` to the actual "host:port"
// (useful with port 0). Throws std::system_error on failure.
inline listener listen_on(std::string_view address, std::string& bound, int backlog = 1024) {
  std::string why;
  auto e = resolve(address, why);
  if (!e)
    throw rpc_error(errc::invalid_argument, "rpc server: bad listen address " + std::string(address) + ": " + why);
  unique_fd fd(::socket(e->address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) throw std::system_error(errno, std::generic_category(), "rpc server: socket");
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&e->address), e->size) != 0 ||
      ::listen(fd.get(), backlog) != 0)
    throw std::system_error(errno, std::generic_category(), "rpc server: listen " + std::string(address));
  sockaddr_storage actual{};
  socklen_t size = sizeof actual;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&actual), &size);
  bound = endpoint_text(actual);
  return listener(std::move(fd));
}

// The time left until `deadline` for ppoll(): null (wait forever) without one, never negative.
inline const timespec* time_left(const std::optional<clock::time_point>& deadline, timespec& out) {
  if (!deadline) return nullptr;
  const auto now = clock::now();
  // Compared before subtracting: `deadline - now` overflows for a deadline far in the past.
  const auto left = *deadline > now ? *deadline - now : clock::duration::zero();
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
  out.tv_sec = detail::integer_cast<decltype(out.tv_sec)>(ns / 1'000'000'000);
  out.tv_nsec = detail::integer_cast<decltype(out.tv_nsec)>(ns % 1'000'000'000);
  return &out;
}

enum class wait_result { ready, timeout, woken };

// Whether `events` can be had on `fd` right now, without waiting.
inline bool ready_now(int fd, short events) noexcept {
  pollfd pfd{fd, events, 0};
  return ::poll(&pfd, 1, 0) > 0;
}

// Waits until `fd` has one of `events`, the deadline passes, or `wake_fd` (if >= 0) is readable.

inline wait_result wait_for(int fd, short events, const std::optional<clock::time_point>& deadline, int wake_fd = -1) {
  pollfd fds[2] = {{fd, events, 0}, {wake_fd, POLLIN, 0}};
  const nfds_t count = wake_fd >= 0 ? 2 : 1;
  for (;;) {
    timespec left{};
    const int rc = ::ppoll(fds, count, time_left(deadline, left), nullptr);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return wait_result::ready;  // let the following I/O call report the error
    if (count == 2 && (fds[1].revents & POLLIN)) return wait_result::woken;
    if (rc > 0) return wait_result::ready;
    if (deadline && clock::now() >= *deadline) return wait_result::timeout;
  }
}

// Connects before `deadline` (none: wait as long as the kernel does). Returns the connected
// non-blocking socket, or an empty one with `err` set (ETIMEDOUT when the deadline passed).
inline unique_fd connect_before(const endpoint& e, const std::optional<clock::time_point>& deadline, int& err) {
  unique_fd fd(::socket(e.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) {
    err = errno;
    return {};
  }
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&e.address), e.size) != 0) {
    if (errno != EINPROGRESS && errno != EINTR) {
      err = errno;
      return {};
    }
    if (wait_for(fd.get(), POLLOUT, deadline) == wait_result::timeout) {
      err = ETIMEDOUT;
      return {};
    }
    int so_error = 0;
    socklen_t size = sizeof so_error;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &size);
    if (so_error != 0) {
      err = so_error;
      return {};
    }
  }
  set_no_delay(fd.get());
  err = 0;
  return fd;
}

// send() that never blocks and never raises SIGPIPE. Returns bytes sent, 0 when the socket is full,
// -1 on a broken connection.
inline long send_some(int fd, const void* data, std::size_t size) noexcept {
  for (;;) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return static_cast<long>(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    return -1;
  }
}

enum class recv_status { data, would_block, closed };

// recv() that never blocks, unless asked to `wait` on a socket in blocking mode (set_blocking()).
// `received` is set when data arrived.
inline recv_status recv_some(int fd, void* data, std::size_t size, std::size_t& received, bool wait = false) noexcept {
  for (;;) {
    const ssize_t n = ::recv(fd, data, size, wait ? 0 : MSG_DONTWAIT);
    if (n > 0) {
      received = static_cast<std::size_t>(n);
      return recv_status::data;
    }
    if (n == 0) return recv_status::closed;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return recv_status::would_block;
    return recv_status::closed;
  }
}

// A level-triggered wake-up flag for poll/epoll: signal() makes it readable until drain().
class event_fd {
 public:
  event_fd() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (!fd_) throw std::system_error(errno, std::generic_category(), "geerpc: eventfd");
  }
  int get() const noexcept { return fd_.get(); }
  void signal() const noexcept {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd_.get(), &one, sizeof one);
  }
  void drain() const noexcept {
    std::uint64_t count;
    [[maybe_unused]] auto n = ::read(fd_.get(), &count, sizeof count);
  }

 private:
  unique_fd fd_;
};

}  // namespace net
GEERPC_END_NAMESPACE
