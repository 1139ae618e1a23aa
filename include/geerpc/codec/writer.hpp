// geerpc: the binary codec's writer, which appends encoded bytes (little-endian fixed-size numbers,
// LEB128 varints, blocks) to a caller-owned buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "../config.hpp"
#include "../detail/byte_order.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

// Appends encoded bytes to a caller-owned buffer, so buffers can be reused across calls.
class writer {
 public:
  explicit writer(std::vector<std::byte>& out) noexcept : out_(out) {}

  static constexpr std::size_t small_write = 8;

  // A string or block is appended by insert, not resize and copy: a resize would first zero-fill
  // the bytes the copy then overwrites, a second pass over every string and byte array encoded. A
  // few bytes (a number, a count) go one by one: push_back's inline path is a store while the
  // buffer has room, where insert and resize are calls that cost more than the bytes.
  void raw(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const std::byte*>(data);
    if (size <= small_write) {
      for (std::size_t i = 0; i < size; ++i) out_.push_back(bytes[i]);
      return;
    }
    out_.insert(out_.end(), bytes, bytes + size);
  }
  template <class U>
  void fixed(U value) {
    std::byte bytes[sizeof(U)];
    geerpc::detail::store_le(bytes, value);
    for (const std::byte b : bytes) out_.push_back(b);
  }
  void varint(std::uint64_t value) {
    std::byte bytes[10];
    std::size_t n = 0;
    while (value >= 0x80) {
      bytes[n++] = static_cast<std::byte>((value & 0x7f) | 0x80);
      value >>= 7;
    }
    bytes[n++] = static_cast<std::byte>(value);
    raw(bytes, n);
  }

  // A byte length before the bytes that follow it (an aggregate's, docs/protocol.md 5.1):
  // begin_length() reserves its first byte and returns where; end_length() writes the varint of
  // what was appended since, moving those bytes up when it takes more than one byte (a body of 128
  // bytes or more, so the move costs less than encoding them did).
  std::size_t begin_length() {
    out_.push_back(std::byte{0});
    return out_.size() - 1;
  }
  void end_length(std::size_t at) {
    std::uint64_t body = out_.size() - at - 1;
    if (body < 0x80) {
      out_[at] = static_cast<std::byte>(body);
      return;
    }
    std::byte bytes[10];
    std::size_t n = 0;
    while (body >= 0x80) {
      bytes[n++] = static_cast<std::byte>((body & 0x7f) | 0x80);
      body >>= 7;
    }
    bytes[n++] = static_cast<std::byte>(body);
    out_.insert(out_.begin() + static_cast<std::ptrdiff_t>(at) + 1, n - 1, std::byte{0});
    for (std::size_t i = 0; i < n; ++i) out_[at + i] = bytes[i];
  }

  // The bytes in the buffer so far (the caller's included): what an encoder's checks measure.
  std::size_t size() const noexcept { return out_.size(); }

 private:
  std::vector<std::byte>& out_;
};

}  // namespace codec
GEERPC_END_NAMESPACE
