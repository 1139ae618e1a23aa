// geerpc: a client of the JSON codec calling a Go net/rpc server served with jsonrpc.ServeConn
// (docs/protocol.md 9.6), through an address jsonrpc@host:port. The client's engines are those of
// any geerpc client: the translation is a stream session (net/stream_session.hpp) under them, which
// answers the client's hello itself (Go sends none), turns each request frame into a JSON-RPC 1.0
// request object, and each response object into a response frame. Compiled once, in geerpc::json
// (src/jsonrpc_client.cpp, src/jsonrpc_client_session.cpp); json_codec makes the session.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../net/stream_session.hpp"
#include "jsonrpc_scanner.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {
namespace detail {

// The translation both ways, without I/O (so that a test or a fuzzer drives it with bytes alone).
// Not thread-safe: the session calls it under its mutex.
class jsonrpc_client_translator {
 public:
  // The most calls kept as waiting for Go's answer (docs/protocol.md 9.6). A call that gave up on
  // the client (its deadline, a cancel) stays waiting here, since nothing tells the session, and Go
  // may never answer it: past this many, the oldest is forgotten, and a late answer to a forgotten
  // call is passed on to the engine (which drops it, or completes the call if it still waits).
  static constexpr std::size_t default_max_waiting = 4096;

  // `where` begins every error it writes: "rpc client: jsonrpc@127.0.0.1:1234". `max_waiting`
  // (at least 1): the session's is the default; a test or a fuzzer reaches the bound with less.
  explicit jsonrpc_client_translator(std::string where, std::size_t max_waiting = default_max_waiting)
      : where_(std::move(where)), max_waiting_(max_waiting < 1 ? 1 : max_waiting) {}

  // Takes what the client's engine writes: its hello first (answered at once with an accepting
  // hello reply, appended to `to_client`), then frames: a request becomes a request object and a
  // newline, appended to `text`; a cancel is dropped (Go's server has no word for it). Returns an
  // empty string, or why the bytes are not what a geerpc client writes (the connection is then over).
  std::string from_client(std::span<const std::byte> bytes, std::vector<std::byte>& text,
                          std::vector<std::byte>& to_client);

  // Takes what the server sends: each response object becomes a response frame for the client,
  // appended to `frames`. Returns false once the stream broke the protocol: then every call still
  // waiting has got a protocol_error frame naming what was wrong (why()), and nothing more is taken.
  bool from_server(std::span<const std::byte> bytes, std::vector<std::byte>& frames);

  bool broken() const noexcept { return !why_.empty(); }
  const std::string& why() const noexcept { return why_; }
  std::size_t waiting() const noexcept { return waiting_.size(); }  // calls sent, not answered
  std::uint64_t forgotten() const noexcept { return forgotten_; }   // calls past max_waiting()
  std::size_t max_waiting() const noexcept { return max_waiting_; }
  std::uint32_t max_frame_size() const noexcept { return max_frame_size_; }

 private:
  std::string take_frame(std::span<const std::byte> frame, std::vector<std::byte>& text);
  void forget_oldest() noexcept;
  bool late(std::uint64_t seq) const noexcept;  // an answer to a call forgotten unanswered
  void take_response(std::span<const std::byte> text, std::vector<std::byte>& frames);
  void keep_part(std::span<const std::byte> part, std::vector<std::byte>& frames);
  // The stream broke: every waiting call gets a protocol_error frame saying `what`.
  void fail(std::string_view what, std::vector<std::byte>& frames);

  const std::string where_;
  const std::size_t max_waiting_;
  bool hello_taken_ = false;
  // The client's own limit, from its hello's max_response_size: the largest response frame it
  // takes, announced back as the "server's" limit on its requests.
  std::uint32_t max_frame_size_ = 0;
  std::vector<std::byte> partial_;       // the client's bytes of a hello or frame not complete yet
  std::set<std::uint64_t> waiting_;      // ordered: the oldest call is forgotten first
  std::uint64_t forgotten_ = 0;          // how many calls were forgotten unanswered
  std::uint64_t forgotten_from_ = 0;     // the first seq forgotten and the highest: ids between
  std::uint64_t forgotten_through_ = 0;  // them, not waiting, may be late answers
  value_scanner scanner_;
  bool inside_ = false;             // a response has begun and not ended
  std::vector<std::byte> pending_;  // its bytes so far, when they span reads
  std::uint64_t consumed_ = 0;      // the server's bytes before the current read
  std::uint64_t value_start_ = 0;   // the server's byte where the current response began
  std::string why_;
};

// The session: the translator between the engine and the socket `fd` (non-blocking). Output the
// socket has no room for is kept, and the last byte of the write that produced it is reported as
// not taken yet, so that the engine waits for POLLOUT and offers it again, which flushes the rest.
class jsonrpc_client_session final : public net::stream_session {
 public:
  jsonrpc_client_session(int fd, std::string where) : fd_(fd), translator_(std::move(where)) {}

  net::io_result read(std::span<std::byte> out) noexcept override;
  net::io_result write(std::span<const std::byte> data) noexcept override;
  bool buffered() const noexcept override;
  short wants() const noexcept override { return 0; }
  void shutdown() noexcept override {}
  std::string why_closed() const override;

 private:
  bool flush() noexcept;  // false: the socket is broken
  net::io_result give(std::span<std::byte> out) noexcept;

  const int fd_;
  mutable std::mutex mutex_;
  jsonrpc_client_translator translator_;
  std::vector<std::byte> to_socket_;  // request text not sent yet, from sent_
  std::size_t sent_ = 0;
  std::vector<std::byte> to_engine_;  // frames (and the hello reply) not read yet, from given_
  std::size_t given_ = 0;
  bool owed_ = false;        // the last byte of a write was taken in, and not reported
  bool ended_ = false;       // the server's end, a socket error or a broken stream: reads end
  bool write_over_ = false;  // the socket refused a write
  std::string why_;          // why the session ended the connection itself
};

}  // namespace detail
}  // namespace json
GEERPC_END_NAMESPACE
