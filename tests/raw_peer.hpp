// geerpc's tests: peers that speak raw bytes over loopback or Unix sockets (a listener that answers
// nothing by itself, a raw_peer that sends and reads frames, hellos and HTTP), and the frames they
// send, built by hand.
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <geerpc/geerpc.hpp>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace test {

using namespace std::chrono_literals;

// A loopback listener that answers nothing by itself: the kernel completes TCP connects from its
// backlog, and a test accepts them (or never does) when it likes.
class listener {
 public:
  listener() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), size) != 0 || ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size) != 0)
      throw std::runtime_error("listener: cannot listen on loopback");
    port_ = ntohs(address.sin_port);
  }
  ~listener() { ::close(fd_); }
  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;
  int fd() const { return fd_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_;
  int port_ = 0;
};

// A peer that speaks raw bytes, for tests below the client API: a client connected to a server,
// or a server's end of a connection a test accepted.
class raw_peer {
 public:
  struct accepted_t {};
  static constexpr accepted_t accepted{};
  raw_peer(accepted_t, int fd) : fd_(fd) {
    if (fd_ < 0) throw std::runtime_error("accept failed");
  }

  explicit raw_peer(const std::string& address) {
    std::string why;
    auto endpoint = geerpc::net::resolve(address, why);
    if (!endpoint) throw std::runtime_error(why);
    fd_ = ::socket(endpoint->address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&endpoint->address), endpoint->size) != 0)
      throw std::runtime_error("connect failed");
  }
  ~raw_peer() { ::close(fd_); }
  raw_peer(const raw_peer&) = delete;
  raw_peer& operator=(const raw_peer&) = delete;

  int fd() const { return fd_; }

  void send(std::span<const std::byte> bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) throw std::runtime_error("send failed");
      sent += static_cast<std::size_t>(n);
    }
  }

  // Reads exactly `size` bytes; nullopt on EOF, error or after `limit`.
  std::optional<std::vector<std::byte>> read(std::size_t size, std::chrono::milliseconds limit = 5s) {
    std::vector<std::byte> out(size);
    std::size_t have = 0;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (have < size) {
      pollfd p{fd_, POLLIN, 0};
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      const ssize_t n = ::recv(fd_, out.data() + have, size - have, 0);
      if (n <= 0) return std::nullopt;
      have += static_cast<std::size_t>(n);
    }
    return out;
  }

  // Everything the server sends until it closes the connection; nullopt if it has not closed
  // within `limit` (or resets it).
  std::optional<std::string> read_all(std::chrono::milliseconds limit = 5s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::string out;
    char buffer[4096];
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n == 0) return out;
      if (n < 0) return std::nullopt;
      out.append(buffer, static_cast<std::size_t>(n));
    }
  }
  void send(std::string_view text) { send(std::as_bytes(std::span(text.data(), text.size()))); }

  // True when the server closed the connection (EOF or reset) within `limit`.
  bool closed_by_peer(std::chrono::milliseconds limit = 5s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::byte sink[4096];
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      if (::recv(fd_, sink, sizeof sink, 0) <= 0) return true;
    }
  }

  void send_hello(std::chrono::microseconds handle_timeout = 0us) {
    std::array<std::byte, geerpc::wire::hello_size> hello{};
    geerpc::wire::encode_hello(
        {geerpc::wire::protocol_version, geerpc::binary_codec::id, static_cast<std::uint64_t>(handle_timeout.count()),
         geerpc::wire::default_max_frame_size},
        hello);
    send(hello);
  }

  // Reads a handshake reply; returns it with its reason.
  std::optional<geerpc::wire::hello_reply> read_hello_reply() {
    auto header = read(geerpc::wire::hello_reply_header_size);
    if (!header) return std::nullopt;
    geerpc::wire::hello_reply reply;
    std::size_t reason_size = 0;
    if (geerpc::wire::parse_hello_reply_header(std::span<const std::byte, 12>(header->data(), 12), reply, reason_size))
      return std::nullopt;
    auto reason = read(reason_size);
    if (!reason) return std::nullopt;
    reply.reason.assign(reinterpret_cast<const char*>(reason->data()), reason->size());
    return reply;
  }

  struct frame {
    geerpc::wire::frame_header header;
    std::string text;
    std::vector<std::byte> body;
  };

  std::optional<frame> read_frame(std::chrono::milliseconds limit = 5s) {
    auto prefix = read(geerpc::wire::length_prefix_size, limit);
    if (!prefix) return std::nullopt;
    const std::uint32_t length = geerpc::detail::load_le<std::uint32_t>(prefix->data());
    auto rest = read(length, limit);
    if (!rest) return std::nullopt;
    prefix->insert(prefix->end(), rest->begin(), rest->end());
    geerpc::wire::frame_view view;
    if (geerpc::wire::parse_frame(*prefix, view) != nullptr) return std::nullopt;
    return frame{view.header, std::string(view.text), std::vector<std::byte>(view.body.begin(), view.body.end())};
  }

 private:
  int fd_ = -1;
};

// The whole answer to one HTTP request (`request`, head and body as sent) on a fresh connection
// to `address`; throws when the server does not answer and close within `limit`.
inline std::string http_exchange(const std::string& address, const std::string& request,
                                 std::chrono::milliseconds limit = 5s) {
  raw_peer peer(address);
  peer.send(request);
  const auto response = peer.read_all(limit);
  if (!response) throw std::runtime_error("no whole answer to " + request.substr(0, 40));
  return *response;
}

// The body of `GET <path>` on a server's RPC port (the debug page, its JSON); throws on anything
// but a 200 answer within `limit`.
inline std::string http_get(const std::string& address, const std::string& path, std::chrono::milliseconds limit = 5s) {
  raw_peer peer(address);
  peer.send("GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n");
  const auto response = peer.read_all(limit);
  if (!response) throw std::runtime_error("GET " + path + ": no whole answer");
  if (!response->starts_with("HTTP/1.0 200 ")) throw std::runtime_error("GET " + path + ": " + response->substr(0, 80));
  const auto at = response->find("\r\n\r\n");
  return at == std::string::npos ? std::string() : response->substr(at + 4);
}

// The server's end of the next connection to `l`; null if no client connects within `limit`.
inline std::unique_ptr<raw_peer> accept_raw(listener& l, std::chrono::milliseconds limit = 5s) {
  pollfd p{l.fd(), POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(limit.count())) <= 0) return nullptr;
  const int fd = ::accept4(l.fd(), nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return nullptr;
  return std::make_unique<raw_peer>(raw_peer::accepted, fd);
}

// The server's end of the next connection to `l`, once its hello has been read and accepted with
// `max_frame_size`; null if no client connects within `limit` or the hello does not come.
inline std::unique_ptr<raw_peer> accept_greeted(listener& l, std::chrono::milliseconds limit = 5s,
                                                std::uint32_t max_frame_size = geerpc::wire::default_max_frame_size) {
  auto peer = accept_raw(l, limit);
  if (!peer || !peer->read(geerpc::wire::hello_size, limit)) return nullptr;
  std::vector<std::byte> reply;
  geerpc::wire::encode_hello_reply({true, max_frame_size, {}}, reply);
  try {
    peer->send(reply);  // throws if the client has gone; this often runs on a thread of the test's
  } catch (const std::exception&) {
    return nullptr;
  }
  return peer;
}

// A complete request frame.
template <class A>
std::vector<std::byte> request_frame(std::uint64_t seq, std::string_view method, const A& argument,
                                     std::uint64_t budget_us = 0) {
  std::vector<std::byte> out;
  const std::size_t start =
      geerpc::wire::begin_frame(out, {geerpc::wire::frame_kind::request, 0, seq, budget_us}, method);
  geerpc::binary_codec::encode(argument, out);
  geerpc::wire::finish_frame(out, start);
  return out;
}

// A successful response frame.
template <class R>
std::vector<std::byte> response_frame(std::uint64_t seq, const R& result) {
  std::vector<std::byte> out;
  const std::size_t start = geerpc::wire::begin_frame(out, {geerpc::wire::frame_kind::response, 0, seq, 0}, "");
  geerpc::binary_codec::encode(result, out);
  geerpc::wire::finish_frame(out, start);
  return out;
}

// A cancel frame for request `seq`.
inline std::vector<std::byte> cancel_frame(std::uint64_t seq) {
  std::vector<std::byte> out;
  geerpc::wire::finish_frame(out, geerpc::wire::begin_frame(out, {geerpc::wire::frame_kind::cancel, 0, seq, 0}, ""));
  return out;
}

template <class T>
T decode_body(const std::vector<std::byte>& body) {
  T value{};
  if (!geerpc::binary_codec::decode(body, value)) throw std::runtime_error("body does not decode");
  return value;
}

}  // namespace test
