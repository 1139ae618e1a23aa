// geerpc: the tuning seam. The threaded transport's engines are the plain, correct core; every
// performance heuristic reaches them only through the strategies named here, each a type that a
// tuning policy provides for `geerpc::basic_threaded<Tuning>` and that decides one thing:
//
//   client_send    how a client's requests are sent: at once, or held to leave with others
//   client_wait    how a client's caller awaits its reply: who reads the socket, and whether the
//                  caller spins before it sleeps
//   server_hooks   how the server schedules reads and handlers, and when it holds replies
//
// tuning::none is the reference: each strategy does the plain thing (or nothing) and compiles to
// nothing, so basic_threaded<tuning::none> is the core alone. tuning::automatic (automatic.hpp),
// the default, fills them with the heuristics of this folder, one file each. The numbers each one
// reads are listed in docs/transports.md ("Settings and constants").
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../net/frame_writer.hpp"
#include "../scheduler/deadline_scheduler.hpp"
#include "settings.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {
struct server_request;    // server/request_ledger.hpp
class server_connection;  // server/connection.hpp
}  // namespace detail

namespace tuning {

// What a client engine hands its two strategies: its writer, the scheduler, the user's knobs, its
// runtime's CPU budget and count of waiting callers, and how to fail every call when a send the
// strategy made broke the connection.
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
  // How requests are sent (request_batching.hpp is the heuristic): each request goes out at once.
  // The engine calls it as a call meets it: caller_begins() and send() as the call starts,
  // caller_due() as it completes, caller_returns() as its caller returns; and a reader holds a
  // reader_turn while it hands out what one recv brought.
  class client_send {
   public:
    using clock = std::chrono::steady_clock;
    explicit client_send(const client_setup& setup) noexcept : writer_(setup.writer) {}

    // A synchronous caller begins a call at `now` (its runtime's clock): whether its request may
    // wait for others.
    bool caller_begins(clock::time_point) noexcept { return false; }
    // Sends a request, or, with `may_hold`, may hold it to go out with others.
    net::frame_writer::status send(std::span<const std::byte> frame, bool) { return writer_.write(frame); }
    // Threads that will send soon. A synchronous caller whose call is completing (woken, it sends
    // its next request) is due until it returns from its call at `now`.
    void caller_due() noexcept {}
    void caller_returns(clock::time_point) noexcept {}
    // A reader is due while it hands out what one recv brought (it completes calls whose callers
    // send): for as long as the turn lives.
    struct reader_turn {};
    reader_turn reading() noexcept { return {}; }
    // The engine is closing: nothing runs on its own after this.
    void stop() noexcept {}

   private:
    net::frame_writer& writer_;
  };

  // How a reply is awaited (own_reply.hpp and spin.hpp are the heuristics): the receiving thread
  // always reads the socket and hands each reply over; a caller sleeps at once.
  class client_wait {
   public:
    explicit client_wait(const client_setup&) noexcept {}

    // Whether a lone synchronous caller may read its own reply instead of waiting for the
    // receiving thread to hand it over. With `false` the receiving thread always watches the
    // socket, and the engine compiles none of the four functions below.
    static constexpr bool callers_read = false;
    // Who watches the socket, changed under the client's lock on its pending table. A call was
    // added: whether its caller (`may_read`) watches; sets `wake_receiver` when the receiving
    // thread must be woken to watch instead.
    bool call_added(bool, bool& wake_receiver) noexcept { return wake_receiver = false; }
    // The watching caller is done: whether the receiving thread must be woken to take over.
    bool caller_done(bool) noexcept { return false; }
    // The receiving thread read, and calls are pending or not.
    void receiver_read(bool) noexcept {}
    // Whether the receiving thread waits for replies now (otherwise only for the connection's end).
    bool receiver_watches() const noexcept { return true; }

    // How a synchronous caller waits: the waiter lives while it waits; a spin before sleeping
    // polls `done` for a moment.
    struct waiter {
      static constexpr bool may_spin() noexcept { return false; }
      template <class Done>
      bool spin_until(Done&& done) const {
        return done();
      }
    };
    waiter waiting() const noexcept { return {}; }
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
