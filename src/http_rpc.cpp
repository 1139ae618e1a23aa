// geerpc: JSON-RPC 2.0 over HTTP (include/geerpc/json/http_rpc.hpp, docs/protocol.md section 11):
// the translator's work, compiled once in geerpc::json with the tape's parse it uses.
#include <geerpc/json/codec.hpp>
#include <geerpc/json/decode_status.hpp>
#include <geerpc/json/http_rpc.hpp>
#include <geerpc/json/jsonrpc_stream.hpp>
#include <geerpc/json/tape.hpp>
#include <geerpc/json/writer.hpp>
#include <geerpc/server/statistics.hpp>
#include <geerpc/wire/frame.hpp>
#include <geerpc/wire/http.hpp>

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

std::unique_ptr<detail::frame_translator> json_codec::make_http_rpc_translator(const detail::http_rpc_terms& terms) {
  return std::make_unique<json::detail::http_rpc_translator>(terms);
}

namespace json {
namespace detail {
namespace {

constexpr std::string_view no_id = "null";

// Why a call cannot be made, as its error entry says it.
struct refusal {
  int code = 0;
  std::string message;
};

// The exact text of a string or number token, as the peer wrote it (an id is echoed verbatim).
std::string_view written_text(const tape& parsed, const token& t) {
  const auto text = std::string_view(reinterpret_cast<const char*>(parsed.text().data()), parsed.text().size());
  if (t.kind != token_kind::string) return parsed.number_text(t);
  std::size_t end = t.offset + 1;  // past the opening quote; the parse found the closing one
  while (end < text.size() && text[end] != '"') end += text[end] == '\\' ? 2u : 1u;
  return text.substr(t.offset, std::min(end + 1, text.size()) - t.offset);
}

bool is_number(token_kind kind) noexcept {
  return kind == token_kind::int64 || kind == token_kind::uint64 || kind == token_kind::floating;
}

// The members of a request object at `object` (the tape index of its '{'), by the index of their
// values (0: absent). JSON-RPC 2.0 names them exactly: other keys are ignored. A duplicate is a refusal.
enum member : std::size_t { version_member, method_member, params_member, id_member, members };
std::string find_members(const tape& parsed, std::size_t object, std::array<std::size_t, members>& found) {
  static constexpr std::array<std::string_view, members> names = {"jsonrpc", "method", "params", "id"};
  for (std::size_t key = object + 1; key < parsed[object].end();) {
    const token& value = parsed[key + 1];
    const std::string_view name = parsed.chars(parsed[key]);
    if (const auto m = std::find(names.begin(), names.end(), name); m != names.end()) {
      std::size_t& slot = found[static_cast<std::size_t>(m - names.begin())];
      if (slot != 0) return "duplicate member " + quoted(name);
      slot = key + 1;
    }
    key = opens(value.kind) ? value.end() + 1 : key + 2;
  }
  return {};
}

std::string invalid(std::string_view why) { return "invalid request: " + std::string(why); }

// A request object's id: its text, "" when it has none (a notification). A kind JSON-RPC 2.0 does
// not allow refuses the call, under the null id.
bool read_id(const tape& parsed, std::size_t at, std::string& id, refusal& why) {
  if (at == 0) return true;
  const token& t = parsed[at];
  if (t.kind == token_kind::null)
    id = no_id;
  else if (t.kind == token_kind::string || is_number(t.kind))
    id = written_text(parsed, t);
  else {
    id = no_id;
    why = {rpc_code::invalid_request, invalid("\"id\" is a string, a number or null")};
    return false;
  }
  return true;
}

// `text` as a JSON string (quoted, escaped), appended to `out`.
void append_json_string(std::string_view text, std::string& out) {
  std::vector<std::byte> quoted;
  writer(quoted).string(text);
  out.append(reinterpret_cast<const char*>(quoted.data()), quoted.size());
}

}  // namespace

int rpc_code_of(errc code) noexcept {
  switch (code) {
    case errc::unknown_service:
    case errc::unknown_method:
      return rpc_code::method_not_found;
    case errc::bad_request:
    case errc::type_mismatch:
      return rpc_code::invalid_params;
    case errc::remote_error:
      return rpc_code::handler_error;
    case errc::deadline_exceeded:
    case errc::handle_timeout:
    case errc::canceled:
      return rpc_code::out_of_time;
    case errc::busy:
    case errc::going_away:
    case errc::aborted:
      return rpc_code::not_run;
    case errc::unauthenticated:
    case errc::permission_denied:
      return rpc_code::refused;
    default:
      return rpc_code::internal_error;
  }
}

void append_rpc_error(std::string_view id, int code, std::string_view message, errc reason, std::string& out) {
  out.append(R"({"jsonrpc":"2.0","error":{"code":)");
  out.append(std::to_string(code));
  out.append(R"(,"message":)");
  append_json_string(valid_utf8(message), out);
  out.append(R"(,"data":{"errc":)");
  append_json_string(geerpc::detail::errc_name(static_cast<std::uint8_t>(reason)), out);
  out.append(R"(}},"id":)");
  out.append(id);
  out.push_back('}');
}

http_rpc_translator::intake http_rpc_translator::inbound(std::span<const std::byte> bytes,
                                                         std::vector<std::byte>& frames,
                                                         std::vector<std::byte>& replies) {
  intake result;
  if (complete_) return result;  // bytes after the body: not read
  // Not reserved for the announced length: a peer gets memory by sending bytes, as for a frame.
  const std::size_t take = std::min(bytes.size(), terms_.content_length - body_.size());
  body_.insert(body_.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(take));
  if (body_.size() < terms_.content_length) return result;
  complete_ = true;
  take_body(frames);
  if (unanswered_ == 0) {  // no call became a frame: the answer is ready now
    answer(replies);
    result.outcome = verdict::broken;  // its last words: sent, then the connection closes
  }
  std::vector<std::byte>().swap(body_);  // the frames hold what the calls need
  return result;
}

void http_rpc_translator::take_body(std::vector<std::byte>& frames) {
  tape parsed(body_);
  if (const decode_status status = parsed.parse(); !status) {
    calls_.push_back({std::string(no_id), {}, false});
    append_rpc_error(no_id, rpc_code::parse_error, "parse error: " + status.message(), errc::bad_request,
                     calls_.back().entry);
    return;
  }
  std::vector<std::size_t> objects;  // the tape index of each call's value
  if (parsed[0].kind == token_kind::array_begin) {
    if (parsed[0].count() > terms_.max_calls) {  // refused whole, before anything is kept of its calls
      calls_.push_back({std::string(no_id), {}, false});
      append_rpc_error(no_id, rpc_code::invalid_request,
                       "invalid request: a batch of " + std::to_string(parsed[0].count()) +
                           " calls, more than the server's max_inflight_per_connection (" +
                           std::to_string(terms_.max_calls) + ")",
                       errc::bad_request, calls_.back().entry);
      return;
    }
    batch_ = parsed[0].count() != 0;  // an empty batch is answered with one error object
    for (std::size_t at = 1; at < parsed[0].end(); at = opens(parsed[at].kind) ? parsed[at].end() + 1 : at + 1)
      objects.push_back(at);
    if (objects.empty()) objects.push_back(0);
  } else {
    objects.push_back(0);
  }
  calls_.reserve(objects.size());
  for (const std::size_t at : objects) {
    calls_.emplace_back();
    refusal why;
    std::string_view method;
    std::span<const std::byte> params;
    std::array<std::size_t, members> found{};
    call& c = calls_.back();
    c.id = no_id;
    if (at == 0 && batch_ == false && parsed[0].kind == token_kind::array_begin)
      why = {rpc_code::invalid_request, invalid("an empty batch")};
    else if (parsed[at].kind != token_kind::object_begin)
      why = {rpc_code::invalid_request, invalid("a request is a JSON object")};
    else if (std::string duplicate = find_members(parsed, at, found); !duplicate.empty())
      why = {rpc_code::invalid_request, invalid(duplicate)};
    else if (read_id(parsed, found[id_member], c.id, why)) {
      c.notification = found[id_member] == 0;
      const std::size_t version = found[version_member], name = found[method_member], list = found[params_member];
      if (version == 0 || parsed[version].kind != token_kind::string || parsed.chars(parsed[version]) != "2.0")
        why = {rpc_code::invalid_request, invalid("\"jsonrpc\" must be \"2.0\"")};
      else if (name == 0 || parsed[name].kind != token_kind::string)
        why = {rpc_code::invalid_request, invalid("\"method\" is a string")};
      else if ((method = parsed.chars(parsed[name])).size() > wire::max_text_size)
        why = {rpc_code::invalid_request, invalid("\"method\" of more than 65535 bytes")};
      else if (list != 0 && parsed[list].kind == token_kind::object_begin)
        why = {rpc_code::invalid_params,
               "invalid params: by name (an object) they are not taken: pass the method's arguments in an array, "
               "in order"};
      else if (list != 0 && parsed[list].kind != token_kind::array_begin)
        why = {rpc_code::invalid_request, invalid("\"params\" is an array")};
      else if (list != 0) {
        const token& open = parsed[list];
        params = parsed.text().subspan(open.offset, parsed[open.end()].offset + 1 - open.offset);
      }
      if (why.code == 0 &&
          wire::header_size + method.size() + std::max<std::size_t>(params.size(), 2) > terms_.max_frame_size)
        why = {rpc_code::invalid_request, invalid("a call larger than the server's max_frame_size")};
    }
    if (why.code != 0) {
      // A refused call is answered even without an id: JSON-RPC 2.0 answers an invalid request.
      c.notification = false;
      append_rpc_error(c.id, why.code, why.message, errc::bad_request, c.entry);
      continue;
    }
    call_of_seq_.push_back(calls_.size() - 1);
    add_frame(method, params, frames);
  }
}

void http_rpc_translator::add_frame(std::string_view method, std::span<const std::byte> params,
                                    std::vector<std::byte>& frames) {
  static constexpr std::string_view none = "[]";
  const std::uint64_t seq = call_of_seq_.size();  // 1, 2, ...: the index of its call, plus one
  const std::size_t start = wire::begin_frame(frames, {wire::frame_kind::request, 0, seq, terms_.budget_us}, method);
  const auto body = params.empty() ? std::as_bytes(std::span(none.data(), none.size())) : params;
  frames.insert(frames.end(), body.begin(), body.end());
  wire::finish_frame(frames, start);
  ++unanswered_;
}

void http_rpc_translator::outbound(std::span<const std::byte> bytes, std::vector<std::byte>& text) {
  wire::frame_view frame;
  if (wire::parse_frame(bytes, frame) != nullptr || frame.header.kind != wire::frame_kind::response) return;
  if (frame.header.seq == 0 || frame.header.seq > call_of_seq_.size()) return;
  std::lock_guard lock(mutex_);
  call& c = calls_[call_of_seq_[frame.header.seq - 1]];
  if (!c.entry.empty() || unanswered_ == 0) return;  // answered already: exactly one response each
  if (c.notification) {
    c.entry.push_back(' ');  // answered: no entry in the answer
  } else if (frame.header.status != 0) {
    const auto code = static_cast<errc>(frame.header.status);
    append_rpc_error(c.id, rpc_code_of(code), frame.text, code, c.entry);
  } else if (answer_bytes_ + frame.body.size() > terms_.max_answer_bytes) {
    // The answer is held whole until its last call: its results together stay under the
    // connection's bound on output (max_pending_output); one that would pass it is refused.
    append_rpc_error(c.id, rpc_code::internal_error,
                     "rpc server: the answer would pass the server's max_pending_output (" +
                         std::to_string(terms_.max_answer_bytes) + " bytes) with this result",
                     errc::remote_error, c.entry);
  } else {
    c.entry.append(R"({"jsonrpc":"2.0","result":)");
    if (frame.body.empty())
      c.entry += "null";  // a void result
    else
      c.entry.append(reinterpret_cast<const char*>(frame.body.data()), frame.body.size());
    c.entry += R"(,"id":)";
    c.entry += c.id;
    c.entry += '}';
  }
  answer_bytes_ += c.entry.size();
  if (--unanswered_ == 0) answer(text);
}

void http_rpc_translator::answer(std::vector<std::byte>& out) {
  std::string body;
  body.reserve(answer_bytes_ + calls_.size() + 2);
  std::size_t entries = 0;
  for (call& c : calls_) {
    if (c.notification) continue;
    body += entries++ == 0 ? (batch_ ? "[" : "") : ",";
    body += c.entry;
    std::string().swap(c.entry);  // its memory goes as soon as the body holds it
  }
  if (batch_ && entries != 0) body += ']';
  const std::string head = entries == 0
                               ? "HTTP/1.0 204 No Content\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
                               : wire::http::response(200, "OK", "application/json", body, {}, true);
  out.reserve(out.size() + head.size() + (entries == 0 ? 0 : body.size()));
  const auto head_bytes = std::as_bytes(std::span(head));
  out.insert(out.end(), head_bytes.begin(), head_bytes.end());
  if (entries == 0) return;
  const auto body_bytes = std::as_bytes(std::span(body));
  out.insert(out.end(), body_bytes.begin(), body_bytes.end());
}

}  // namespace detail
}  // namespace json
GEERPC_END_NAMESPACE
