// Stand-ins for etcd on loopback ports, for what a real etcd would never do: a fake that answers
// each request with a given HTTP response (optionally held until the test lets it go), and a
// listener that accepts connections in the kernel but never reads or answers them.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <geerpc/etcd.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../catch.hpp"

namespace test {

// A loopback socket listening on a port of its own, for the fakes below.
inline int listening_loopback_socket(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), size) == 0);
  REQUIRE(::listen(fd, 8) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0);
  port = ntohs(address.sin_port);
  return fd;
}

inline std::string loopback_endpoint(int port) { return "http://127.0.0.1:" + std::to_string(port); }

// A fake etcd on a loopback port: answers each request (one per connection) with the next of
// `answers`, whole HTTP responses, and closes; after the last it accepts no more (later requests
// wait unanswered). `before_answer(i)`, if given, runs before the i-th answer is sent, once its
// request was read: a test holds an answer back there.
class fake_etcd {
 public:
  explicit fake_etcd(std::vector<std::string> answers, std::function<void(std::size_t)> before_answer = {})
      : answers_(std::move(answers)), before_answer_(std::move(before_answer)) {
    fd_ = listening_loopback_socket(port_);
    thread_ = std::jthread([this] { serve(); });
  }
  fake_etcd(const fake_etcd&) = delete;
  fake_etcd& operator=(const fake_etcd&) = delete;
  ~fake_etcd() {
    ::shutdown(fd_, SHUT_RDWR);  // ends a pending accept
    thread_.join();
    ::close(fd_);
  }
  geerpc::etcd::options options() const {
    return {.endpoints = {loopback_endpoint(port_)}, .request_timeout = std::chrono::milliseconds(2000)};
  }

 private:
  void serve() {
    for (std::size_t i = 0; i < answers_.size(); ++i) {
      const int peer = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (peer < 0) return;
      read_request(peer);
      if (before_answer_) before_answer_(i);
      const std::string& answer = answers_[i];
      for (std::size_t sent = 0; sent < answer.size();) {
        const auto n = ::send(peer, answer.data() + sent, answer.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
      }
      ::close(peer);
    }
  }
  // The request: its head, then as many body bytes as Content-Length says.
  static void read_request(int peer) {
    std::string request;
    char buffer[4096];
    std::size_t wanted = std::string::npos;
    while (request.size() < wanted) {
      const auto got = ::recv(peer, buffer, sizeof buffer, 0);
      if (got <= 0) break;
      request.append(buffer, static_cast<std::size_t>(got));
      const auto head_end = request.find("\r\n\r\n");
      const auto length = request.find("Content-Length: ");
      if (head_end != std::string::npos && length != std::string::npos)
        wanted = head_end + 4 + std::stoul(request.substr(length + 16));
    }
  }

  std::vector<std::string> answers_;
  std::function<void(std::size_t)> before_answer_;
  int fd_ = -1;
  int port_ = 0;
  std::jthread thread_;
};

// An "etcd" that accepts every connection (the kernel completes the handshake into the listen
// queue) and never reads or answers: a request to it waits for its timeout, or its stop.
class silent_etcd {
 public:
  silent_etcd() : fd_(listening_loopback_socket(port_)) {}
  silent_etcd(const silent_etcd&) = delete;
  silent_etcd& operator=(const silent_etcd&) = delete;
  ~silent_etcd() { ::close(fd_); }
  std::string endpoint() const { return loopback_endpoint(port_); }
  // Waits until a client has connected (a connection waits in the listen queue: the client's
  // request is on its way or sent), or timeout passes; whether one has.
  bool wait_for_connection(std::chrono::milliseconds timeout) const {
    pollfd waiting{fd_, POLLIN, 0};
    return ::poll(&waiting, 1, static_cast<int>(timeout.count())) == 1;
  }

 private:
  int port_ = 0;
  int fd_ = -1;
};

inline std::string http_200(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace test
