// geerpc: the server-wide counts of requests in flight and of the bytes their arguments hold while
// they wait for a handler, which the server's limits are checked against.
#pragma once

#include <atomic>
#include <cstddef>

#include "../config.hpp"
#include "../detail/assert.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// Written by the request ledgers of every connection, once per request: relaxed atomics, no lock.
class request_counters {
 public:
  // Counts one more request in flight if fewer than `limit` are.
  bool try_acquire_inflight(std::size_t limit) noexcept {
    std::size_t now = inflight_.load(std::memory_order_relaxed);
    do {
      if (now >= limit) return false;
    } while (!inflight_.compare_exchange_weak(now, now + 1, std::memory_order_relaxed));
    return true;
  }
  // Counts one out: released, so that a stopping server that reads 0 sees the request's work done.
  void release_inflight() noexcept {
    const std::size_t before = inflight_.fetch_sub(1, std::memory_order_release);
    GEERPC_ASSERT(before > 0, "server: more requests finished than were admitted");
  }
  std::size_t inflight(std::memory_order order = std::memory_order_seq_cst) const noexcept {
    return inflight_.load(order);
  }

  // Counts `bytes` more of queued arguments if they fit under `limit` (room_for).
  bool try_queue_bytes(std::size_t bytes, std::size_t limit) noexcept {
    std::size_t now = queued_bytes_.load(std::memory_order_relaxed);
    do {
      if (!room_for(now, bytes, limit)) return false;
    } while (!queued_bytes_.compare_exchange_weak(now, now + bytes, std::memory_order_relaxed));
    return true;
  }
  void release_bytes(std::size_t bytes) noexcept {
    const std::size_t before = queued_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    GEERPC_ASSERT(before >= bytes, "server: more request bytes released than were counted");
  }
  std::size_t queued_bytes(std::memory_order order = std::memory_order_seq_cst) const noexcept {
    return queued_bytes_.load(order);
  }

  // Whether `bytes` more fit beside `now` under `limit`; with nothing there, anything fits (a
  // request larger than the limit still runs, alone).
  static bool room_for(std::size_t now, std::size_t bytes, std::size_t limit) noexcept {
    return now == 0 || (now <= limit && bytes <= limit - now);
  }

 private:
  std::atomic<std::size_t> inflight_{0};  // registered on any connection and not finished
  // Beside inflight_, on its cache line: both change once per request.
  std::atomic<std::size_t> queued_bytes_{0};  // held by arguments waiting for a handler
};

}  // namespace detail
GEERPC_END_NAMESPACE
