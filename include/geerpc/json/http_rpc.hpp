// geerpc: JSON-RPC 2.0 over HTTP, POST /rpc on the RPC port (docs/protocol.md section 11): the
// translator (server/frame_translator.hpp) json_codec brings for one request's body. It reads the
// body (its Content-Length, which the HTTP door checked), turns each call of it (one object, or a
// batch array) into a geerpc request frame whose body is its "params" array and whose deadline
// budget is the Geerpc-Timeout header's, gathers the response frames, and once every call has
// answered (notifications too: see below) gives the whole HTTP/1.0 answer, the connection's last
// words. Compiled once, in geerpc::json (src/http_rpc.cpp).
//
// Notifications (no "id") run as calls do and get no entry; the answer waits for them too, so
// that closing the connection after it never stops a notification's handler, and a 204 says that
// they all finished.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"
#include "../server/frame_translator.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {
namespace detail {

// JSON-RPC 2.0's error codes: its own, and those of its range for servers, which geerpc uses so.
namespace rpc_code {
inline constexpr int parse_error = -32700;       // the body is not JSON
inline constexpr int invalid_request = -32600;   // not a request object
inline constexpr int method_not_found = -32601;  // unknown_service, unknown_method
inline constexpr int invalid_params = -32602;    // bad_request, type_mismatch: arity, types
inline constexpr int internal_error = -32603;    // any other errc
inline constexpr int handler_error = -32000;     // remote_error: the handler threw; its message
inline constexpr int out_of_time = -32001;       // deadline_exceeded, handle_timeout, canceled
inline constexpr int not_run = -32002;           // busy, going_away, aborted: the server could not run it
inline constexpr int refused = -32003;           // unauthenticated, permission_denied (an interceptor)
}  // namespace rpc_code

// The JSON-RPC 2.0 code of a geerpc error.
int rpc_code_of(errc code) noexcept;

// `{"jsonrpc":"2.0","error":{"code":..,"message":"..","data":{"errc":".."}},"id":<id>}`: the
// message made valid UTF-8 and escaped; `id` is the request's id text, verbatim.
void append_rpc_error(std::string_view id, int code, std::string_view message, errc reason, std::string& out);

class http_rpc_translator final : public geerpc::detail::frame_translator {
 public:
  explicit http_rpc_translator(const geerpc::detail::http_rpc_terms& terms) : terms_(terms) {}

  intake inbound(std::span<const std::byte> bytes, std::vector<std::byte>& frames,
                 std::vector<std::byte>& replies) override;
  void outbound(std::span<const std::byte> frame, std::vector<std::byte>& text) override;
  // Until the whole body is in, at least 1: the connection's frame timeout bounds its arrival,
  // its first byte or not.
  std::size_t buffered() const noexcept override { return complete_ ? 0 : body_.size() + 1; }
  bool one_answer() const noexcept override { return true; }

  // One call of the body: its id's text (empty: a notification), and its entry once answered.
  struct call {
    std::string id;
    std::string entry;
    bool notification = false;
  };

 private:
  // The body is whole: its calls become frames, or their error entries.
  void take_body(std::vector<std::byte>& frames);
  void take_call(std::size_t index, std::vector<std::byte>& frames);
  void add_frame(std::string_view method, std::span<const std::byte> params, std::vector<std::byte>& frames);
  // Every call has its entry: the HTTP answer (the entries' memory goes as it is made).
  void answer(std::vector<std::byte>& out);

  const geerpc::detail::http_rpc_terms terms_;
  std::vector<std::byte> body_;
  bool complete_ = false;
  bool batch_ = false;
  // The calls in the body's order, and which of them each frame's seq is (seq - 1 indexes it).
  // inbound() fills them before any frame is sent; outbound() (any thread) then sets entries
  // under the mutex.
  std::vector<call> calls_;
  std::vector<std::size_t> call_of_seq_;
  std::mutex mutex_;
  std::size_t unanswered_ = 0;
  std::size_t answer_bytes_ = 0;  // the entries' bytes so far (under the mutex)
};

}  // namespace detail
}  // namespace json
GEERPC_END_NAMESPACE
