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

GEERPC_BEGIN_NAMESPACE
namespace json {
namespace detail {

// Splits a byte stream into its top-level JSON values (objects or arrays), whatever separates them
// (Go writes a newline after each), by tracking strings, escapes and the depth of brackets: where a
// value ends, not whether it is well formed (the tape's parse judges that). Hand-written, since the
// tape (json/tape.hpp) parses one contiguous text of a whole value: a streaming parse of Boost.JSON
// fed the partial reads would parse every value twice, once to find its end, then into the tape.
class value_splitter {
 public:
  // Scans `bytes` from `at`, inside a value that began with its opening bracket: returns the index
  // just past the value's closing bracket, or bytes.size() when the value goes on after them.
  std::size_t scan(std::span<const std::byte> bytes, std::size_t at) noexcept;
  bool complete() const noexcept { return depth_ == 0; }  // after scan(): the value ended
  void reset() noexcept { *this = value_splitter(); }

 private:
  std::size_t depth_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;  // in a string, after a backslash
};

// What a request object holds for the translator: where its members are, by the tape's tokens.
struct jsonrpc_request {
  std::string_view method;
  std::span<const std::byte> params;  // the array's exact text, from its '[' to its ']'
  std::string_view id = "null";       // the id's exact text: null when it has none
};

class jsonrpc_stream final : public geerpc::detail::frame_translator {
 public:
  // An id longer than this is refused (its request answered with an error): ids are kept while
  // their calls run, and a peer should not hold the server's memory with them.
  static constexpr std::size_t max_id_size = 1024;

  explicit jsonrpc_stream(std::uint32_t max_message_size) noexcept : max_message_size_(max_message_size) {}

  verdict inbound(std::span<const std::byte> bytes, std::vector<std::byte>& frames,
                  std::vector<std::byte>& replies) override;
  void outbound(std::span<const std::byte> frame, std::vector<std::byte>& text) override;
  std::size_t buffered() const noexcept override { return pending_.size(); }

  // The ids of calls not answered yet (a test's view of the map).
  std::size_t ids_held() const;

 private:
  // A whole value, which began at `start` (bytes from the stream's first); false: the stream is
  // broken.
  bool take_message(std::span<const std::byte> text, std::uint64_t start, std::vector<std::byte>& frames,
                    std::vector<std::byte>& replies);
  void add_frame(const jsonrpc_request& request, std::vector<std::byte>& frames);

  const std::size_t max_message_size_;
  value_splitter splitter_;
  bool inside_ = false;             // a value has begun and not ended
  std::vector<std::byte> pending_;  // the bytes of the value begun so far, when they span reads
  std::uint64_t consumed_ = 0;      // bytes of the stream before the current read
  std::uint64_t value_start_ = 0;   // the stream's byte where the current value began
  std::uint64_t next_seq_ = 1;
  // A call's id, by the seq of its frame, until its response goes out. inbound() adds, outbound()
  // (on any thread) takes: under the mutex.
  mutable std::mutex ids_mutex_;
  std::unordered_map<std::uint64_t, std::string> ids_;
};

// `{"id":<id>,"result":null,"error":"<message>"}` and a newline: an error response, the message
// JSON-escaped (a byte that is not UTF-8 becomes U+FFFD, as Go's encoder writes it).
void append_error_response(std::string_view id, std::string_view message, std::vector<std::byte>& out);

}  // namespace detail
}  // namespace json
GEERPC_END_NAMESPACE
