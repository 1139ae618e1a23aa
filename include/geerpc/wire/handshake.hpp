// geerpc: the handshake that opens every connection (docs/protocol.md, "Handshake"). The client
// sends a fixed 20-byte hello; the server answers accept, or reject with a reason, in 12 bytes plus
// the reason. Pure functions over bytes: no I/O, so they can be fuzzed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../detail/byte_order.hpp"

GEERPC_BEGIN_NAMESPACE
namespace wire {

inline constexpr std::uint32_t magic = 0x3bef5c;  // GeeRPC's MagicNumber
// 2: a struct carries its byte length, so that it may gain fields (docs/protocol.md 5.1). A peer of
// another version is refused in the handshake with both versions named, never misread.
inline constexpr std::uint8_t protocol_version = 2;
inline constexpr std::size_t hello_size = 20;
inline constexpr std::size_t hello_reply_header_size = 12;
inline constexpr std::size_t max_reject_reason = 1024;

struct hello {
  std::uint8_t version = protocol_version;
  std::uint8_t codec_id = 0;
  std::uint64_t handle_timeout_us = 0;  // 0: no limit
  // The largest response frame (its length field) the client reads: the server answers a larger
  // reply with an error instead of sending it, so one big reply fails one call, not the connection.
  std::uint32_t max_response_size = 0;
};

inline void encode_hello(const hello& h, std::span<std::byte, hello_size> out) noexcept {
  using geerpc::detail::store_le;
  store_le<std::uint32_t>(out.data(), magic);
  out[4] = std::byte{h.version};
  out[5] = std::byte{h.codec_id};
  store_le<std::uint16_t>(out.data() + 6, 0);  // flags: none defined yet
  store_le<std::uint64_t>(out.data() + 8, h.handle_timeout_us);
  store_le<std::uint32_t>(out.data() + 16, h.max_response_size);
}

// Checks the parts every version must agree on; whether the version and codec are supported is the
// server's decision. Returns nullptr, or why the bytes are not a hello.
inline const char* parse_hello(std::span<const std::byte, hello_size> in, hello& out) noexcept {
  using geerpc::detail::load_le;
  if (load_le<std::uint32_t>(in.data()) != magic) return "invalid magic number";
  if (load_le<std::uint16_t>(in.data() + 6) != 0) return "unknown handshake flags";
  out.version = static_cast<std::uint8_t>(in[4]);
  out.codec_id = static_cast<std::uint8_t>(in[5]);
  out.handle_timeout_us = load_le<std::uint64_t>(in.data() + 8);
  out.max_response_size = load_le<std::uint32_t>(in.data() + 16);
  return nullptr;
}

struct hello_reply {
  bool accepted = false;
  std::uint32_t max_frame_size = 0;         // the largest request frame the server takes (0 on reject)
  std::string reason;                       // why it rejected; empty on accept
  std::uint8_t version = protocol_version;  // the server's: a server of another version rejects
};

inline void encode_hello_reply(const hello_reply& r, std::vector<std::byte>& out) {
  using geerpc::detail::store_le;
  const std::string_view reason = std::string_view(r.reason).substr(0, max_reject_reason);
  const std::size_t at = out.size();
  out.resize(at + hello_reply_header_size + reason.size());
  std::byte* p = out.data() + at;
  store_le<std::uint32_t>(p, magic);
  p[4] = std::byte{r.version};
  p[5] = std::byte{static_cast<std::uint8_t>(r.accepted ? 0 : 1)};
  store_le<std::uint16_t>(p + 6, static_cast<std::uint16_t>(reason.size()));
  store_le<std::uint32_t>(p + 8, r.max_frame_size);
  for (std::size_t i = 0; i < reason.size(); ++i) p[hello_reply_header_size + i] = static_cast<std::byte>(reason[i]);
}

// Parses the fixed part of the reply; `reason_size` bytes of reason follow it. Returns nullptr, or
// why the bytes are not a reply. A rejection from a server of another version parses (its layout
// is every version's), so that the client can name both versions.
inline const char* parse_hello_reply_header(std::span<const std::byte, hello_reply_header_size> in, hello_reply& out,
                                            std::size_t& reason_size) noexcept {
  using geerpc::detail::load_le;
  if (load_le<std::uint32_t>(in.data()) != magic) return "invalid magic number in the handshake reply";
  const auto status = static_cast<std::uint8_t>(in[5]);
  if (status > 1) return "unknown handshake reply status";
  reason_size = load_le<std::uint16_t>(in.data() + 6);
  if (reason_size > max_reject_reason) return "handshake reject reason too long";
  out.version = static_cast<std::uint8_t>(in[4]);
  if (out.version != protocol_version && status == 0) return "unsupported protocol version in the handshake reply";
  out.accepted = status == 0;
  out.max_frame_size = load_le<std::uint32_t>(in.data() + 8);
  return nullptr;
}

}  // namespace wire
GEERPC_END_NAMESPACE
