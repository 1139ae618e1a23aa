// geerpc: a small, fast source of random indices (splitmix64), for choosing among a few servers.
// <random> (std::random_device, std::minstd_rand, std::uniform_int_distribution) costs every
// translation unit that includes geerpc.hpp about a tenth of a second of compile time at -O0 for
// the one line that picks a server; this needs neither its quality nor its portability guarantees.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../config.hpp"
#include "chrono.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class random_index {
 public:
  // Seeded from the clock and this object's address: two sets made at once in one process, or in
  // two processes (address space layout randomisation), draw different sequences.
  random_index() noexcept
      : state_(static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
               (std::uint64_t{reinterpret_cast<std::uintptr_t>(this)} << 16)) {}

  // A number in [0, count), count > 0; the modulo's bias is below count / 2^64.
  std::size_t below(std::size_t count) noexcept { return next() % count; }

 private:
  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  std::uint64_t state_;
};

}  // namespace detail
GEERPC_END_NAMESPACE
