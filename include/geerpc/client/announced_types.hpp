// geerpc: the methods and call types a client connection's server has taken, so that the client
// sends a call's schema (codec/schema.hpp) with its calls of a method with those types until one
// has succeeded, and none after (docs/protocol.md 4.1): a server whose handler's fingerprint
// differs decides once from the schema and remembers that, for that method, for the connection.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "../config.hpp"
#include "../detail/byte_order.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// A fixed table of keys (a method's name and a fingerprint, hashed), open addressing: a lookup is a
// load or a few, on every call that has a fingerprint; an insert, after a call's first success,
// one compare-and-swap. Relaxed: a key found only says that the server has already answered a call
// that carried the schema, which the reply itself ordered; the table publishes nothing else. A key
// that finds no slot (a client calling more than `slots` methods on one connection) keeps sending
// its schema: a few dozen bytes per call more, never a wrong answer. Two keys alike by chance (one
// in 2^64) would cost a call without its schema a type_mismatch, never a wrong decode.
class announced_types {
 public:
  static constexpr std::size_t slots = 64;
  static constexpr std::size_t probes = 8;

  // The key of calls of `method` with this type fingerprint, never 0 (an empty slot): the name
  // taken 8 bytes at a time, the last 8 overlapping the word before when the length is not a
  // multiple of 8 (a name under 8 bytes byte by byte), each mixed in by a multiply and a shift, and
  // the length. It runs on every call, so it costs a few instructions a word, not a byte (a
  // byte-wise FNV-1a took about 60 of a W1 call's 2,200 on the client).
  static std::uint64_t key(std::string_view method, std::uint32_t fingerprint) noexcept {
    const auto* name = reinterpret_cast<const std::byte*>(method.data());
    const std::size_t size = method.size();
    // The length and the fingerprint side by side, not xored: 0x1235 with 10 bytes is not 0x1234 with 11.
    std::uint64_t h = mix(0, (std::uint64_t{static_cast<std::uint32_t>(size)} << 32) | fingerprint);
    if (size < 8) {
      std::uint64_t word = 0;
      for (std::size_t i = 0; i < size; ++i) word |= std::uint64_t{std::to_integer<unsigned char>(name[i])} << (8 * i);
      h = mix(h, word);
    } else {
      for (std::size_t i = 0; i + 8 < size; i += 8) h = mix(h, load_le<std::uint64_t>(name + i));
      h = mix(h, load_le<std::uint64_t>(name + size - 8));
    }
    return h == 0 ? 1 : h;
  }

  bool contains(std::uint64_t key) const noexcept {
    for (std::size_t i = 0; i < probes; ++i) {
      const std::uint64_t held = slots_[(key + i) % slots].load(std::memory_order_relaxed);
      if (held == key) return true;
      if (held == 0) return false;
    }
    return false;
  }

  void insert(std::uint64_t key) noexcept {
    for (std::size_t i = 0; i < probes; ++i) {
      std::uint64_t held = 0;
      std::atomic<std::uint64_t>& slot = slots_[(key + i) % slots];
      if (slot.compare_exchange_strong(held, key, std::memory_order_relaxed) || held == key) return;
    }
  }

 private:
  static std::uint64_t mix(std::uint64_t h, std::uint64_t word) noexcept {
    h = (h ^ word) * 0x9e3779b97f4a7c15ull;  // 2^64 over the golden ratio: odd, bits well spread
    return h ^ (h >> 32);
  }

  std::array<std::atomic<std::uint64_t>, slots> slots_{};
};

}  // namespace detail
GEERPC_END_NAMESPACE
