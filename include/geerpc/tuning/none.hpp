// geerpc: the tuning seam. The threaded transport's engines are the plain, correct core; every
// performance heuristic reaches them only through the hooks named here, which a tuning policy
// provides: `geerpc::basic_threaded<Tuning>`. tuning::none is the reference: each hook does the
// plain thing (or nothing) and compiles to nothing, so basic_threaded<tuning::none> is the core
// alone. tuning::automatic (automatic.hpp), the default, fills the hooks with the heuristics of
// this folder, one file each.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>

#include "../config.hpp"
#include "../net/frame_writer.hpp"
#include "../scheduler/deadline_scheduler.hpp"
#include "settings.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {
struct server_request;    // server/request_ledger.hpp
class server_connection;  // server/connection.hpp
}  // namespace detail

namespace tuning {

// What a client engine hands its hooks: its writer, the scheduler, the user's knobs, its runtime's
// CPU budget and count of waiting callers, and how to fail every call when a send the hooks made broke the connection.
struct client_setup {
  net::frame_writer& writer;
  detail::deadline_scheduler& scheduler;
  const settings& knobs;
  unsigned runtime_cpus;
  std::atomic<int>& waiting_callers;  // the runtime's (reply_wait)
  void (*broken)(void* engine);
  void* engine;
};

// What a server engine hands its hooks: the scheduler, how many pool threads there may be at most
// (each has an index below that), the user's knobs, its runtime's CPU budget, and the engine's look for a leader, which
// a watchdog may call: with the pool locked it asks leader_overdue() and wakes a thread to lead when told to; it
// returns whether the I/O is unled while a handler runs.
struct server_setup {
  detail::deadline_scheduler& scheduler;
  std::size_t thread_slots;
  const settings& knobs;
  unsigned runtime_cpus;
  bool (*look_for_leader)(void* engine);
  void* engine;
};

struct none {
  // A threaded client's hooks, in the order a call meets them.
  class client_hooks {
   public:
    explicit client_hooks(const client_setup& setup) noexcept : writer_(setup.writer) {}

    // A synchronous caller begins a call: whether its request may wait for others (batching).
    bool caller_may_hold(std::chrono::steady_clock::time_point) noexcept { return false; }
    // Sends a request, or holds it to go out with others.
    net::frame_writer::status send_request(std::span<const std::byte> frame, bool) { return writer_.write(frame); }

    // Whether a lone synchronous caller reads its own reply (own_reply.hpp) instead of waiting
    // for the receiving thread to hand it over; with `false` the receiving thread always watches
    // the socket, and the watch hooks below are never called.
    static constexpr bool callers_read = false;
    bool call_added(bool, bool& wake_receiver) noexcept { return wake_receiver = false; }
    bool caller_done(bool) noexcept { return false; }
    void receiver_read(bool) noexcept {}
    bool receiver_watches() const noexcept { return true; }

    // How a synchronous caller waits: `waiting()` lives while it waits; a spin before sleeping
    // (spin.hpp) polls `done` for a moment.
    struct wait {
      bool may_spin() const noexcept { return false; }
      template <class Done>
      bool spin_until(Done&& done) const {
        return done();
      }
    };
    wait waiting() const noexcept { return {}; }

    // A reader is about to hand out what one recv brought, and is done with it (batching).
    void reader_arrives() noexcept {}
    void reader_leaves() noexcept {}
    // A call is about to be completed; `synchronous`: its caller will send again soon (batching).
    void call_completing(bool) noexcept {}
    // A synchronous caller returns from its call (batching).
    void caller_returns() noexcept {}

    // The engine is closing: no hook runs on its own after this.
    void stop() noexcept {}

   private:
    net::frame_writer& writer_;
  };

  // A threaded server's hooks, in the order a round of the pool meets them.
  class server_hooks {
   public:
    explicit server_hooks(const server_setup&) noexcept {}

    // Each pool thread's own state, made when the thread starts, with its index.
    struct thread_state {};
    thread_state thread_begins(std::size_t) noexcept { return {}; }

    // With the pool locked: a thread begins to lead; a thread begins to run a request; whether
    // it may run it without making sure another thread leads the I/O (unled_runs.hpp); the
    // watchdog's look, with whether the I/O is unled now: whether a thread must be woken to lead.
    void lead_round_began() noexcept {}
    void run_began() noexcept {}
    bool may_run_unled() const noexcept { return false; }
    bool leader_overdue(bool) noexcept { return false; }
    void found_blocked() noexcept {}

    // Without the lock, around a run that left the I/O unled: whether it blocked.
    struct run_probe {};
    run_probe unled_run_begins(thread_state&) noexcept { return {}; }
    static bool blocked(const run_probe&) noexcept { return false; }

    // Replies held while the same thread runs the next request of the same connection
    // (reply_holds.hpp): whether to hold this request's reply (`next_same`: the next queued
    // request is of the same connection); the connection whose replies this thread holds, or
    // null; send them.
    bool hold_reply(thread_state&, const detail::server_request&, bool) noexcept { return false; }
    const detail::server_connection* held(const thread_state&) const noexcept { return nullptr; }
    void release(thread_state&) {}

    // Every pool thread has ended: no hook runs on its own after this.
    void stop() noexcept {}
  };
};

}  // namespace tuning
GEERPC_END_NAMESPACE
