// geerpc: what every connection of one server shares: its handlers, its options, the scheduler of
// its deadlines, and the counters its limits are checked against. A server owns one; its engine and
// connections refer to it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "../config.hpp"
#include "../interceptor.hpp"
#include "../net/memory_gauge.hpp"
#include "../options.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class dispatcher;          // server/dispatcher.hpp
class deadline_scheduler;  // scheduler/deadline_scheduler.hpp

// What every connection of one server shares.
struct server_context {
  const dispatcher* handlers = nullptr;
  server_options options;
  std::uint8_t codec_id = 0;
  std::shared_ptr<deadline_scheduler> scheduler;
  std::vector<server_interceptor> interceptors;      // set before serving; empty: calls skip them
  std::atomic<std::uint64_t> last_connection_id{0};  // call_context::connection_id()
  std::atomic<std::size_t> inflight{0};              // requests registered on any connection and not finished
  // Beside `inflight`, on its cache line: both change once per request.
  std::atomic<std::size_t> queued_request_bytes{0};  // held by arguments waiting for a handler
  std::atomic<std::size_t> refused{0};               // connections refused in the handshake reply
  net::memory_gauge output;                          // held by every connection's writer

  bool try_acquire_inflight() noexcept {
    std::size_t now = inflight.load(std::memory_order_relaxed);
    do {
      if (now >= options.max_inflight) return false;
    } while (!inflight.compare_exchange_weak(now, now + 1, std::memory_order_relaxed));
    return true;
  }

  bool try_queue_bytes(std::size_t bytes) noexcept {
    std::size_t now = queued_request_bytes.load(std::memory_order_relaxed);
    do {
      if (!room_for(now, bytes, options.max_queued_request_bytes)) return false;
    } while (!queued_request_bytes.compare_exchange_weak(now, now + bytes, std::memory_order_relaxed));
    return true;
  }

  // Whether `bytes` more fit beside `now` under `limit`; with nothing there, anything fits.
  static bool room_for(std::size_t now, std::size_t bytes, std::size_t limit) noexcept {
    return now == 0 || (now <= limit && bytes <= limit - now);
  }
};

}  // namespace detail
GEERPC_END_NAMESPACE
