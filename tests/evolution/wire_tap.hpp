// Below the client API, for the cross-version test: a raw connection that sends request frames
// built by hand (with or without a schema) and reads the responses, and a wire tap, a one-connection
// TCP relay that records whether each request a client sends carries its schema.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <geerpc/wire/frame.hpp>
#include <geerpc/wire/handshake.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace evolution {

using namespace std::chrono_literals;

// A TCP connection to "127.0.0.1:<port>" (the servers here listen on IPv4 loopback); -1 on failure.
inline int connect_to(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) return -1;
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
  if (::inet_pton(AF_INET, address.substr(0, colon).c_str(), &to.sin_addr) != 1) return -1;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline bool send_all(int fd, std::span<const std::byte> bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads exactly out.size() bytes within `limit` (a bound against hangs only).
inline bool read_exact(int fd, std::span<std::byte> out, std::chrono::milliseconds limit = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::size_t have = 0;
  while (have < out.size()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    const ssize_t n = ::recv(fd, out.data() + have, out.size() - have, 0);
    if (n <= 0) return false;
    have += static_cast<std::size_t>(n);
  }
  return true;
}

struct received_frame {
  geerpc::wire::frame_header header;
  std::string text;
  std::vector<std::byte> body;
};

// A client connection without the client: the handshake, then frames the caller builds.
class raw_connection {
 public:
  explicit raw_connection(const std::string& address) : fd_(connect_to(address)) {
    if (fd_ < 0) {
      error_ = "cannot connect to " + address;
      return;
    }
    std::array<std::byte, geerpc::wire::hello_size> hello{};
    geerpc::wire::encode_hello(
        {geerpc::wire::protocol_version, geerpc::binary_codec::id, 0, geerpc::wire::default_max_frame_size}, hello);
    std::array<std::byte, geerpc::wire::hello_reply_header_size> reply{};
    geerpc::wire::hello_reply parsed;
    std::size_t reason_size = 0;
    if (!send_all(fd_, hello) || !read_exact(fd_, reply))
      error_ = "no handshake reply";
    else if (const char* bad = geerpc::wire::parse_hello_reply_header(reply, parsed, reason_size))
      error_ = bad;
    else if (!parsed.accepted)
      error_ = "handshake rejected";
  }
  ~raw_connection() {
    if (fd_ >= 0) ::close(fd_);
  }
  raw_connection(const raw_connection&) = delete;
  raw_connection& operator=(const raw_connection&) = delete;

  // Empty when the handshake succeeded.
  const std::string& error() const { return error_; }

  bool send(std::span<const std::byte> frame) { return error_.empty() && send_all(fd_, frame); }

  std::optional<received_frame> read_frame() {
    std::array<std::byte, geerpc::wire::length_prefix_size> prefix{};
    if (!error_.empty() || !read_exact(fd_, prefix)) return std::nullopt;
    std::vector<std::byte> frame(prefix.begin(), prefix.end());
    frame.resize(prefix.size() + geerpc::detail::load_le<std::uint32_t>(prefix.data()));
    if (!read_exact(fd_, std::span(frame).subspan(prefix.size()))) return std::nullopt;
    geerpc::wire::frame_view view;
    if (geerpc::wire::parse_frame(frame, view) != nullptr) return std::nullopt;
    return received_frame{view.header, std::string(view.text), {view.body.begin(), view.body.end()}};
  }

 private:
  int fd_;
  std::string error_;
};

// A request frame for `method` with this fingerprint, the schema when one is given, and the
// arguments encoded one after another (as their tuple is).
template <class... A>
std::vector<std::byte> request_frame(std::uint64_t seq, std::string_view method, std::uint32_t fingerprint,
                                     const std::string* schema, const A&... arguments) {
  namespace wire = geerpc::wire;
  std::uint8_t flags = wire::request_flag::fingerprint;
  if (schema != nullptr) flags |= wire::request_flag::schema;
  std::vector<std::byte> out;
  const std::size_t start = wire::begin_frame(out, {wire::frame_kind::request, flags, seq, 0}, method, fingerprint);
  if (schema != nullptr) wire::append_schema(out, *schema);
  (geerpc::binary_codec::encode(arguments, out), ...);
  wire::finish_frame(out, start);
  return out;
}

// A relay between one client and `server`, on 127.0.0.1:<some port>, that records the requests
// the client sends (before relaying them, so a request is recorded before its reply can exist).
class wire_tap {
 public:
  struct request {
    std::string method;
    bool schema = false;  // it carried its schema (docs/protocol.md 4.1)
  };

  explicit wire_tap(std::string server) : server_(std::move(server)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof at;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&at), size) != 0 ||
        ::listen(listen_fd_, 1) != 0 || ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&at), &size) != 0 ||
        ::pipe2(stop_, O_CLOEXEC) != 0)
      return;
    address_ = "127.0.0.1:" + std::to_string(ntohs(at.sin_port));
    relay_ = std::thread([this] { relay(); });
  }
  ~wire_tap() {
    if (relay_.joinable()) {
      const char wake = 0;
      (void)!::write(stop_[1], &wake, 1);
      relay_.join();
    }
    for (int fd : {listen_fd_, stop_[0], stop_[1]})
      if (fd >= 0) ::close(fd);
  }
  wire_tap(const wire_tap&) = delete;
  wire_tap& operator=(const wire_tap&) = delete;

  // Where the client dials; empty if the tap could not listen.
  const std::string& address() const { return address_; }

  std::vector<request> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void relay() {
    pollfd wait_accept[2] = {{listen_fd_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
    if (::poll(wait_accept, 2, 10000) <= 0 || (wait_accept[1].revents & POLLIN) != 0) return;
    const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    const int upstream = client >= 0 ? connect_to(server_) : -1;
    std::vector<std::byte> pending;  // client bytes not yet parsed into frames
    std::size_t hello_left = geerpc::wire::hello_size;
    std::array<std::byte, 16384> buffer;
    for (bool open = client >= 0 && upstream >= 0; open;) {
      pollfd p[3] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}, {stop_[0], POLLIN, 0}};
      if (::poll(p, 3, -1) <= 0 || (p[2].revents & POLLIN) != 0) break;
      for (int side = 0; side < 2 && open; ++side) {
        if (p[side].revents == 0) continue;
        const int from = side == 0 ? client : upstream, to = side == 0 ? upstream : client;
        const ssize_t n = ::recv(from, buffer.data(), buffer.size(), 0);
        if (n <= 0) {
          open = false;
          break;
        }
        const auto bytes = std::span(buffer).first(static_cast<std::size_t>(n));
        if (side == 0) record(bytes, pending, hello_left);
        open = send_all(to, bytes);
      }
    }
    if (client >= 0) ::close(client);
    if (upstream >= 0) ::close(upstream);
  }

  void record(std::span<const std::byte> bytes, std::vector<std::byte>& pending, std::size_t& hello_left) {
    const std::size_t skip = std::min(hello_left, bytes.size());
    hello_left -= skip;
    pending.insert(pending.end(), bytes.begin() + static_cast<std::ptrdiff_t>(skip), bytes.end());
    while (pending.size() >= geerpc::wire::length_prefix_size) {
      const std::size_t size =
          geerpc::wire::length_prefix_size + geerpc::detail::load_le<std::uint32_t>(pending.data());
      if (pending.size() < size) return;
      geerpc::wire::frame_view view;
      if (geerpc::wire::parse_frame(std::span(pending).first(size), view) == nullptr &&
          view.header.kind == geerpc::wire::frame_kind::request) {
        std::lock_guard lock(mutex_);
        requests_.push_back({std::string(view.text), !view.schema.empty()});
      }
      pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(size));
    }
  }

  std::string server_;
  std::string address_;
  int listen_fd_ = -1;
  int stop_[2] = {-1, -1};
  std::thread relay_;
  std::mutex mutex_;
  std::vector<request> requests_;
};

}  // namespace evolution
