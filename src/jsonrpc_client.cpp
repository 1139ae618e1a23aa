// geerpc: the translation of a client of the JSON codec calling Go's net/rpc/jsonrpc server
// (include/geerpc/json/jsonrpc_client.hpp, docs/protocol.md 9.6): request frames to request
// objects, response objects to response frames, with the tape's parse and the stream's scanner.
#include <geerpc/error.hpp>
#include <geerpc/json/decode_status.hpp>
#include <geerpc/json/decode_struct.hpp>
#include <geerpc/json/jsonrpc_client.hpp>
#include <geerpc/json/jsonrpc_stream.hpp>
#include <geerpc/json/tape.hpp>
#include <geerpc/json/writer.hpp>
#include <geerpc/wire/frame.hpp>
#include <geerpc/wire/handshake.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

GEERPC_BEGIN_NAMESPACE
namespace json {
namespace detail {
namespace {

void append(std::vector<std::byte>& out, std::string_view text) {
  const auto bytes = std::as_bytes(std::span(text.data(), text.size()));
  out.insert(out.end(), bytes.begin(), bytes.end());
}

// A response's members, as Go's client reads them (encoding/json: a key names a field whatever its
// ASCII case, json/decode_struct.hpp's field_named); another key is ignored.
enum member : std::size_t { id_member, result_member, error_member, members };
constexpr std::array<std::string_view, members> member_names = {"id", "result", "error"};

// The exact text of the value at `index`, as the server wrote it.
std::span<const std::byte> value_text(const tape& parsed, std::size_t index) {
  const token& t = parsed[index];
  const std::span<const std::byte> text = parsed.text();
  if (opens(t.kind)) return text.subspan(t.offset, parsed[t.end()].offset + 1 - t.offset);
  std::size_t end = t.offset;
  switch (t.kind) {
    case token_kind::null:
      end += 4;
      break;
    case token_kind::boolean:
      end += t.boolean() ? 4 : 5;
      break;
    case token_kind::string:  // past the opening quote; the parse found the closing one
      for (++end; end < text.size() && static_cast<char>(text[end]) != '"';)
        end += static_cast<char>(text[end]) == '\\' ? 2u : 1u;
      end = std::min(end + 1, text.size());
      break;
    default:
      end += parsed.number_text(t).size();
  }
  return text.subspan(t.offset, end - t.offset);
}

// The geerpc status of an error Go's server wrote (net/rpc's server.go words its own): lookup
// failures as geerpc's server reports them, any other text the handler's error.
errc status_of(std::string_view error) noexcept {
  if (error.starts_with("rpc: can't find service ")) return errc::unknown_service;
  if (error.starts_with("rpc: can't find method ")) return errc::unknown_method;
  if (error.starts_with("rpc: service/method request ill-formed: ")) return errc::bad_request;
  return errc::remote_error;
}

// A failure's text is cut to what fits the client's frame limit (`limit`, the length field's value):
// a Go error text may be as long as the response that carried it, which fit the limit, and the
// session's own texts are a few hundred bytes; a frame past the limit would end the connection.
void append_frame(std::vector<std::byte>& frames, std::uint64_t seq, errc status, std::string_view text,
                  std::span<const std::byte> body, std::uint32_t limit) {
  const std::size_t room = limit > wire::header_size + body.size() ? limit - wire::header_size - body.size() : 0;
  text = wire::cut_text(text, room);
  const std::size_t start =
      wire::begin_frame(frames, {wire::frame_kind::response, static_cast<std::uint8_t>(status), seq, 0}, text);
  frames.insert(frames.end(), body.begin(), body.end());
  wire::finish_frame(frames, start);
}

// The id of a response, when it is one this client could have sent: decimal digits, a uint64.
bool read_id(std::string_view text, std::uint64_t& id) noexcept {
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  return ec == std::errc{} && end == text.data() + text.size();
}

std::string printable(std::string_view text) {
  constexpr std::size_t shown = 64;
  std::string out;
  for (const char c : text.substr(0, shown)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  if (text.size() > shown) out += "...";
  return out;
}

}  // namespace

std::string jsonrpc_client_translator::from_client(std::span<const std::byte> bytes, std::vector<std::byte>& text,
                                                   std::vector<std::byte>& to_client) {
  partial_.insert(partial_.end(), bytes.begin(), bytes.end());
  std::size_t at = 0;
  if (!hello_taken_) {
    if (partial_.size() < wire::hello_size) return {};
    wire::hello hello;
    if (const char* bad = wire::parse_hello(std::span(partial_).first<wire::hello_size>(), hello))
      return where_ + ": the client's hello: " + bad;
    // The client's own limit comes back as the server's: Go's server has none, and this bounds
    // what the session holds of a request.
    max_frame_size_ = hello.max_response_size != 0 ? hello.max_response_size : wire::default_max_frame_size;
    wire::encode_hello_reply({true, max_frame_size_, {}, wire::protocol_version}, to_client);
    hello_taken_ = true;
    at = wire::hello_size;
  }
  while (at < partial_.size()) {
    const auto rest = std::span<const std::byte>(partial_).subspan(at);
    const wire::frame_scan scan = wire::scan_frame(rest, max_frame_size_);
    if (scan.what == wire::frame_scan::state::need_more) break;
    if (scan.what != wire::frame_scan::state::complete) return where_ + ": the client wrote a frame of a bad size";
    if (std::string bad = take_frame(rest.first(scan.size), text); !bad.empty()) return bad;
    at += scan.size;
  }
  partial_.erase(partial_.begin(), partial_.begin() + static_cast<std::ptrdiff_t>(at));
  return {};
}

// A request's metadata, deadline budget and type fingerprint have no place in Go's request: they
// are dropped (the deadline stays the client's own).
std::string jsonrpc_client_translator::take_frame(std::span<const std::byte> bytes, std::vector<std::byte>& text) {
  wire::frame_view frame;
  if (const char* bad = wire::parse_frame(bytes, frame)) return where_ + ": the client wrote a bad frame: " + bad;
  if (frame.header.kind == wire::frame_kind::cancel) return {};
  if (frame.header.kind != wire::frame_kind::request)
    return where_ + ": the client wrote a frame that is no request or cancel";
  if (!waiting_.insert(frame.header.seq).second) return where_ + ": the client reused a seq";
  if (waiting_.size() > max_waiting_) forget_oldest();
  append(text, R"({"method":)");
  // A name that is not UTF-8 (the engines check only its length) goes as Go's encoder would write
  // it, each bad byte as U+FFFD: the writer refuses invalid text, and Go answers "can't find method".
  writer(text).string(valid_utf8(frame.text));
  append(text, R"(,"params":)");
  append_on_one_line(text, frame.body);
  append(text, R"(,"id":)");
  append(text, std::to_string(frame.header.seq));
  append(text, "}\n");
  return {};
}

// The engines' seqs increase, so the smallest is the call that waited longest: the likeliest to
// have given up already.
void jsonrpc_client_translator::forget_oldest() noexcept {
  const auto oldest = waiting_.begin();
  // The lowest seq ever forgotten: the threaded engine numbers calls under its lock but hands them
  // to the session outside it, so a lower seq may arrive after a higher one was forgotten.
  forgotten_from_ = forgotten_ == 0 ? *oldest : std::min(forgotten_from_, *oldest);
  forgotten_through_ = std::max(forgotten_through_, *oldest);
  ++forgotten_;
  waiting_.erase(oldest);
}

bool jsonrpc_client_translator::late(std::uint64_t seq) const noexcept {
  return forgotten_ != 0 && seq >= forgotten_from_ && seq <= forgotten_through_ && !waiting_.contains(seq);
}

bool jsonrpc_client_translator::from_server(std::span<const std::byte> bytes, std::vector<std::byte>& frames) {
  std::size_t at = 0;
  while (at < bytes.size() && !broken()) {
    if (!inside_) {
      while (at < bytes.size() && is_json_whitespace(bytes[at])) ++at;
      if (at == bytes.size()) break;
      if (static_cast<char>(bytes[at]) != '{') {
        fail("the server sent something that is no JSON object (byte " + std::to_string(consumed_ + at) + ": '" +
                 printable(std::string_view(reinterpret_cast<const char*>(bytes.data()) + at, 1)) + "')",
             frames);
        break;
      }
      inside_ = true;
      value_start_ = consumed_ + at;
      scanner_.reset();
    }
    const std::size_t from = at;
    at = scanner_.scan(bytes, at);
    const std::span<const std::byte> part = bytes.subspan(from, at - from);
    if (!scanner_.complete()) {
      keep_part(part, frames);
      break;
    }
    inside_ = false;
    if (pending_.size() + part.size() > max_frame_size_) {
      keep_part(part, frames);  // fails
    } else if (pending_.empty()) {
      take_response(part, frames);
    } else {
      pending_.insert(pending_.end(), part.begin(), part.end());
      take_response(pending_, frames);
    }
    pending_.clear();
  }
  consumed_ += bytes.size();
  return !broken();
}

void jsonrpc_client_translator::keep_part(std::span<const std::byte> part, std::vector<std::byte>& frames) {
  if (pending_.size() + part.size() > max_frame_size_) {
    std::vector<std::byte>().swap(pending_);
    return fail("a response longer than " + std::to_string(max_frame_size_) +
                    " bytes (options.limits.max_frame_size), from byte " + std::to_string(value_start_),
                frames);
  }
  pending_.insert(pending_.end(), part.begin(), part.end());
}

void jsonrpc_client_translator::take_response(std::span<const std::byte> text, std::vector<std::byte>& frames) {
  const std::string at = " (the response at byte " + std::to_string(value_start_) + ")";
  tape parsed(text);
  if (const decode_status status = parsed.parse(); !status)
    return fail(
        "a response that is not JSON: " + status.reason + " at byte " + std::to_string(value_start_ + status.offset),
        frames);
  std::array<std::size_t, members> found{};
  const token& top = parsed[0];
  for (std::size_t key = 1; key < top.end();) {
    const token& value = parsed[key + 1];
    if (const std::size_t m = field_named(member_names, parsed.chars(parsed[key])); m < members) {
      if (found[m] != 0)
        return fail("a response with two keys for \"" + std::string(parsed.chars(parsed[key])) + "\"" + at, frames);
      found[m] = key + 1;
    }
    key = opens(value.kind) ? value.end() + 1 : key + 2;
  }
  std::uint64_t seq = 0;
  if (found[id_member] == 0) return fail("a response without an \"id\"" + at, frames);
  const std::span<const std::byte> id = value_text(parsed, found[id_member]);
  const std::string_view id_text(reinterpret_cast<const char*>(id.data()), id.size());
  // A late answer to a forgotten call is passed on: the engine drops it if the call is over.
  if (!read_id(id_text, seq) || !(waiting_.contains(seq) || late(seq)))
    return fail("a response for id " + printable(id_text) + ", which no call waits for (never sent, or answered)" + at,
                frames);
  const std::size_t error = found[error_member];
  if (error != 0 && parsed[error].kind != token_kind::null && parsed[error].kind != token_kind::string)
    return fail("a response whose \"error\" is neither null nor a string" + at, frames);
  waiting_.erase(seq);
  if (error != 0 && parsed[error].kind == token_kind::string) {
    // Go's client reads an empty error so, and so does this.
    const std::string_view message = parsed.chars(parsed[error]);
    const std::string_view said = message.empty() ? std::string_view("unspecified error") : message;
    append_frame(frames, seq, status_of(said), said, {}, max_frame_size_);
    return;
  }
  // No error: the result, whatever it is. A null (Go's client takes it for a failure without a
  // reason, golang/go#19588) is decoded as the caller's result type reads a null.
  static constexpr std::string_view null_text = "null";
  const std::span<const std::byte> body = found[result_member] != 0
                                              ? value_text(parsed, found[result_member])
                                              : std::as_bytes(std::span(null_text.data(), null_text.size()));
  if (wire::header_size + body.size() > max_frame_size_)
    return fail("a result of " + std::to_string(body.size()) + " bytes, past options.limits.max_frame_size (" +
                    std::to_string(max_frame_size_) + ")" + at,
                frames);
  append_frame(frames, seq, errc{}, {}, body, max_frame_size_);
}

void jsonrpc_client_translator::fail(std::string_view what, std::vector<std::byte>& frames) {
  why_ = where_ + ": " + std::string(what);
  for (const std::uint64_t seq : waiting_) append_frame(frames, seq, errc::protocol_error, why_, {}, max_frame_size_);
  waiting_.clear();
}

}  // namespace detail
}  // namespace json
GEERPC_END_NAMESPACE
