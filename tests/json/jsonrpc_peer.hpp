// What the JSON-RPC tests share (jsonrpc_test.cpp, jsonrpc_errors_test.cpp): a server of Go's
// net/rpc example service on both codecs, and a peer that writes text and reads the server's lines
// over a raw loopback socket.
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <geerpc/json.hpp>

#include "support.hpp"

namespace jsonrpc_test {

using namespace std::chrono_literals;

using both_codecs = geerpc::codecs<geerpc::binary_codec, geerpc::json_codec>;

// What Go's net/rpc examples serve: Go's field names are A and B, which match these ignoring case.
struct Pair {
  int a;
  int b;
};

struct GoArith {
  test::event release;  // lets Hold's handlers go
  test::counter held;   // Hold's handlers that began

  int sum(const Pair& p) { return p.a + p.b; }
  std::string echo(const std::string& text) { return text; }
  std::string fill(const Pair& p) { return std::string(static_cast<std::size_t>(p.a), 'x'); }  // a reply of a bytes
  int fail(const Pair&) { throw std::runtime_error("boom: \"quoted\"\n\xff"); }
  void nothing(const Pair&) {}
  int hold(const Pair& p) {
    held.add();
    release.wait();
    return p.a;
  }
};
using GoArithApi =
    geerpc::service<"Arith", geerpc::method<"Sum", &GoArith::sum>, geerpc::method<"Echo", &GoArith::echo>,
                    geerpc::method<"Fill", &GoArith::fill>, geerpc::method<"Fail", &GoArith::fail>,
                    geerpc::method<"Nothing", &GoArith::nothing>, geerpc::method<"Hold", &GoArith::hold>>;

template <class Transport, class Codec = both_codecs>
struct go_server {
  GoArith arith;
  geerpc::basic_server<Transport, Codec> server;
  std::string address;
  explicit go_server(geerpc::server_options opts = {}) : server(test::with_test_io_threads(std::move(opts))) {
    server.template add<GoArithApi>(arith);
    address = server.listen("127.0.0.1:0");
  }
};

// A JSON-RPC peer over a raw socket: writes text, reads the server's lines.
class line_peer {
 public:
  explicit line_peer(const std::string& address) : peer_(address) {
    const int on = 1;  // each send its own segment, for the test of many small ones
    ::setsockopt(peer_.fd(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  }
  void send(std::string_view text) { peer_.send(text); }
  // The next line, without its newline; throws when none comes whole within `limit`.
  std::string line(std::chrono::milliseconds limit = 5s) {
    for (;;) {
      if (const auto at = buffered_.find('\n'); at != std::string::npos) {
        std::string out = buffered_.substr(0, at);
        buffered_.erase(0, at + 1);
        return out;
      }
      const auto byte = peer_.read(1, limit);
      if (!byte) throw std::runtime_error("no whole line from the server; have: " + buffered_);
      buffered_ += static_cast<char>((*byte)[0]);
    }
  }
  // Everything until the server closes (after the lines already read); nullopt if it does not.
  std::optional<std::string> rest_until_close(std::chrono::milliseconds limit = 5s) {
    auto rest = peer_.read_all(limit);
    if (!rest) return std::nullopt;
    return buffered_ + *rest;
  }
  test::raw_peer& raw() { return peer_; }

 private:
  test::raw_peer peer_;
  std::string buffered_;
};

inline std::string call_text(std::string_view method, std::string_view params, std::string_view id) {
  return R"({"method":")" + std::string(method) + R"(","params":)" + std::string(params) + R"(,"id":)" +
         std::string(id) + "}\n";
}

// An error response's line: its text as JSON writes it (only quotes and backslashes in these).
inline std::string error_line(std::string_view id, std::string_view text) {
  std::string escaped;
  for (const char c : text) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return "{\"id\":" + std::string(id) + ",\"result\":null,\"error\":\"" + escaped + "\"}";
}

}  // namespace jsonrpc_test
