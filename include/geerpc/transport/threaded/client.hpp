// geerpc: the client half of the `threaded` transport. Any number of threads call through one
// connection at once. The life of one call:
//
//   1. begin(): the call gets a sequence number and an entry in the pending table; its caller
//      stamps the request and writes it itself (frames queued behind a busy writer go out with
//      that writer's send); its deadline goes to its runtime's scheduler, its stop_token gets a
//      callback.
//   2. One std::jthread (receive()) waits for replies and hands each to its call (deliver()).
//   3. The call is completed exactly once, by whoever removes its entry from the pending table,
//      under the table's lock: the reply, the deadline, the caller's stop_token or a broken
//      connection. A reply that finds no entry (its call gave up) is read and dropped, never
//      handed to another call.
//   4. The caller (a synchronous call waiting on a futex, or a call_future) then settles the
//      call: the deadline and the stop callback are disarmed, and its memory may go.
//
// The tuning policy gives the engine two strategies (tuning/none.hpp names them): `client_send`,
// how requests are sent, and `client_wait`, how a reply is awaited. With tuning::automatic callers
// woken by one batch of replies send their next requests together (tuning/request_batching.hpp),
// a lone synchronous caller reads its own reply (tuning/own_reply.hpp) and a waiting caller may
// spin for a moment before it sleeps (tuning/spin.hpp); with tuning::none neither does anything.
// Neither changes which call a reply completes or how a call ends.
//
// The receiving side (receive(), reading and delivering replies) is defined in client_receive.hpp,
// which includes this file: include that one to use the engine.
#pragma once

#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stop_token>
#include <thread>
#include <utility>
#include <vector>

#include "../../client/call.hpp"
#include "../../client/dial.hpp"
#include "../../config.hpp"
#include "../../context.hpp"
#include "../../detail/assert.hpp"
#include "../../detail/chrono.hpp"
#include "../../detail/seq_map.hpp"
#include "../../net/frame_reader.hpp"
#include "../../net/frame_writer.hpp"
#include "../../net/socket.hpp"
#include "../../net/stream.hpp"
#include "../../options.hpp"
#include "../../runtime.hpp"
#include "../../scheduler/deadline_scheduler.hpp"
#include "../../tuning/none.hpp"
#include "../../tuning/own_reply.hpp"
#include "../../wire/frame.hpp"
#include "../link.hpp"
#include "client_calls.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// The threaded client's fixed sizes, each with what it trades (docs/transports.md lists them all).
struct threaded_client_sizes {
  // Requests queued while the socket is full before the connection breaks: a server that stops
  // reading fails the calls after this much, rather than let the client's memory grow.
  static constexpr std::size_t max_pending_output = std::size_t{64} << 20;
  // The receiving thread's recv buffer, on its stack: more replies per recv against more stack
  // touched by a burst.
  static constexpr std::size_t receive_buffer = std::size_t{64} << 10;
  // The buffer of a caller reading replies itself (its own, or while it spins), on its stack:
  // smaller than the receiving thread's, since it reads for one call.
  static constexpr std::size_t caller_buffer = std::size_t{16} << 10;
};

template <class Tuning>
class threaded_client_engine {
  using sending = typename Tuning::client_send;  // how requests are sent
  using waiting = typename Tuning::client_wait;  // how a reply is awaited

 public:
  // One call in flight. Whoever owns it (a waiting caller, a future) keeps it alive until settle().
  class pending_call {
   public:
    call_outcome outcome;
    const reply_sink* reply = nullptr;  // where a successful reply's body goes

    // Called exactly once, by whoever completed the call; afterwards it must not touch *this.
    virtual void complete() noexcept = 0;

   protected:
    pending_call() = default;
    ~pending_call() = default;

   private:
    friend class threaded_client_engine;
    struct stop_action {
      pending_call* call;
      void operator()() const noexcept { call->engine->cancel(*call, canceled_outcome(), true); }
    };
    threaded_client_engine* engine = nullptr;
    std::uint64_t seq = 0;
    deadline_scheduler::timer timer;
    bool timed = false;        // the timer was set: settle() must cancel it
    bool synchronous = false;  // a call() caller: it will send its next request soon after completion
    std::optional<std::stop_callback<stop_action>> on_stop;
  };

  threaded_client_engine(connection_info connection, const options& opts)
      : stream_(std::move(connection.stream)),
        server_max_frame_size_(connection.server_max_frame_size),
        runtime_(opts.runtime ? opts.runtime : runtime::default_runtime()),
        scheduler_(&runtime_->scheduler()),
        writer_(stream_, threaded_client_sizes::max_pending_output, &want_write, this, nullptr,
                &runtime_->chunk_pool()),
        reader_(opts.limits.max_frame_size),
        send_(setup(opts)),
        wait_(setup(opts)),
        receiver_([this] { receive(); }) {
    // For a caller's recv that waits; a session's reads never wait (its socket stays non-blocking).
    if constexpr (waiting::callers_read)
      if (stream_.blocking_reads()) net::set_blocking(stream_.fd());
  }

  ~threaded_client_engine() {
    close();
    // close() failed every pending call, and closed_ refuses new ones: no call is left to be
    // completed by a dead engine. (The receiving thread is joined; nobody else holds the engine.)
    GEERPC_ASSERT(pending_.size() == 0, "threaded client: a call pending past the engine's end");
    send_.stop();  // no call is left for the strategy to act on
  }

  threaded_client_engine(const threaded_client_engine&) = delete;
  threaded_client_engine& operator=(const threaded_client_engine&) = delete;

  std::uint32_t server_max_frame_size() const noexcept { return server_max_frame_size_; }

  // Whether new calls may be made: not closed, and the server has not said it is going away.
  bool is_open() const {
    std::lock_guard lock(mutex_);
    return !closed_ && !going_away_;
  }

  // Whether the calling thread is the receiving thread (where completions run).
  bool on_own_thread() const noexcept { return std::this_thread::get_id() == receiver_.get_id(); }

  // A synchronous call: sends `frame` and waits for the reply (into `reply`) or the failure.
  call_outcome call(const context& ctx, std::span<std::byte> frame, const reply_sink& reply);

  // Sends a request and arms its deadline and cancellation. From here on `call` completes exactly
  // once; its owner waits for that, then calls settle().
  void start(pending_call& call, const context& ctx, std::span<std::byte> frame) { begin(call, ctx, frame, false); }

  // After completion: disarms the deadline and the stop callback, waiting for either if it is
  // running right now, so that the call's memory can go.
  void settle(pending_call& call) {
    if (call.timed) scheduler_->cancel(call.timer);
    call.on_stop.reset();
  }

  // Completes `call` with `outcome` if nothing else has; tells the server when asked to.
  bool cancel(pending_call& call, call_outcome outcome, bool tell_server) {
    if (!take(call.seq, &call)) return false;
    if (tell_server) {
      const auto frame = cancel_frame(call.seq);
      // A writer that breaks here dropped other callers' queued requests too: fail them all.
      if (writer_.write(frame) == net::frame_writer::status::broken) fail_all();
    }
    finish(call, std::move(outcome));
    return true;
  }

  // Fails every pending call with connection_closed, makes later calls fail fast, and stops the
  // receiving thread. Safe from several threads at once; calls in progress elsewhere see
  // connection_closed.
  void close() {
    fail_all();
    stopping_.store(true, std::memory_order_release);
    wake_.signal();
    // A completion (a callback, a coroutine resumed by its call) runs on the receiving thread:
    // closing the client there would have that thread join itself.
    GEERPC_ASSERT(std::this_thread::get_id() != receiver_.get_id(),
                  "threaded client: closed or destroyed from its own receiving thread (in a callback or a "
                  "coroutine resumed by a call): close it from another thread");
    std::call_once(joined_, [&] { receiver_.join(); });
  }

  std::size_t pending_count() const {
    std::lock_guard lock(mutex_);
    return pending_.size();
  }

 private:
  using clock = std::chrono::steady_clock;

  tuning::client_setup setup(const options& opts) {
    return {writer_, *scheduler_, opts.tuning, runtime_->cpus(), runtime_->waiting_callers(), &on_broken, this};
  }

  // Every completion goes through here, exactly once per call.
  void finish(pending_call& call, call_outcome&& outcome) noexcept {
    call.outcome = std::move(outcome);
    if (call.synchronous) send_.caller_due();  // woken, its caller sends its next request soon
    call.complete();
  }

  // Removes the entry of `seq` (only if it belongs to `expected`, when given): whoever succeeds
  // owns the call's completion.
  pending_call* take(std::uint64_t seq, pending_call* expected = nullptr) {
    std::lock_guard lock(mutex_);
    if (expected == nullptr) return pending_.erase(seq);  // a reply: whichever call it is for
    if (pending_.find(seq) != expected) return nullptr;
    pending_.erase(seq);
    return expected;
  }

  static void on_deadline(void* context) {
    auto& call = *static_cast<pending_call*>(context);
    call.engine->expire(call);
  }

  // Completes `call` with deadline_exceeded if nothing else has. No cancel frame: the server has
  // the same deadline.
  void expire(pending_call& call) { cancel(call, deadline_exceeded_outcome(), false); }

  // start(); with `may_read_own_reply` (a synchronous caller), the tuning may make the caller the
  // socket's watcher instead of the receiving thread: then this returns true, no deadline timer is
  // armed, and the caller must call read_own_reply() next.
  bool begin(pending_call& call, const context& ctx, std::span<std::byte> frame, bool may_read_own_reply) {
    // A call object serves one call: begun twice, it would have two entries and two completions.
    GEERPC_ASSERT(call.engine == nullptr && call.seq == 0, "threaded client: a call begun twice");
    // deliver() writes a successful reply's body there, on whichever thread reads it.
    GEERPC_ASSERT(call.reply != nullptr, "threaded client: a call without a place for its reply");
    call.engine = this;
    // The runtime's clock (steady_clock's, unless a test's manual clock): the one the deadline
    // fires by. A null test and a clock read, as before: no indirect call.
    const auto now = scheduler_->now();
    // Asked first, so that a call that ends below still counts in its caller's history.
    const bool may_hold = call.synchronous && send_.caller_begins(now);
    if (ctx.stop_token().stop_requested()) {
      finish(call, canceled_outcome());
      return false;
    }
    if (ctx.deadline() && *ctx.deadline() <= now) {
      finish(call, deadline_exceeded_outcome());
      return false;
    }
    // Only a caller that nothing else needs to wake may sleep in recv() or poll() rather than on
    // its call.
    const bool may_read = waiting::callers_read && may_read_own_reply && !ctx.stop_token().stop_possible();
    bool reads_own = false;
    bool wake_receiver = false;
    bool closed = false, going_away = false;
    {
      std::lock_guard lock(mutex_);
      closed = closed_;
      going_away = going_away_;
      if (!closed && !going_away) {
        call.seq = ++last_seq_;
        pending_.insert(call.seq, &call);
        reads_own = wait_.call_added(may_read, wake_receiver);  // tuning::none's: never
      }
    }
    if (closed || going_away) {  // completed outside the lock: a completion hook may start another call
      finish(call, closed ? connection_closed_outcome() : going_away_outcome());
      return false;
    }
    if (wake_receiver) wake_.signal();
    stamp_request(frame, call.seq, budget_us(ctx.deadline(), now));
    try {
      if (ctx.deadline() && !reads_own) {
        call.timed = true;
        scheduler_->schedule(call.timer, *ctx.deadline(), &on_deadline, &call);
      }
      if (send_.send(frame, may_hold) == net::frame_writer::status::broken) fail_all();
    } catch (...) {  // out of memory arming the timer or queueing the frame: the call must not stay
                     // in the table or the heap
      const bool taken = take(call.seq, &call) != nullptr;
      if (reads_own) stop_watching();  // after take(): the call no longer counts as pending
      if (!taken) return false;        // a deadline or a close completed it already: that stands
      if (call.timed) scheduler_->cancel(call.timer);
      throw;
    }
    // After the request is sent or queued, so that a cancel frame never overtakes the request it
    // cancels.
    if (ctx.stop_token().stop_possible())
      call.on_stop.emplace(ctx.stop_token(), typename pending_call::stop_action{&call});
    return reads_own;
  }

  // The caller that watched the socket, once its call is complete (or never sent), hands the
  // watch to the receiving thread if other calls are pending.
  void stop_watching() {
    bool wake_receiver = false;
    {
      std::lock_guard lock(mutex_);
      wake_receiver = wait_.caller_done(!pending_.empty());
    }
    if (wake_receiver) wake_.signal();
  }

  // The caller made the socket's watcher by begin() waits here until its call completes, reading
  // and handing other calls' replies to their owners (tuning/own_reply.hpp). noexcept: like the
  // receiving thread, a reader that cannot allocate ends the process rather than lose calls.
  template <class Call, class Wait>
  void read_own_reply(Call& call, const context& ctx, const Wait& wait) noexcept {
    std::byte buffer[threaded_client_sizes::caller_buffer];  // on the stack: pages are touched only as data arrives
    std::unique_lock lock(reading_);
    const bool open = detail::read_own_reply(
        stream_, ctx.deadline(), wait, receive_timeout_, [&] { return call.done(); },
        [&](bool wait_for_data) { return read_ready(buffer, sizeof buffer, false, wait_for_data); },
        [&] { expire(call); });
    // A close elsewhere may have taken the call and be about to complete it: the caller waits for that.
    if (!open) fail_all();
    stop_watching();
  }

  // A waiting caller reads for a moment itself when the tuning says spinning pays and nobody else
  // is reading: on loopback its reply is often microseconds away, while the receiving thread,
  // asleep in poll, would first need a CPU woken (tuning/spin.hpp). noexcept for the reason above.
  template <class Wait, class Done>
  void spin_until_done(const Wait& wait, Done done) noexcept {
    if (!wait.may_spin()) return;
    std::byte buffer[threaded_client_sizes::caller_buffer];  // on the stack: pages are touched only as data arrives
    wait.spin_until([&] {
      if (done()) return true;
      if (std::unique_lock lock(reading_, std::try_to_lock);
          lock.owns_lock() && !read_ready(buffer, sizeof buffer, false)) {
        lock.unlock();
        fail_all();
      }
      return done();
    });
  }

  // The pending calls are taken one at a time, each completed before the next is taken: a
  // completion may run user code (a callback, a coroutine) that cancels or drops another pending
  // call, which then completes it itself instead of waiting for this loop.
  void fail_all() {
    std::vector<std::uint64_t> orphans;
    {
      std::lock_guard lock(mutex_);
      if (!closed_) {
        closed_ = true;
        stream_.shutdown();
      }
      orphans.reserve(pending_.size());
      pending_.for_each([&](std::uint64_t seq, pending_call*) { orphans.push_back(seq); });
    }
    for (const std::uint64_t seq : orphans)
      if (pending_call* call = take(seq)) finish(*call, connection_closed_outcome());
  }
  static void on_broken(void* context) { static_cast<threaded_client_engine*>(context)->fail_all(); }

  static void want_write(void* context, bool want) {
    auto& self = *static_cast<threaded_client_engine*>(context);
    self.want_write_.store(want, std::memory_order_release);
    if (want) self.wake_.signal();
  }

  // The receiving side (client_receive.hpp): the receiving thread's loop; reading the socket, by it
  // or by a caller; and handing each reply to its call.
  void receive();
  bool read_ready(std::byte* buffer, std::size_t size, bool until_empty, bool wait = false);
  bool read_socket(std::byte* buffer, std::size_t size, bool until_empty, bool wait = false);
  bool deliver(std::span<const std::byte> bytes);

  net::stream stream_;
  const std::uint32_t server_max_frame_size_;
  const std::shared_ptr<runtime> runtime_;  // held while the engine lives: its scheduler fires our deadlines
  deadline_scheduler* const scheduler_;
  net::frame_writer writer_;
  std::mutex reading_;  // held by whoever reads the socket: guards reader_, reading_over_, receive_timeout_
  net::frame_reader reader_;
  bool reading_over_ = false;
  receive_timeout receive_timeout_;  // the socket's, for a caller reading its own reply (tuning/own_reply.hpp)
  net::event_fd wake_;               // wakes the receiver: to stop, to watch for writability, or to watch again
  std::atomic<bool> want_write_{false};
  std::atomic<bool> stopping_{false};

  mutable std::mutex mutex_;  // guards the pending table and closed_ (and client_wait's socket watch)
  seq_map<pending_call> pending_;
  std::uint64_t last_seq_ = 0;
  bool closed_ = false;
  bool going_away_ = false;  // the server sent goaway: new calls fail with errc::going_away

  sending send_;  // after what the strategies use
  waiting wait_;

  std::once_flag joined_;
  std::jthread receiver_;  // last: starts once everything it uses exists
};

template <class Tuning>
call_outcome threaded_client_engine<Tuning>::call(const context& ctx, std::span<std::byte> frame,
                                                  const reply_sink& reply) {
  blocking_wait_call<threaded_client_engine> call;
  call.reply = &reply;
  call.synchronous = true;
  const auto waiter = wait_.waiting();
  if constexpr (waiting::callers_read) {
    if (begin(call, ctx, frame, true))
      read_own_reply(call, ctx, waiter);
    else
      spin_until_done(waiter, [&] { return call.done(); });
  } else {
    begin(call, ctx, frame, false);
    spin_until_done(waiter, [&] { return call.done(); });
  }
  call.wait();
  settle(call);
  send_.caller_returns(scheduler_->now());
  return std::move(call.outcome);
}

}  // namespace detail
GEERPC_END_NAMESPACE
