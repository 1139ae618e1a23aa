// geerpc: what every connection of one server shares: its frozen configuration (handlers, options,
// runtime), the counters its limits are checked against, the drain gate of a graceful shutdown and
// the registry of its connections. A server owns one; its engine and connections refer to it.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../config.hpp"
#include "../net/memory_gauge.hpp"
#include "concurrency_limit.hpp"
#include "connection_registry.hpp"
#include "drain_gate.hpp"
#include "request_counters.hpp"
#include "server_config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// The handler pool as its engine sees it, for the debug page.
struct pool_view {
  std::size_t threads = 0;         // threads that serve (threaded: the pool; blocking: one per connection)
  std::size_t busy = 0;            // of them, inside a handler now
  std::size_t start_failures = 0;  // threads the system would not start
  std::vector<std::size_t> reactor_connections;  // threaded: the open connections of each reactor
  std::size_t budget_refusals = 0;               // threaded: starts refused because threads.max_handlers were all taken
};

// The engine's view of its handler pool: attached by the engine while it serves, read by the
// debug page.
class pool_probe {
 public:
  using read_fn = pool_view (*)(const void* engine);

  void attach(read_fn reader, const void* engine) noexcept {
    read_ = reader;
    engine_ = engine;
  }
  void detach() noexcept { attach(nullptr, nullptr); }
  bool attached() const noexcept { return read_ != nullptr; }
  pool_view read() const { return read_ != nullptr ? read_(engine_) : pool_view{}; }

 private:
  read_fn read_ = nullptr;
  const void* engine_ = nullptr;
};

// A count that only grows, written by any thread (relaxed).
class event_counter {
 public:
  void add() noexcept { count_.fetch_add(1, std::memory_order_relaxed); }
  std::size_t count() const noexcept { return count_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::size_t> count_{0};
};

// The ids call_context::connection_id() shows: 1, 2, 3... in the order connections are made.
class connection_ids {
 public:
  std::uint64_t next() noexcept { return last_.fetch_add(1, std::memory_order_relaxed) + 1; }

 private:
  std::atomic<std::uint64_t> last_{0};
};

// The parts, each with its own state and its own rules; no part's state is written from outside
// its class.
struct server_context {
  server_config config;             // basic_server's, before it serves
  request_counters requests;        // the request ledgers', once per request
  drain_gate drain;                 // server_link::shutdown()'s, and the request that finishes last
  connection_registry connections;  // each connection's, when made and destroyed
  pool_probe pool;                  // the engine's, while it serves
  connection_ids ids;               // each connection's, when made
  event_counter refused;            // connections refused in the handshake reply, or for want of memory
  net::memory_gauge output;         // held by every connection's writer
  concurrency_limit adaptive;       // configured as it listens; sampled by the request ledgers when on

  // The in-flight limit now: max_inflight, or, with limits.adaptive_concurrency on, the adaptive
  // limit when it is lower (one more relaxed load).
  std::size_t inflight_limit() const noexcept {
    const std::size_t max = config.options().limits.max_inflight;
    return adaptive.enabled() ? std::min(max, adaptive.limit()) : max;
  }
  // The per-request check of queued bytes, against the configured limit (the ledger checks
  // inflight_limit()).
  bool try_queue_bytes(std::size_t bytes) noexcept {
    return requests.try_queue_bytes(bytes, config.options().limits.max_queued_request_bytes);
  }

  // A request's count given back, last: a stop() waiting for it (a responder's request finishes on
  // any thread) may free the context as soon as it reads 0.
  void finish_request() {
    drain.finish([this] { requests.release_inflight(); });
  }

  // Waits until no request is in flight, or `deadline`; true if none is.
  bool wait_drained(std::chrono::steady_clock::time_point deadline) {
    return drain.wait_drained(deadline, [this] { return requests.inflight() == 0; });
  }

  // A graceful shutdown's drain: waits until no request is in flight and no connection's writer
  // holds bytes (a reply that waits for its socket to drain, or one held for a batch), or
  // `deadline`; true if so. A request is counted out once its reply is handed to its writer, and
  // the close that follows the drain would cut what the socket has not taken. The count is read
  // first: once it reads 0, every reply was handed over before (the count's release), so its bytes
  // are on the gauge or sent. The drain gate looks again every poll for the bytes to leave.
  // (stop() waits for the count alone: it closes every connection first, which drops their bytes.)
  bool wait_drained_and_sent(std::chrono::steady_clock::time_point deadline) {
    return drain.wait_drained(
        deadline, [this] { return requests.inflight() == 0 && output.now(std::memory_order_relaxed) == 0; });
  }
};

}  // namespace detail
GEERPC_END_NAMESPACE
