// geerpc: the threaded server's handler budget: threads.max_handlers, one count for the whole
// server, which its reactors take a unit of for each thread they add and give back as it retires.
#pragma once

#include <atomic>
#include <cstddef>

#include "../../config.hpp"
#include "../../detail/assert.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// threads.max_handlers, shared by a server's reactors: the handler threads they may hold at once.
class handler_budget {
 public:
  explicit handler_budget(std::size_t limit) noexcept : limit_(limit) {}
  handler_budget(const handler_budget&) = delete;
  handler_budget& operator=(const handler_budget&) = delete;

  // Takes one unit, unless all are taken.
  bool try_take() noexcept {
    std::size_t used = used_.load(std::memory_order_relaxed);
    do {
      if (used >= limit_) return false;
    } while (!used_.compare_exchange_weak(used, used + 1, std::memory_order_relaxed));
    return true;
  }
  void give_back() noexcept {
    [[maybe_unused]] const std::size_t before = used_.fetch_sub(1, std::memory_order_relaxed);
    GEERPC_ASSERT(before > 0, "threaded server: a handler thread gave back more budget than it took");
  }
  std::size_t used() const noexcept { return used_.load(std::memory_order_relaxed); }

 private:
  const std::size_t limit_;
  std::atomic<std::size_t> used_{0};
};

}  // namespace detail
GEERPC_END_NAMESPACE
