// geerpc: the tuning seam. The engines are the plain, correct core; every performance heuristic
// reaches them only through the strategies named here, each a type that a tuning policy provides
// for `geerpc::basic_threaded<Tuning>` and `geerpc::basic_blocking<Tuning>` (whose client reads
// client_wait's waiter and client_send's overtake_limit; its server has no heuristic) and that
// decides one thing:
//
//   client_send    how a client's requests are sent: at once, or held to leave with others
//   client_wait    how a client's caller awaits its reply: who reads the socket, and whether the
//                  caller spins before it sleeps
//   server_schedule  how the threaded server schedules reads and handlers (whether a handler may
//                    run while nobody leads the I/O) and when its replies leave (held or at once)
//   pool_grow        how a reactor's handler pool grows above its core size
//
// tuning::none is the reference: each strategy does the plain thing (or nothing), holds no state
// and compiles to nothing, so basic_threaded<tuning::none> and basic_blocking<tuning::none> are
// the core alone. tuning::automatic (automatic.hpp),
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

// What the blocking client hands its client_wait, having no scheduler and no batching: the user's
// knobs, its runtime's CPU budget and count of waiting callers (client_setup's, less the rest).
// It uses no strategy object but that one: of client_send it reads only overtake_limit.
struct wait_setup {
  const settings& knobs;
  unsigned runtime_cpus;
  std::atomic<int>& waiting_callers;
};

// What a server reactor hands its server_schedule: the scheduler (and with it the runtime's
// clock), how many pool threads there may be at most (each has an index below that), the user's
// knobs, its runtime's CPU budget, and the reactor's look for a leader, which a watchdog may call:
// with the pool locked it asks leader_overdue() and wakes a thread to lead when told to; it returns
// whether the I/O is unled while a handler runs.
struct server_setup {
  detail::deadline_scheduler& scheduler;
  std::size_t thread_slots;
  const settings& knobs;
  unsigned runtime_cpus;
  bool (*look_for_leader)(void* engine);
  void* engine;
};

// What a server reactor hands its pool_grow: the threads that never retire (one more leads), the
// pool's thread slots, threads.growth_delay, the scheduler (and the runtime's clock), and the
// pool's look, which the strategy may arm on the scheduler: with the pool locked it calls look()
// and then asks again whether the pool needs a thread.
struct pool_setup {
  std::size_t core_threads;
  std::size_t slots;
  std::chrono::nanoseconds growth_delay;
  detail::deadline_scheduler& scheduler;
  void (*look)(void* pool);
  void* pool;
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

    // The blocking client's: how long the first caller waiting for the connection may see later
    // callers take it while free, before it is handed the turn directly. 0: never; the turn goes
    // in strict arrival order.
    static constexpr std::chrono::milliseconds overtake_limit{0};

   private:
    net::frame_writer& writer_;
  };

  // How a reply is awaited (own_reply.hpp and spin.hpp are the heuristics): the receiving thread
  // always reads the socket and hands each reply over; a caller sleeps at once. The blocking
  // client, whose caller always reads its own reply, uses only waiting().
  class client_wait {
   public:
    explicit client_wait(const client_setup&) noexcept {}
    explicit client_wait(const wait_setup&) noexcept {}

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
      template <class Done, class Deadline>
      bool spin_within(Done&& done, const Deadline&) const {
        return done();
      }
    };
    waiter waiting() const noexcept { return {}; }
  };

  // How the threaded server schedules reads and handlers, and when replies leave (unled_runs.hpp
  // and reply_holds.hpp are the heuristics): a thread always makes sure another leads the I/O
  // before it runs a handler, and every reply leaves as its handler returns. The reactor calls it
  // in the order a round of its pool meets it.
  class server_schedule {
   public:
    explicit server_schedule(const server_setup&) noexcept {}

    // Each pool thread's own state, made when the thread starts, with its index.
    struct thread_state {};
    thread_state thread_begins(std::size_t) noexcept { return {}; }

    // With the pool locked: a thread begins to lead; a thread begins to run a request; whether
    // it may run it without making sure another thread leads the I/O; the watchdog's look, with
    // whether the I/O is unled now: whether a thread must be woken to lead; a handler that ran
    // unled was found blocked.
    void lead_round_began() noexcept {}
    void run_began() noexcept {}
    static constexpr bool may_run_unled() noexcept { return false; }
    bool leader_overdue(bool) noexcept { return false; }
    void found_blocked() noexcept {}

    // Without the lock, around a run that left the I/O unled: whether it blocked.
    struct run_probe {};
    run_probe unled_run_begins(thread_state&) noexcept { return {}; }
    static bool blocked(const run_probe&) noexcept { return false; }

    // Whether to hold this request's reply while the same thread runs the next request of the same
    // connection (`next_same`); the connection whose replies this thread holds, or null; send them.
    bool hold_reply(thread_state&, const detail::server_request&, bool) noexcept { return false; }
    static constexpr const detail::server_connection* held(const thread_state&) noexcept { return nullptr; }
    void release(thread_state&) {}

    // Every pool thread has ended: nothing runs on its own after this.
    void stop() noexcept {}
  };

  // How a reactor's pool grows above its core size (transport/threaded/pool_growth.hpp is the
  // heuristic): a thread whenever requests wait and every thread is busy, up to max_handlers; no
  // looks, no timers. Called with the pool locked, except stop().
  class pool_grow {
   public:
    using clock = std::chrono::steady_clock;
    explicit pool_grow(const pool_setup&) noexcept {}

    // Whether the pool, holding `threads` threads (its bound not reached), may start one more at
    // `now` (the runtime's clock).
    static constexpr bool may_grow(std::size_t, clock::time_point) noexcept { return true; }
    // The look that the strategy armed (never, here); a thread of slot `slot` begins and ends a
    // handler.
    void look() noexcept {}
    void handler_began(std::size_t) noexcept {}
    void handler_ended(std::size_t) noexcept {}
    // Once the pool stops (its lock not held): no look runs after this.
    void stop() noexcept {}
  };
};

}  // namespace tuning
GEERPC_END_NAMESPACE
