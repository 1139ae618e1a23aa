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
struct memory_gauge {
  std::atomic<std::size_t> now{0};
  std::atomic<std::size_t> peak{0};

  void add(std::size_t bytes) noexcept {
    const std::size_t after = now.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    std::size_t seen = peak.load(std::memory_order_relaxed);
    while (after > seen && !peak.compare_exchange_weak(seen, after, std::memory_order_relaxed)) {
    }
  }
  void sub(std::size_t bytes) noexcept {
    const std::size_t before = now.fetch_sub(bytes, std::memory_order_relaxed);
    GEERPC_ASSERT(before >= bytes, "memory_gauge: more taken back than was added");
  }
};

}  // namespace net
GEERPC_END_NAMESPACE
