// geerpc: the thin layer over POSIX sockets: an owning file descriptor, resolving addresses
// (address.hpp: TCP and Unix sockets), listening, connecting before a deadline, and waiting for
// readiness with a deadline and a wake-up descriptor. Every socket geerpc hands out is non-blocking;
// waiting is always explicit, through poll.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>
#include <ctime>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../detail/integer_cast.hpp"
#include "../error.hpp"
#include "address.hpp"

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

// A resolved address, ready for bind() or connect(): TCP (IPv4 or IPv6) or a Unix socket.
struct endpoint {
  sockaddr_storage address{};
  socklen_t size = 0;
};

// Resolves a parsed address (a host name through getaddrinfo, its first answer); on failure returns
// nullopt and sets `why`.
inline std::optional<endpoint> resolve(const address& a, std::string& why) {
  endpoint e;
  if (a.is_unix()) {
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    // An abstract name starts with a NUL byte and is exactly as long as the size says.
    const std::size_t offset = a.kind == address::family::unix_abstract ? 1 : 0;
    if (a.path.empty() || a.path.size() > max_unix_path) {
      why = "bad unix socket path";
      return std::nullopt;
    }
    std::memcpy(un.sun_path + offset, a.path.data(), a.path.size());
    std::memcpy(&e.address, &un, sizeof un);
    e.size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + offset + a.path.size() + (offset == 0 ? 1 : 0));
    return e;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(a.port);
  if (int rc = ::getaddrinfo(a.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    why = ::gai_strerror(rc);
    return std::nullopt;
  }
  std::memcpy(&e.address, found->ai_addr, found->ai_addrlen);
  e.size = found->ai_addrlen;
  ::freeaddrinfo(found);
  return e;
}

// Parses and resolves `text`; on failure returns nullopt and sets `why` (for a malformed address,
// "bad address: ..." with the accepted forms).
inline std::optional<endpoint> resolve(std::string_view text, std::string& why) {
  const parsed_address parsed = parse_address(text);
  if (!parsed) {
    why = parsed.error.message();
    return std::nullopt;
  }
  return resolve(*parsed.value, why);
}

inline std::string endpoint_text(const sockaddr_storage& address, socklen_t size = sizeof(sockaddr_storage)) {
  if (address.ss_family == AF_UNIX) {
    const auto& un = reinterpret_cast<const sockaddr_un&>(address);
    const std::size_t offset = offsetof(sockaddr_un, sun_path);
    const std::size_t length = size > offset ? std::min<std::size_t>(size - offset, sizeof un.sun_path) : 0;
    if (length > 0 && un.sun_path[0] == '\0') return "unix@@" + std::string(un.sun_path + 1, length - 1);
    return "unix@" + std::string(un.sun_path, ::strnlen(un.sun_path, length));
  }
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

inline void set_non_blocking(int fd) noexcept {
  if (const int flags = ::fcntl(fd, F_GETFL); flags >= 0 && (flags & O_NONBLOCK) == 0)
    ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// How long a blocking recv() on `fd` may wait before it fails with EAGAIN (SO_RCVTIMEO); zero: for
// ever. The kernel counts it in its timer ticks, rounded up: it may end a tick or two late.
inline bool set_receive_timeout(int fd, std::chrono::microseconds timeout) noexcept {
  timeval tv{};
  tv.tv_sec = geerpc::detail::integer_cast<decltype(tv.tv_sec)>(timeout.count() / 1'000'000);
  tv.tv_usec = geerpc::detail::integer_cast<decltype(tv.tv_usec)>(timeout.count() % 1'000'000);
  return ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0;
}

// Harmless on a Unix socket, which has no such option: the call fails (EOPNOTSUPP) and is ignored.
inline void set_no_delay(int fd) noexcept {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// A listening socket. A server stops taking connections in two steps: shutdown() at once, so that
// the kernel refuses new connects while the server winds down (a thread may still be inside
// accept() on it: the descriptor stays valid, and accept() fails or returns connections queued
// earlier); close() once no thread can touch the descriptor any more, which frees the address and
// removes a Unix socket's file.
class listener {
 public:
  listener() = default;
  explicit listener(unique_fd fd) noexcept : fd_(std::move(fd)) {}
  // A Unix socket bound at `path` (made absolute, so that a change of directory does not move it),
  // whose file is the one with this device and inode number.
  listener(unique_fd fd, std::string path, dev_t device, ino_t inode) noexcept
      : fd_(std::move(fd)), path_(std::move(path)), device_(device), inode_(inode) {}
  listener(listener&& other) noexcept { *this = std::move(other); }
  listener& operator=(listener&& other) noexcept {
    if (this != &other) {
      close();
      fd_ = std::move(other.fd_);
      path_ = std::exchange(other.path_, {});
      device_ = other.device_;
      inode_ = other.inode_;
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

  // Frees the address, and removes the socket file unless another server has replaced it since
  // (its file has another inode). Only once no other thread can use the descriptor.
  void close() noexcept {
    if (!path_.empty()) {
      struct stat st {};
      if (::lstat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == device_ && st.st_ino == inode_)
        ::unlink(path_.c_str());
      path_.clear();
    }
    fd_.reset();
  }

 private:
  unique_fd fd_;
  std::string path_;  // the socket file to remove, if any
  dev_t device_ = 0;
  ino_t inode_ = 0;
};

namespace detail {

// Whether a server listens at the Unix socket file `e`: a connect succeeds, or would wait for room
// in its backlog. A file nobody listens on (its server died without removing it) refuses the connect.
inline bool unix_socket_is_live(const endpoint& e) noexcept {
  unique_fd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!probe) return true;  // cannot tell: do not take it
  // Non-blocking: it never waits, and a full backlog (EAGAIN) means a live server too.
  if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&e.address), e.size) == 0) return true;
  return errno != ECONNREFUSED && errno != ENOENT;
}

[[noreturn]] inline void throw_listen_error(int err, std::string_view address, std::string_view what = {}) {
  std::string message = "rpc server: listen " + std::string(address);
  if (!what.empty()) message += ": " + std::string(what);
  throw std::system_error(err, std::generic_category(), message);
}

// Binds a Unix socket's path. A file left by a server that died (nobody listens on it) is removed
// and the bind retried, once; a live server's socket, or a file that is not a socket, is left alone.
inline void bind_unix_path(int fd, const endpoint& e, const std::string& path, std::string_view address) {
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&e.address), e.size) == 0) return;
  if (errno != EADDRINUSE) throw_listen_error(errno, address);
  struct stat before {};
  if (::lstat(path.c_str(), &before) != 0) {
    if (errno != ENOENT) throw_listen_error(EADDRINUSE, address);
  } else if (!S_ISSOCK(before.st_mode)) {
    throw_listen_error(EADDRINUSE, address, "the file exists and is not a socket");
  } else if (unix_socket_is_live(e)) {
    throw_listen_error(EADDRINUSE, address, "another server listens there");
  } else {
    // Stale. Remove it only if it is still the file just probed, not one a new server put there.
    struct stat now {};
    if (::lstat(path.c_str(), &now) == 0 && now.st_dev == before.st_dev && now.st_ino == before.st_ino)
      ::unlink(path.c_str());
  }
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&e.address), e.size) != 0) throw_listen_error(errno, address);
}

}  // namespace detail

// Binds and listens on `text` (see address.hpp); returns the socket and sets `bound` to the address
// to dial: "host:port" with the actual port (useful with port 0), or a Unix socket's address as
// given. Throws rpc_error (invalid_argument) for a malformed or unknown address, std::system_error
// when the system refuses (std::errc::address_in_use for an address taken).
inline listener listen_on(std::string_view text, std::string& bound, int backlog = 1024) {
  const parsed_address parsed = parse_address(text);
  const std::string quoted = "rpc server: listen \"" + std::string(text) + "\": ";
  if (!parsed) throw rpc_error(errc::invalid_argument, quoted + parsed.error.message());
  const address& a = *parsed.value;
  if (a.tls)
    throw rpc_error(errc::invalid_argument,
                    quoted +
                        "tls@ is a client's form: a server speaks TLS when server_options::session is a TLS "
                        "server factory; listen on host:port");
  if (a.jsonrpc)
    throw rpc_error(errc::invalid_argument,
                    quoted +
                        "jsonrpc@ is a client's form: a server with the JSON codec serves JSON-RPC on any port "
                        "(docs/protocol.md 9); listen on host:port");
  std::string why;
  const auto e = resolve(a, why);
  if (!e) throw rpc_error(errc::invalid_argument, quoted + why);
  unique_fd fd(::socket(e->address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) throw std::system_error(errno, std::generic_category(), "rpc server: socket");
  if (a.kind == address::family::unix_path) {
    detail::bind_unix_path(fd.get(), *e, a.path, text);
  } else {
    int one = 1;
    if (!a.is_unix()) ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&e->address), e->size) != 0)
      detail::throw_listen_error(errno, text);
  }
  if (::listen(fd.get(), backlog) != 0) {
    const int err = errno;
    if (a.kind == address::family::unix_path) ::unlink(a.path.c_str());
    detail::throw_listen_error(err, text);
  }
  if (a.kind == address::family::unix_path) {
    bound = "unix@" + a.path;
    std::string absolute = a.path;
    if (absolute.front() != '/') {
      char cwd[4096];
      if (::getcwd(cwd, sizeof cwd) != nullptr) absolute = std::string(cwd) + "/" + absolute;
    }
    struct stat st {};
    if (::lstat(a.path.c_str(), &st) != 0) return listener(std::move(fd));  // removed already: nothing to clean
    return listener(std::move(fd), std::move(absolute), st.st_dev, st.st_ino);
  }
  if (a.kind == address::family::unix_abstract) {
    bound = "unix@@" + a.path;
    return listener(std::move(fd));
  }
  sockaddr_storage actual{};
  socklen_t size = sizeof actual;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&actual), &size);
  bound = endpoint_text(actual, size);
  return listener(std::move(fd));
}

// The time left until `deadline` for ppoll(): null (wait forever) without one, never negative.
inline const timespec* time_left(const std::optional<clock::time_point>& deadline, timespec& out) {
  if (!deadline) return nullptr;
  const auto now = clock::now();
  // Compared before subtracting: `deadline - now` overflows for a deadline far in the past.
  const auto left = *deadline > now ? *deadline - now : clock::duration::zero();
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
  out.tv_sec = geerpc::detail::integer_cast<decltype(out.tv_sec)>(ns / 1'000'000'000);
  out.tv_nsec = geerpc::detail::integer_cast<decltype(out.tv_nsec)>(ns % 1'000'000'000);
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

namespace detail {

// A Unix socket connects at once (or is refused) unless the listener's backlog is full; a
// non-blocking connect then fails with EAGAIN and there is nothing to poll for. So this one blocks,
// for at most the time left (SO_SNDTIMEO bounds a Unix connect's wait), and asks again until the
// deadline when that wait ends early.
inline unique_fd connect_unix_before(const endpoint& e, const std::optional<clock::time_point>& deadline, int& err) {
  unique_fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) {
    err = errno;
    return {};
  }
  for (;;) {
    timeval limit{};  // zero: no limit
    if (deadline) {
      const auto left = std::chrono::ceil<std::chrono::microseconds>(*deadline - clock::now());
      const auto us = std::max<std::chrono::microseconds::rep>(1, left.count());
      limit.tv_sec = geerpc::detail::integer_cast<decltype(limit.tv_sec)>(us / 1'000'000);
      limit.tv_usec = geerpc::detail::integer_cast<decltype(limit.tv_usec)>(us % 1'000'000);
    }
    ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&e.address), e.size) == 0) break;
    if (errno != EINTR && errno != EAGAIN) {
      err = errno;
      return {};
    }
    if (errno == EAGAIN && deadline && clock::now() >= *deadline) {
      err = ETIMEDOUT;
      return {};
    }
  }
  const timeval none{};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &none, sizeof none);
  set_non_blocking(fd.get());
  err = 0;
  return fd;
}

}  // namespace detail

// Connects before `deadline` (none: wait as long as the kernel does). Returns the connected
// non-blocking socket, or an empty one with `err` set (ETIMEDOUT when the deadline passed).
inline unique_fd connect_before(const endpoint& e, const std::optional<clock::time_point>& deadline, int& err) {
  if (e.address.ss_family == AF_UNIX) return detail::connect_unix_before(e, deadline, err);
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

// The same, for several buffers sent as one (sendmsg): bytes sent from their concatenation.
inline long send_some(int fd, const ::iovec* parts, std::size_t count) noexcept {
  ::msghdr message{};
  message.msg_iov = const_cast<::iovec*>(parts);
  message.msg_iovlen = count;
  for (;;) {
    const ssize_t n = ::sendmsg(fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
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
    // A waiting recv() under a receive timeout is not restarted after a signal, and starting it
    // again would wait its whole timeout again: the caller, which knows its deadline, decides.
    if (errno == EINTR && !wait) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return recv_status::would_block;
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
