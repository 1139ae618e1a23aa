// geerpc: the binary codec's reader, which reads a value's bytes from a span, checking every read
// against the end of the input and every allocation against the decode's memory budget.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>

#include "../config.hpp"
#include "../detail/assert.hpp"
#include "../detail/byte_order.hpp"
#include "../detail/integer_cast.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

// The memory a decode may allocate, unless its caller sets another limit: 16 bytes for each byte of
// input, plus 64 KiB (docs/protocol.md, 5.6). A value costs more in memory than on the wire: an
// empty string or vector is one byte there but 24 or 32 here, a map entry carries a node of 16 to
// 32 bytes besides its key and value, and an empty optional<array<char, 4096>> in a vector is one
// byte that costs 4097. Ordinary values cost 1x (bytes, numbers, long strings) to about 12x (maps
// with short keys, lists of short words) their encoding; 16x lets them through while refusing bulk
// empties, the shape of an attack, whose cost would otherwise have no bound but the count check's
// (a 64 KiB body took about 480 MiB). The 64 KiB lets a small body through whatever its shape.
inline constexpr std::size_t memory_per_input_byte = 16;
inline constexpr std::size_t memory_base = std::size_t{64} << 10;

constexpr std::size_t default_memory_limit(std::size_t input_size) noexcept {
  constexpr std::size_t most = std::numeric_limits<std::size_t>::max();
  return input_size > (most - memory_base) / memory_per_input_byte ? most
                                                                   : input_size * memory_per_input_byte + memory_base;
}

// The reason a decode fails when the value would pass its memory limit. decode_status::message()
// gives the numbers.
inline constexpr char memory_limit_reason[] = "decoded value would need more memory than its limit";

// Reads from a span; the first failure records why and where (the first byte of the value that
// could not be decoded), and every later read fails too, so a decoder can run on and check once.
// It also keeps the decode's memory budget: what the decoder may still allocate.
class reader {
 public:
  explicit reader(std::span<const std::byte> in) noexcept : reader(in, default_memory_limit(in.size())) {}
  reader(std::span<const std::byte> in, std::size_t memory_limit) noexcept
      : begin_(in.data()),
        pos_(in.data()),
        end_(in.data() + in.size()),
        memory_left_(memory_limit),
        memory_limit_(memory_limit) {}

  std::size_t remaining() const noexcept { return static_cast<std::size_t>(end_ - pos_); }
  bool ok() const noexcept { return error_ == nullptr; }
  const char* error() const noexcept { return error_; }
  std::size_t error_offset() const noexcept { return error_offset_; }
  std::size_t memory_limit() const noexcept { return memory_limit_; }
  std::size_t memory_left() const noexcept { return memory_left_; }

  bool fail(const char* why) noexcept { return fail_at(why, pos_); }
  // Fails naming `at`, the first byte of the value found bad.
  bool fail_at(const char* why, const std::byte* at) noexcept {
    if (error_ == nullptr) {
      error_ = why;
      error_offset_ = static_cast<std::size_t>(at - begin_);
    }
    GEERPC_ASSERT(at >= begin_ && at <= end_, "a decode failure names a byte outside its input");
    pos_ = end_;
    return false;
  }
  const std::byte* position() const noexcept { return pos_; }
  bool raw(void* out, std::size_t size) noexcept {
    if (size > remaining()) return fail("truncated input");
    if (size != 0) std::memcpy(out, pos_, size);
    pos_ += size;
    GEERPC_ASSERT(pos_ <= end_, "the reader went past the end of its input");
    return true;
  }
  // A view of the next `size` bytes, consumed.
  const std::byte* take(std::size_t size) noexcept {
    if (size > remaining()) {
      fail("truncated input");
      return nullptr;
    }
    const std::byte* at = pos_;
    pos_ += size;
    GEERPC_ASSERT(pos_ <= end_, "the reader went past the end of its input");
    return at;
  }
  template <class U>
  bool fixed(U& value) noexcept {
    const std::byte* at = take(sizeof(U));
    if (at == nullptr) return false;
    value = geerpc::detail::load_le<U>(at);
    return true;
  }
  bool varint(std::uint64_t& value) noexcept {
    const std::byte* start = pos_;
    value = 0;
    for (unsigned shift = 0;; shift += 7) {
      if (pos_ == end_) return fail_at("truncated varint", start);
      const auto byte = static_cast<std::uint8_t>(*pos_++);
      // The 10th byte holds bit 63 only: anything more is an overflow (or an 11th byte).
      if (shift == 63 && byte > 1) return fail_at("varint overflows 64 bits", start);
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
  }
  // A count of elements that each take at least `min_element_size` bytes: refused when the rest of
  // the input could not hold that many, so no peer can claim more elements than it sent.
  bool count(std::size_t& n, std::size_t min_element_size) noexcept {
    const std::byte* start = pos_;
    std::uint64_t value = 0;
    if (!varint(value)) return false;
    if (value > remaining() / min_element_size) return fail_at("element count exceeds the remaining bytes", start);
    n = geerpc::detail::integer_cast<std::size_t>(value);
    return true;
  }

  // Reads a byte length (an aggregate's) and ends the input there until widen(): returns the end
  // to restore, or nullptr after a failure (a length past the input).
  const std::byte* narrow_to_length() noexcept {
    std::size_t size = 0;
    if (!count(size, 1)) return nullptr;
    const std::byte* outer = end_;
    end_ = pos_ + size;
    return outer;
  }
  // Skips what is left before the narrowed end (fields this reader does not know) and restores the
  // end `outer`; after a failure the reader stays at its end, so every later read fails too.
  void widen(const std::byte* outer) noexcept {
    GEERPC_ASSERT(outer >= end_, "widened to an end before the narrowed one");
    pos_ = ok() ? end_ : outer;
    end_ = outer;
  }

  // Charges `bytes` the decoder is about to allocate for the value starting at `at`; fails naming
  // `at` when the budget cannot pay. A subtraction and a compare: this runs on every allocation.
  bool charge(std::size_t bytes, const std::byte* at) noexcept {
    if (bytes > memory_left_) return fail_at(memory_limit_reason, at);
    memory_left_ -= bytes;
    GEERPC_ASSERT(memory_left_ <= memory_limit_, "a decode was charged more memory than its limit");
    return true;
  }
  // Charges `n` elements of `size` bytes each (size > 0), without overflowing the product.
  bool charge(std::size_t n, std::size_t size, const std::byte* at) noexcept {
    GEERPC_ASSERT(size != 0, "memory charged per element of size 0");
    if (n > memory_left_ / size) return fail_at(memory_limit_reason, at);
    memory_left_ -= n * size;
    GEERPC_ASSERT(memory_left_ <= memory_limit_, "a decode was charged more memory than its limit");
    return true;
  }

 private:
  const std::byte* begin_;
  const std::byte* pos_;
  const std::byte* end_;
  const char* error_ = nullptr;
  std::size_t error_offset_ = 0;
  std::size_t memory_left_;
  std::size_t memory_limit_;
};

}  // namespace codec
GEERPC_END_NAMESPACE
