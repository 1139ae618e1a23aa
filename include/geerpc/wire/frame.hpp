// geerpc: the frames that follow the handshake (docs/protocol.md, "Frames"): a 4-byte length, a
// 20-byte header, a text (the method name of a request, the error of a response) and a body.
// Pure functions over bytes: no I/O, so they can be fuzzed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../detail/byte_order.hpp"

GEERPC_BEGIN_NAMESPACE
namespace wire {

// goaway: server to client, "I am shutting down: send no more requests" (docs/protocol.md 4.9).
enum class frame_kind : std::uint8_t { request = 1, response = 2, cancel = 3, goaway = 4 };

inline constexpr std::size_t length_prefix_size = 4;
inline constexpr std::size_t header_size = 20;  // after the length prefix
inline constexpr std::size_t frame_overhead = length_prefix_size + header_size;
inline constexpr std::size_t max_text_size = 0xffff;
inline constexpr std::uint32_t default_max_frame_size = 4u << 20;  // the length field's value: header + text + body

// A request's flags (its header's status byte, docs/protocol.md 4.1): what follows its text.
namespace request_flag {
inline constexpr std::uint8_t fingerprint = 0x01;  // a u32 type fingerprint, before the body
inline constexpr std::uint8_t metadata = 0x02;     // a metadata block (wire/metadata.hpp), before the body
// The call's schema (codec/schema.hpp): a u16 size and its text, after the fingerprint, which it needs.
inline constexpr std::uint8_t schema = 0x04;
inline constexpr std::uint8_t known = fingerprint | metadata | schema;
}  // namespace request_flag
inline constexpr std::size_t fingerprint_size = 4;
inline constexpr std::size_t schema_size_field = 2;
inline constexpr std::size_t max_schema_size = 0xffff;

struct frame_header {
  frame_kind kind = frame_kind::request;
  std::uint8_t status = 0;      // responses: 0 = ok, otherwise a geerpc::errc value; requests: flags
  std::uint64_t seq = 0;        // chosen by the client, echoed by the server
  std::uint64_t budget_us = 0;  // requests: the caller's remaining time, 0 = no deadline
};

// Byte offsets inside a frame, counted from the first byte of the length prefix.
namespace offset {
inline constexpr std::size_t length = 0;
inline constexpr std::size_t kind = 4;
inline constexpr std::size_t status = 5;
inline constexpr std::size_t text_size = 6;
inline constexpr std::size_t seq = 8;
inline constexpr std::size_t budget = 16;
inline constexpr std::size_t text = 24;
}  // namespace offset

// `text`, or its first `limit` bytes when longer, cut back to the start of a UTF-8 sequence (at
// most 3 bytes back), so that a cut message that was valid UTF-8 stays so.
inline std::string_view cut_text(std::string_view text, std::size_t limit) noexcept {
  if (text.size() <= limit) return text;
  std::size_t end = limit;
  for (int back = 0; back < 3 && end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0u) == 0x80u; ++back) --end;
  return text.substr(0, end);
}

// Appends the prefix, header and text of a frame whose body the caller appends next, and a
// request's type fingerprint when it has one (and its flag set); then finish_frame() fills in the
// length. Returns where the frame starts in `out`.
inline std::size_t begin_frame(std::vector<std::byte>& out, const frame_header& h, std::string_view text,
                               std::uint32_t fingerprint = 0) {
  using geerpc::detail::store_le;
  text = cut_text(text, max_text_size);
  const std::size_t at = out.size();
  const std::size_t extra = fingerprint != 0 ? fingerprint_size : 0;
  out.resize(at + frame_overhead + text.size() + extra);
  std::byte* p = out.data() + at;
  store_le<std::uint32_t>(p + offset::length, 0);
  p[offset::kind] = std::byte{static_cast<std::uint8_t>(h.kind)};
  p[offset::status] = std::byte{h.status};
  store_le<std::uint16_t>(p + offset::text_size, static_cast<std::uint16_t>(text.size()));
  store_le<std::uint64_t>(p + offset::seq, h.seq);
  store_le<std::uint64_t>(p + offset::budget, h.budget_us);
  for (std::size_t i = 0; i < text.size(); ++i) p[offset::text + i] = static_cast<std::byte>(text[i]);
  if (fingerprint != 0) store_le<std::uint32_t>(p + offset::text + text.size(), fingerprint);
  return at;
}

// Appends a request's schema block (its flag set by the caller, after the fingerprint): the text's
// size and the text, which must fit in max_schema_size.
inline void append_schema(std::vector<std::byte>& out, std::string_view text) {
  const std::size_t at = out.size();
  out.resize(at + schema_size_field + text.size());
  geerpc::detail::store_le<std::uint16_t>(out.data() + at, static_cast<std::uint16_t>(text.size()));
  for (std::size_t i = 0; i < text.size(); ++i) out[at + schema_size_field + i] = static_cast<std::byte>(text[i]);
}

// Writes the length of the frame that starts at `frame_start` and runs to the end of `out`.
inline void finish_frame(std::vector<std::byte>& out, std::size_t frame_start) noexcept {
  const std::size_t length = out.size() - frame_start - length_prefix_size;
  geerpc::detail::store_le<std::uint32_t>(out.data() + frame_start, static_cast<std::uint32_t>(length));
}

// The size a frame with this text and body takes on the wire, prefix included.
constexpr std::size_t frame_size(std::size_t text_size, std::size_t body_size) noexcept {
  return frame_overhead + text_size + body_size;
}

// What the front of a byte stream holds.
struct frame_scan {
  enum class state { need_more, complete, too_large, too_small } what = state::need_more;
  std::size_t size = 0;  // complete: the whole frame's size, prefix included; need_more: bytes wanted in all
};

// Looks only at the length prefix, so a peer's claimed size is judged before anything is allocated.
inline frame_scan scan_frame(std::span<const std::byte> buffered, std::uint32_t max_frame_size) noexcept {
  if (buffered.size() < length_prefix_size) return {frame_scan::state::need_more, length_prefix_size};
  const std::uint32_t length = geerpc::detail::load_le<std::uint32_t>(buffered.data());
  if (length < header_size) return {frame_scan::state::too_small, 0};
  if (length > max_frame_size) return {frame_scan::state::too_large, 0};
  const std::size_t whole = length_prefix_size + std::size_t{length};
  if (buffered.size() < whole) return {frame_scan::state::need_more, whole};
  return {frame_scan::state::complete, whole};
}

struct frame_view {
  frame_header header;
  std::string_view text;
  std::span<const std::byte> body;
  std::uint32_t fingerprint = 0;  // requests: the call's type fingerprint, 0 = none sent
  std::string_view schema;        // requests: the call's schema, empty when none was sent
  // Requests: the metadata block after its size field (version byte first; checked by
  // wire::check_metadata, not here), empty when none was sent. It ends where `body` begins.
  std::span<const std::byte> metadata;
  bool has_metadata = false;
};

// Splits one complete frame (as delimited by scan_frame) into header, text and body, and checks the
// rules every frame kind must keep. Returns nullptr, or why the frame is malformed.
inline const char* parse_frame(std::span<const std::byte> frame, frame_view& out) noexcept {
  using geerpc::detail::load_le;
  if (frame.size() < frame_overhead) return "frame shorter than its header";
  if (load_le<std::uint32_t>(frame.data()) != frame.size() - length_prefix_size) return "frame length mismatch";
  const auto kind = static_cast<std::uint8_t>(frame[offset::kind]);
  if (kind < 1 || kind > 4) return "unknown frame kind";
  out.header.kind = static_cast<frame_kind>(kind);
  out.header.status = static_cast<std::uint8_t>(frame[offset::status]);
  out.header.seq = load_le<std::uint64_t>(frame.data() + offset::seq);
  out.header.budget_us = load_le<std::uint64_t>(frame.data() + offset::budget);
  const std::size_t text_size = load_le<std::uint16_t>(frame.data() + offset::text_size);
  if (text_size > frame.size() - frame_overhead) return "text size exceeds the frame";
  out.text = std::string_view(reinterpret_cast<const char*>(frame.data() + offset::text), text_size);
  out.body = frame.subspan(offset::text + text_size);
  switch (out.header.kind) {
    case frame_kind::request:
      if ((out.header.status & ~request_flag::known) != 0) return "request with unknown flags";
      if ((out.header.status & request_flag::fingerprint) != 0) {
        if (out.body.size() < fingerprint_size) return "request fingerprint exceeds the frame";
        out.fingerprint = load_le<std::uint32_t>(out.body.data());
        if (out.fingerprint == 0) return "request with a zero fingerprint";
        out.body = out.body.subspan(fingerprint_size);
      }
      if ((out.header.status & request_flag::schema) != 0) {
        if ((out.header.status & request_flag::fingerprint) == 0) return "request schema without a fingerprint";
        if (out.body.size() < schema_size_field) return "request schema exceeds the frame";
        const std::size_t size = load_le<std::uint16_t>(out.body.data());
        if (size == 0 || size > out.body.size() - schema_size_field) return "request schema exceeds the frame";
        out.schema = std::string_view(reinterpret_cast<const char*>(out.body.data() + schema_size_field), size);
        out.body = out.body.subspan(schema_size_field + size);
      }
      if ((out.header.status & request_flag::metadata) != 0) {
        if (out.body.size() < 4) return "request metadata exceeds the frame";
        const std::uint32_t size = load_le<std::uint32_t>(out.body.data());
        if (size > out.body.size() - 4) return "request metadata exceeds the frame";
        out.metadata = out.body.subspan(4, size);
        out.has_metadata = true;
        out.body = out.body.subspan(4 + std::size_t{size});
      }
      break;
    case frame_kind::response:
      if (out.header.budget_us != 0) return "response with a deadline budget";
      if (out.header.status != 0 && !out.body.empty()) return "error response with a body";
      if (out.header.status == 0 && text_size != 0) return "successful response with an error text";
      break;
    case frame_kind::cancel:
      if (out.header.status != 0 || out.header.budget_us != 0 || text_size != 0 || !out.body.empty())
        return "cancel frame with a payload";
      break;
    case frame_kind::goaway:  // its text says why; nothing else
      if (out.header.status != 0 || out.header.seq != 0 || out.header.budget_us != 0 || !out.body.empty())
        return "goaway frame with a payload";
      break;
  }
  return nullptr;
}

}  // namespace wire
GEERPC_END_NAMESPACE
