// geerpc: what every connection of one server shares: its handlers, its options, its runtime (the
// scheduler of its deadlines), and the counters its limits are checked against. A server owns one; its engine and
// connections refer to it.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../interceptor.hpp"
#include "../net/memory_gauge.hpp"
#include "../options.hpp"
#include "../runtime.hpp"
#include "connection_view.hpp"
#include "statistics.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class dispatcher;  // server/dispatcher.hpp

// The handler pool as its engine sees it, for the debug page.
struct pool_view {
  std::size_t threads = 0;         // threads that serve (threaded: the pool; blocking: one per connection)
  std::size_t busy = 0;            // of them, inside a handler now
  std::size_t start_failures = 0;  // threads the system would not start
  std::vector<std::size_t> reactor_connections;  // threaded: the open connections of each reactor
};

// What every connection of one server shares, grouped by who writes each field: a field is
// written by its group's owner only, and read by the others.
struct server_context {
  // ---- basic_server, before it serves (constructor, add(), use(), listen()); read-only while
  // it serves.
  const dispatcher* handlers = nullptr;
  server_options options;
  std::uint8_t codec_id = 0;
  std::vector<server_interceptor> interceptors;  // empty: calls skip them
  // What the debug page shows of calls (statistics.hpp): made by listen() when
  // server_options.observability.statistics is on; null when it is off. Its own counters are the observer's.
  std::unique_ptr<server_statistics> stats;
  // server_link::listen(): server_options::runtime, or the default one, held while the server
  // lives; `scheduler` is the runtime's.
  std::shared_ptr<geerpc::runtime> runtime;
  deadline_scheduler* scheduler = nullptr;

  // ---- The engine: its view of its handler pool, while one serves (set and cleared by it).
  pool_view (*pool_probe)(const void* engine) = nullptr;
  const void* pool_engine = nullptr;

  // ---- The request ledgers of the connections (request_ledger.hpp), once per request.
  std::atomic<std::size_t> inflight{0};  // requests registered on any connection and not finished
  // Beside `inflight`, on its cache line: both change once per request.
  std::atomic<std::size_t> queued_request_bytes{0};  // held by arguments waiting for a handler

  // ---- The connections (connection.hpp, wire_session.hpp), and the engines' accept paths for
  // `refused` (a connection closed at once for want of memory).
  std::atomic<std::uint64_t> last_connection_id{0};  // call_context::connection_id()
  std::atomic<std::size_t> refused{0};               // connections refused in the handshake reply
  net::memory_gauge output;                          // held by every connection's writer

  // ---- Graceful shutdown: server_link::shutdown() sets `draining` and waits on `drained` for
  // `inflight` to reach 0; the request that takes it there notifies while `draining` is set. The
  // waiter also looks again every few milliseconds, so no per-request fence is spent closing the
  // race between the two flags.
  std::atomic<bool> draining{false};
  std::mutex drain_mutex;
  std::condition_variable drained;

  // ---- Every connection alive, for the debug page: each adds itself when made and takes itself
  // out when destroyed, under connections_mutex. Lock order: connections_mutex before a
  // connection's own locks; nothing holding a connection's lock takes it.
  mutable std::mutex connections_mutex;
  std::vector<listed_connection*> connections;
  std::condition_variable connections_gone;  // notified when the last connection is destroyed

  // Waits until every connection has been destroyed: the last reference to one may be dropped by
  // a thread that is not the engine's (a timer callback that closed it), after the engine stopped.
  void wait_connections_gone() {
    std::unique_lock lock(connections_mutex);
    connections_gone.wait(lock, [&] { return connections.empty(); });
  }

  // How often wait_drained() looks again, besides the wake-up of the last request finishing: a
  // late look costs a stopping server this long at most, an early one a wake-up.
  static constexpr std::chrono::milliseconds drain_poll{5};

  // Waits until no request is in flight, or `deadline`; true if none is.
  bool wait_drained(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(drain_mutex);
    for (;;) {
      if (inflight.load() == 0) return true;
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return false;
      drained.wait_until(lock, std::min(deadline, now + drain_poll));
    }
  }

  bool try_acquire_inflight() noexcept {
    std::size_t now = inflight.load(std::memory_order_relaxed);
    do {
      if (now >= options.limits.max_inflight) return false;
    } while (!inflight.compare_exchange_weak(now, now + 1, std::memory_order_relaxed));
    return true;
  }

  bool try_queue_bytes(std::size_t bytes) noexcept {
    std::size_t now = queued_request_bytes.load(std::memory_order_relaxed);
    do {
      if (!room_for(now, bytes, options.limits.max_queued_request_bytes)) return false;
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
