// The byte-level helpers of the wire format's tests (handshake_test.cpp, wire_frame_test.cpp,
// frame_reader_test.cpp): frames and fields built and read independently of the library's own
// byte_order.hpp, so that a mistake there cannot hide in the tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <geerpc/wire/frame.hpp>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wire_bytes {

using byte_vector = std::vector<std::byte>;
using geerpc::wire::frame_header;
using geerpc::wire::frame_kind;
using geerpc::wire::frame_scan;
using geerpc::wire::frame_view;
using scan_state = geerpc::wire::frame_scan::state;

inline byte_vector bytes_of(std::initializer_list<int> values) {
  byte_vector out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

inline byte_vector slice(std::span<const std::byte> bytes, std::size_t at, std::size_t size) {
  const auto part = bytes.subspan(at, size);
  return byte_vector(part.begin(), part.end());
}

// Little-endian reads written independently of the library's byte_order.hpp.
inline std::uint64_t read_le(std::span<const std::byte> bytes, std::size_t at, std::size_t size) {
  std::uint64_t value = 0;
  for (std::size_t i = size; i > 0; --i) value = (value << 8) | static_cast<std::uint8_t>(bytes[at + i - 1]);
  return value;
}

inline void write_le(std::span<std::byte> bytes, std::size_t at, std::size_t size, std::uint64_t value) {
  for (std::size_t i = 0; i < size; ++i) bytes[at + i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
}

inline std::string text_of(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

inline byte_vector make_frame(const frame_header& header, std::string_view text, const byte_vector& body) {
  byte_vector out;
  const std::size_t start = geerpc::wire::begin_frame(out, header, text);
  out.insert(out.end(), body.begin(), body.end());
  geerpc::wire::finish_frame(out, start);
  return out;
}

inline byte_vector body_of_size(std::size_t size) {
  byte_vector body(size);
  for (std::size_t i = 0; i < size; ++i) body[i] = static_cast<std::byte>(i * 31 + 7);
  return body;
}

// A feed or parse result as text, so that a nullptr (success) compares instead of crashing.
inline std::string outcome(const char* error) { return error == nullptr ? std::string("ok") : std::string(error); }

inline std::string parse_error(std::span<const std::byte> frame) {
  frame_view view;
  const char* error = geerpc::wire::parse_frame(frame, view);
  return error == nullptr ? std::string("parsed") : std::string(error);
}

inline constexpr std::uint64_t seq_pattern = 0x0807060504030201;
inline constexpr std::uint64_t budget_pattern = 0x1817161514131211;

// The frames a connection carries, of several sizes, for the reassembly tests.
inline std::vector<byte_vector> sample_frames() {
  return {
      make_frame({frame_kind::request, 0, 1, 250000}, "Foo.Sum", body_of_size(8)),
      make_frame({frame_kind::cancel, 0, 1, 0}, "", {}),
      make_frame({frame_kind::response, 0, 1, 0}, "", body_of_size(300)),
      make_frame({frame_kind::response, 8, 2, 0}, "remote error: boom", {}),
  };
}

inline byte_vector joined(const std::vector<byte_vector>& frames) {
  byte_vector out;
  for (const auto& frame : frames) out.insert(out.end(), frame.begin(), frame.end());
  return out;
}

}  // namespace wire_bytes
