// geerpc: the memory several writers hold together, as one server counts its peers' queued replies.
#pragma once

#include <atomic>
#include <cstddef>

#include "../config.hpp"
#include "../detail/assert.hpp"

GEERPC_BEGIN_NAMESPACE
namespace net {

// The memory several writers hold together, and the most they have held at once: what an owner of
// many writers (a server) reads to see what its peers cost.
class memory_gauge {
 public:
  void add(std::size_t bytes) noexcept {
    const std::size_t after = now_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    std::size_t seen = peak_.load(std::memory_order_relaxed);
    while (after > seen && !peak_.compare_exchange_weak(seen, after, std::memory_order_relaxed)) {
    }
  }
  void sub(std::size_t bytes) noexcept {
    const std::size_t before = now_.fetch_sub(bytes, std::memory_order_relaxed);
    GEERPC_ASSERT(before >= bytes, "memory_gauge: more taken back than was added");
  }
  std::size_t now(std::memory_order order = std::memory_order_seq_cst) const noexcept { return now_.load(order); }
  std::size_t peak(std::memory_order order = std::memory_order_seq_cst) const noexcept { return peak_.load(order); }

 private:
  std::atomic<std::size_t> now_{0};
  std::atomic<std::size_t> peak_{0};
};

}  // namespace net
GEERPC_END_NAMESPACE
