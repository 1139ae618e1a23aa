// geerpc: the scanner of a JSON-RPC stream (docs/protocol.md section 9), which the translator
// (json/jsonrpc_stream.hpp) feeds the peer's bytes: where each top-level value ends, and on the way
// the text of its top-level "id", so that a message the server cannot read (longer than the limit,
// or malformed) is still answered under its caller's id. Compiled once, in geerpc::json
// (src/jsonrpc_scanner.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {
namespace detail {

// Splits a byte stream into its top-level values (objects or arrays), whatever separates them (Go
// writes a newline after each), by tracking strings, escapes and the depth of brackets: where a
// value ends, not whether it is well formed (the tape's parse judges that). It keeps no byte of the
// value but the id's, so it finds the end of a value of any length. Hand-written, since the tape
// (json/tape.hpp) parses one contiguous text of a whole value: a streaming parse of Boost.JSON fed
// the partial reads would parse every value twice, once to find its end, then into the tape.
class value_scanner {
 public:
  // An id longer than this is not kept (its error is answered under a null id), nor served (its
  // request is answered with an error): ids are kept while their calls run, and a peer should not
  // hold the server's memory with them.
  static constexpr std::size_t max_id_size = 1024;

  // Starts a value: the next scan() begins at its opening bracket ('{' or '[').
  void reset() noexcept;
  // Scans `bytes` from `at`, inside the value: returns the index just past its closing bracket, or
  // bytes.size() when the value goes on after them.
  std::size_t scan(std::span<const std::byte> bytes, std::size_t at) noexcept;
  bool complete() const noexcept { return depth_ == 0; }  // after scan(): the value ended
  // Once complete(): the exact text of the first member of the top-level object keyed "id"
  // (ignoring ASCII case, as Go's decoder matches a key; a key with an escape is not matched)
  // whose value is a well-formed number or string of at most max_id_size bytes; empty: none.
  std::string_view id() const noexcept;

 private:
  // Where the scan is among the top-level object's members, outside strings.
  enum class phase : std::uint8_t { key, in_key, colon, value, other };
  // The id's text: being kept (a string, a number), or settled (found or not).
  enum class capture : std::uint8_t { none, string, number, settled };

  void string_begins_at_top() noexcept;
  void string_byte_at_top(char c, bool escape) noexcept;
  void string_ends_at_top() noexcept;
  void byte_at_top(char c) noexcept;  // a byte outside strings at depth 1, but for a '"'
  void keep(char c) noexcept;
  void settle() noexcept;

  std::size_t depth_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;  // in a string, after a backslash
  bool object_ = false;   // the value is an object (its members have keys)
  phase phase_ = phase::other;
  std::uint8_t key_matched_ = 0;  // bytes of "id" the key being read matched; 3: it is not "id"
  bool id_key_ = false;           // the member whose value comes next is keyed "id"
  capture capture_ = capture::none;
  std::size_t id_size_ = 0;
  std::array<char, max_id_size> id_{};
};

// JSON's whitespace (RFC 8259), which may stand between the values of a stream.
constexpr bool is_json_whitespace(std::byte b) noexcept {
  const auto c = static_cast<char>(b);
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// Whether `text` is a whole JSON number within a double's range (as 8.2 reads one), or a whole
// JSON string (quotes, escapes, UTF-8): what may be echoed as an id.
bool is_number_text(std::string_view text) noexcept;
bool is_string_text(std::string_view text) noexcept;

// Appends the JSON value `json` to a message that must stay on one line (each JSON-RPC message
// ends with a newline, as Go's encoder writes it): a CR or LF in valid JSON can only be whitespace
// between tokens, since a string holds them escaped, so each becomes a space. A value keeps its
// layout otherwise (a json::raw_value written as its text holds it, pretty-printed or not).
void append_on_one_line(std::vector<std::byte>& out, std::span<const std::byte> json);

}  // namespace detail
}  // namespace json
GEERPC_END_NAMESPACE
