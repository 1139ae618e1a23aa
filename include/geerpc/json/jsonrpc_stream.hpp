// geerpc: JSON-RPC 1.0 streams, as Go's net/rpc/jsonrpc speaks them (docs/protocol.md section 9):
// the frame translator (server/frame_translator.hpp) json_codec brings, which turns each request
// object a peer writes into a geerpc request frame whose body is its "params" array, and each
// response frame into a response object. Compiled once, in geerpc::json (src/jsonrpc_stream.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "../config.hpp"
#include "../server/frame_translator.hpp"
#include "jsonrpc_scanner.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {
namespace detail {

// What a request object holds for the translator: where its members are, by the tape's tokens.
struct jsonrpc_request {
  std::string_view method;
  std::span<const std::byte> params;  // the array's exact text, from its '[' to its ']'
  std::string_view id = "null";       // the id's exact text: null when it has none
};

class jsonrpc_stream final : public geerpc::detail::frame_translator {
 public:
  static constexpr std::size_t max_id_size = value_scanner::max_id_size;

  explicit jsonrpc_stream(std::uint32_t max_message_size) noexcept : max_message_size_(max_message_size) {}

  intake inbound(std::span<const std::byte> bytes, std::vector<std::byte>& frames,
                 std::vector<std::byte>& replies) override;
  void outbound(std::span<const std::byte> frame, std::vector<std::byte>& text) override;
  // The bytes of an unfinished message held; 1 while one too long to keep is skipped.
  std::size_t buffered() const noexcept override { return skipping_ ? 1 : pending_.size(); }

  // The ids of calls not answered yet (a test's view of the map).
  std::size_t ids_held() const;

 private:
  // A whole value, which began at `start` (bytes from the stream's first): a frame, or an error
  // reply under its id.
  void take_message(std::span<const std::byte> text, std::uint64_t start, std::vector<std::byte>& frames,
                    std::vector<std::byte>& replies);
  // Bytes of the value begun, `part` of it in this read: kept, or, past the limit, skipped (the
  // scanner still finds its end and its id).
  void keep_part(std::span<const std::byte> part);
  // The value ended; it was too long to keep: its error reply.
  void refuse_too_large(std::vector<std::byte>& replies);
  void add_frame(const jsonrpc_request& request, std::vector<std::byte>& frames);

  const std::size_t max_message_size_;
  value_scanner scanner_;
  bool inside_ = false;             // a value has begun and not ended
  bool skipping_ = false;           // ... and is longer than max_message_size_: its bytes are not kept
  std::vector<std::byte> pending_;  // the bytes of the value begun so far, when they span reads
  std::uint64_t consumed_ = 0;      // bytes of the stream before the current read
  std::uint64_t value_start_ = 0;   // the stream's byte where the current value began
  std::uint64_t next_seq_ = 1;
  // A call's id, by the seq of its frame, until its response goes out. inbound() adds, outbound()
  // (on any thread) takes: under the mutex.
  mutable std::mutex ids_mutex_;
  std::unordered_map<std::uint64_t, std::string> ids_;
};

// `text` with every byte that does not begin a well-formed UTF-8 sequence replaced by U+FFFD
// (JSON-RPC 2.0's translator, json/http_rpc.hpp, shares it).
std::string valid_utf8(std::string_view text);

// `{"id":<id>,"result":null,"error":"<message>"}` and a newline: an error response, the message
// JSON-escaped (a byte that is not UTF-8 becomes U+FFFD, as Go's encoder writes it).
void append_error_response(std::string_view id, std::string_view message, std::vector<std::byte>& out);

}  // namespace detail
}  // namespace json
GEERPC_END_NAMESPACE
