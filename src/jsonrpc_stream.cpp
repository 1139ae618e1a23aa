// geerpc: JSON-RPC 1.0 streams (include/geerpc/json/jsonrpc_stream.hpp, docs/protocol.md section
// 9): the translator's work, compiled once in geerpc::json with the tape's parse it uses.
#include <geerpc/json/codec.hpp>
#include <geerpc/json/decode_status.hpp>
#include <geerpc/json/decode_struct.hpp>
#include <geerpc/json/jsonrpc_scanner.hpp>
#include <geerpc/json/jsonrpc_stream.hpp>
#include <geerpc/json/tape.hpp>
#include <geerpc/json/writer.hpp>
#include <geerpc/wire/frame.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

GEERPC_BEGIN_NAMESPACE

std::unique_ptr<detail::frame_translator> json_codec::make_frame_translator(
    const detail::frame_translator_terms& terms) {
  return std::make_unique<json::detail::jsonrpc_stream>(terms.max_frame_size);
}

namespace json {
namespace detail {
namespace {

// A buffer that held a message larger than this is given back once the message is taken.
constexpr std::size_t kept_pending = std::size_t{64} << 10;

void append(std::vector<std::byte>& out, std::string_view text) {
  const auto bytes = std::as_bytes(std::span(text.data(), text.size()));
  out.insert(out.end(), bytes.begin(), bytes.end());
}

std::string bad_request(std::string_view reason, std::uint64_t at) {
  std::string out = "rpc server: bad request: ";
  out += reason;
  out += " at byte ";
  out += std::to_string(at);
  return out;
}

// Which member of a request a key names: Go's encoding/json matches a key to a field ignoring ASCII
// case, and so does this (json/decode_struct.hpp's field_named); another key is ignored.
enum member : std::size_t { method_member, params_member, id_member, members };
constexpr std::array<std::string_view, members> member_names = {"method", "params", "id"};

// The exact text of a value that is no array or object, as the peer wrote it.
std::string_view scalar_text(const tape& parsed, const token& t) {
  const auto text = std::string_view(reinterpret_cast<const char*>(parsed.text().data()), parsed.text().size());
  switch (t.kind) {
    case token_kind::null:
      return "null";
    case token_kind::boolean:
      return t.boolean() ? "true" : "false";
    case token_kind::string: {
      std::size_t end = t.offset + 1;  // past the opening quote; the parse found the closing one
      while (end < text.size() && text[end] != '"') end += text[end] == '\\' ? 2u : 1u;
      return text.substr(t.offset, std::min(end + 1, text.size()) - t.offset);
    }
    default:
      return parsed.number_text(t);
  }
}

// The members of a request object, by where their values are in the tape (0: absent). Returns an
// empty reason, or why the object is no request and `at` (its byte in the text).
std::string find_members(const tape& parsed, std::array<std::size_t, members>& found, std::size_t& at) {
  const token& top = parsed[0];
  for (std::size_t key = 1; key < top.end();) {
    const token& value = parsed[key + 1];
    if (const std::size_t m = field_named(member_names, parsed.chars(parsed[key])); m < members) {
      if (found[m] != 0) {
        at = parsed[key].offset;
        return "duplicate key " + quoted(parsed.chars(parsed[key]));
      }
      found[m] = key + 1;
    }
    key = opens(value.kind) ? value.end() + 1 : key + 2;
  }
  return {};
}

// Reads a request's id, the value `t`, as its text.
std::string read_id(const tape& parsed, const token& t, jsonrpc_request& out) {
  if (opens(t.kind)) return "\"id\" is an array or an object (a string, number, boolean or null is echoed)";
  const std::string_view text = scalar_text(parsed, t);
  if (text.size() > jsonrpc_stream::max_id_size)
    return "\"id\" of " + std::to_string(text.size()) + " bytes (at most " +
           std::to_string(jsonrpc_stream::max_id_size) + ")";
  out.id = text;
  return {};
}

// Reads a parsed request object: its method, its params' text and its id's. Returns an empty
// reason, or why it is no request and `at` (its byte in the text); the id is read first, so that
// the error answering the rest can carry it.
std::string read_request(const tape& parsed, jsonrpc_request& out, std::size_t& at) {
  at = 0;
  if (parsed[0].kind != token_kind::object_begin) return "a request is a JSON object";
  std::array<std::size_t, members> found{};
  if (std::string reason = find_members(parsed, found, at); !reason.empty()) return reason;
  if (const std::size_t id = found[id_member]; id != 0) {
    at = parsed[id].offset;
    if (std::string reason = read_id(parsed, parsed[id], out); !reason.empty()) return reason;
  }
  const std::size_t method = found[method_member], params = found[params_member];
  at = 0;  // the object's opening bracket
  if (method == 0) return "no \"method\"";
  if (params == 0) return "no \"params\"";
  at = parsed[method].offset;
  if (parsed[method].kind != token_kind::string) return "\"method\" is not a string";
  out.method = parsed.chars(parsed[method]);
  if (out.method.size() > wire::max_text_size)
    return "\"method\" of " + std::to_string(out.method.size()) + " bytes (at most 65535)";
  const token& list = parsed[params];
  at = list.offset;
  if (list.kind != token_kind::array_begin) return "\"params\" is not an array";
  out.params = parsed.text().subspan(list.offset, parsed[list.end()].offset + 1 - list.offset);
  return {};
}

}  // namespace

std::string valid_utf8(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = bytes[at] < 0x80 ? 1 : utf8_sequence_length(bytes + at, text.size() - at);
    if (length == 0) {
      out += "\xef\xbf\xbd";
      ++at;
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  return out;
}

void append_error_response(std::string_view id, std::string_view message, std::vector<std::byte>& out) {
  append(out, R"({"id":)");
  append(out, id);
  append(out, R"(,"result":null,"error":)");
  writer(out).string(valid_utf8(message));
  append(out, "}\n");
}

jsonrpc_stream::intake jsonrpc_stream::inbound(std::span<const std::byte> bytes, std::vector<std::byte>& frames,
                                               std::vector<std::byte>& replies) {
  intake result;
  std::size_t at = 0;
  while (at < bytes.size()) {
    if (!inside_) {
      while (at < bytes.size() && is_json_whitespace(bytes[at])) ++at;
      if (at == bytes.size()) break;
      const auto first = static_cast<char>(bytes[at]);
      if (first != '{' && first != '[') {
        // No value the scanner can delimit begins here: where the next message starts is unknown.
        append_error_response("null", bad_request("expected a JSON object ('{')", consumed_ + at), replies);
        result.outcome = verdict::broken;
        return result;
      }
      inside_ = true;
      value_start_ = consumed_ + at;
      scanner_.reset();
    }
    const std::size_t from = at;
    at = scanner_.scan(bytes, at);
    const std::span<const std::byte> part = bytes.subspan(from, at - from);
    if (!scanner_.complete()) {
      keep_part(part);
      break;
    }
    inside_ = false;
    if (skipping_ || pending_.size() + part.size() > max_message_size_) {
      refuse_too_large(replies);
      ++result.too_large;
    } else if (pending_.empty()) {
      take_message(part, value_start_, frames, replies);
    } else {
      pending_.insert(pending_.end(), part.begin(), part.end());
      take_message(pending_, value_start_, frames, replies);
    }
    pending_.clear();
    if (pending_.capacity() > kept_pending) std::vector<std::byte>().swap(pending_);
  }
  consumed_ += bytes.size();
  return result;
}

void jsonrpc_stream::keep_part(std::span<const std::byte> part) {
  if (skipping_) return;
  if (pending_.size() + part.size() > max_message_size_) {
    skipping_ = true;  // the scanner goes on to the value's end; its bytes are not needed
    std::vector<std::byte>().swap(pending_);
    return;
  }
  pending_.insert(pending_.end(), part.begin(), part.end());
}

void jsonrpc_stream::refuse_too_large(std::vector<std::byte>& replies) {
  skipping_ = false;
  const std::string_view id = scanner_.id();
  const std::string reason = "a message longer than " + std::to_string(max_message_size_) + " bytes";
  append_error_response(id.empty() ? "null" : id, bad_request(reason, value_start_), replies);
}

void jsonrpc_stream::take_message(std::span<const std::byte> text, std::uint64_t start, std::vector<std::byte>& frames,
                                  std::vector<std::byte>& replies) {
  tape parsed(text);
  if (const decode_status status = parsed.parse(); !status) {
    // The value ended where the scanner said: the stream is in step, only this message is lost.
    const std::string_view id = scanner_.id();
    append_error_response(id.empty() ? "null" : id, bad_request(status.reason, start + status.offset), replies);
    return;
  }
  jsonrpc_request request;
  std::size_t at = 0;
  if (const std::string reason = read_request(parsed, request, at); !reason.empty())
    append_error_response(request.id, bad_request(reason, start + at), replies);
  else
    add_frame(request, frames);
}

void jsonrpc_stream::add_frame(const jsonrpc_request& request, std::vector<std::byte>& frames) {
  const std::uint64_t seq = next_seq_++;
  {
    std::lock_guard lock(ids_mutex_);
    ids_.emplace(seq, std::string(request.id));
  }
  const std::size_t start = wire::begin_frame(frames, {wire::frame_kind::request, 0, seq, 0}, request.method);
  frames.insert(frames.end(), request.params.begin(), request.params.end());
  wire::finish_frame(frames, start);
}

void jsonrpc_stream::outbound(std::span<const std::byte> bytes, std::vector<std::byte>& text) {
  wire::frame_view frame;
  if (wire::parse_frame(bytes, frame) != nullptr || frame.header.kind != wire::frame_kind::response) return;
  std::string id;
  {
    std::lock_guard lock(ids_mutex_);
    const auto it = ids_.find(frame.header.seq);
    if (it == ids_.end()) return;
    id = std::move(it->second);
    ids_.erase(it);
  }
  if (frame.header.status != 0) return append_error_response(id, frame.text, text);
  append(text, R"({"id":)");
  append(text, id);
  append(text, R"(,"result":)");
  // A void result has no body. Go's client takes `null` for a failure without a reason ("invalid
  // error <nil>"), and reads `{}` into any struct its caller passed: an empty object.
  if (frame.body.empty())
    append(text, "{}");
  else
    append_on_one_line(text, frame.body);
  append(text, ",\"error\":null}\n");
}

std::size_t jsonrpc_stream::ids_held() const {
  std::lock_guard lock(ids_mutex_);
  return ids_.size();
}

}  // namespace detail
}  // namespace json
GEERPC_END_NAMESPACE
