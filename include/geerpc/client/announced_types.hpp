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

  // The key of calls of `method` with this type fingerprint: FNV-1a (64 bits) over the name, then
  // the fingerprint's bytes. Never 0, which marks an empty slot.
  static std::uint64_t key(std::string_view method, std::uint32_t fingerprint) noexcept {
    constexpr std::uint64_t prime = 1099511628211ull;
    std::uint64_t h = 14695981039346656037ull;
    for (const char c : method) h = (h ^ static_cast<unsigned char>(c)) * prime;
    for (int shift = 0; shift < 32; shift += 8) h = (h ^ ((fingerprint >> shift) & 0xff)) * prime;
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
  std::array<std::atomic<std::uint64_t>, slots> slots_{};
};

}  // namespace detail
GEERPC_END_NAMESPACE
