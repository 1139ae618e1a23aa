// geerpc: the client half of the `threaded` transport. Any number of threads call through one
// connection at once: each call gets a sequence number and an entry in the pending table, its
// caller writes the request itself (frames queued behind a busy writer go out together), and one
// std::jthread receives replies and hands each to its caller.
//
// One exception saves a thread wake-up per call on the common sequential path: a synchronous
// call that finds no other call pending reads the socket itself, as the blocking transport does,
// and hands any other call's reply to its owner meanwhile; the receiving thread is parked off the
// socket (it watches only for the connection's end) until calls overlap again. Exactly one thread
// at a time waits for replies on the socket: `watcher_` says which.
//
// Callers woken by one batch of replies send their next requests together: a caller back with
// its next request while others woken with it are still on their way back holds it in the writer
// for the last of them, which sends the lot as it returns, or with its own next request when it
// has been coming straight back (due_senders.hpp). One send and one wake-up of the server instead
// of one per call.
//
// Who completes a call is decided by one thing: removing its entry from the pending table, under
// the table's lock. The reply, the deadline (from the shared scheduler), the caller's stop_token
// and a broken connection all try; exactly one succeeds, and a reply that finds no entry (its call
// gave up) is read and dropped, never handed to another call.
#pragma once

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
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
#include "../../detail/futex.hpp"
#include "../../detail/seq_map.hpp"
#include "../../net/frame_reader.hpp"
#include "../../net/frame_writer.hpp"
#include "../../net/socket.hpp"
#include "../../options.hpp"
#include "../../scheduler/deadline_scheduler.hpp"
#include "../../tuning/due_senders.hpp"
#include "../../tuning/spin.hpp"
#include "../../tuning/watchdog.hpp"
#include "../../wire/frame.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class threaded_client_engine {
 public:
  // One call in flight. Whoever owns it (a waiting caller, a future) keeps it alive until settle().
  class pending_call {
   public:
    call_outcome outcome;
    std::vector<std::byte>* reply = nullptr;  // where a successful reply's body goes

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
    bool timed = false;       // the timer was set: settle() must cancel it
    bool sends_next = false;  // a synchronous call: its caller is due from completion to return
    std::optional<std::stop_callback<stop_action>> on_stop;
  };

  threaded_client_engine(connection_info connection, const options& opts)
      : fd_(std::move(connection.fd)),
        server_max_frame_size_(connection.server_max_frame_size),
        scheduler_(deadline_scheduler::shared()),
        writer_(fd_.get(), std::size_t{64} << 20, &want_write, this),
        reader_(opts.max_frame_size),
        hold_watch_(*scheduler_, due_senders::max_hold, &look_at_holds, this),
        receiver_([this] { receive(); }) {
    net::set_blocking(fd_.get());  // for read_own_reply(); every other I/O on it says MSG_DONTWAIT
  }

  ~threaded_client_engine() {
    close();
    hold_watch_.stop();  // no call is left to hold a request and ask for a look
  }

  threaded_client_engine(const threaded_client_engine&) = delete;
  threaded_client_engine& operator=(const threaded_client_engine&) = delete;

  std::uint32_t server_max_frame_size() const noexcept { return server_max_frame_size_; }

  bool is_open() const {
    std::lock_guard lock(mutex_);
    return !closed_;
  }

  // A synchronous call: sends `frame` and waits for the reply (into `reply`) or the failure.
  call_outcome call(const context& ctx, std::span<std::byte> frame, std::vector<std::byte>& reply);

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
    call.outcome = std::move(outcome);
    complete(call);
    return true;
  }

  // Fails every pending call with connection_closed, makes later calls fail fast, and stops the
  // receiving thread.
  // Safe from several threads at once; calls in progress elsewhere see connection_closed.
  void close() {
    fail_all();
    stopping_.store(true, std::memory_order_release);
    wake_.signal();
    std::call_once(joined_, [&] { receiver_.join(); });
  }

  std::size_t pending_count() const {
    std::lock_guard lock(mutex_);
    return pending_.size();
  }

 private:
  using clock = std::chrono::steady_clock;

  void finish_now(pending_call& call, call_outcome outcome) {
    call.outcome = std::move(outcome);
    complete(call);
  }

  // Every completion goes through here: a synchronous caller woken now will send its next request
  // soon (due_senders.hpp).
  void complete(pending_call& call) noexcept {
    if (call.sends_next) due_.arrive();
    call.complete();
  }

  // A thread counted in due_ is done; the last one sends the requests held meanwhile, unless it
  // is a caller expected straight back with its next request (`comes_back`), which takes them
  // along (due_senders.hpp).
  void leave_due(bool comes_back = false) {
    if (due_.leave() && !comes_back) send_held();
  }

  // Sends a request, or, when allowed, holds it while threads that will send soon are due
  // (due_senders.hpp).
  net::frame_writer::status send_request(std::span<const std::byte> frame, bool may_hold) {
    if (!may_hold || !due_.any()) {
      const auto status = writer_.write(frame);
      // It took along whatever was held (a hold that began during the send may be ended early:
      // the watchdog's look covers that).
      if (status != net::frame_writer::status::broken && due_.holding()) due_.sent();
      return status;
    }
    const auto status = writer_.hold(frame);
    if (status != net::frame_writer::status::done) return status;
    if (due_.held())
      send_held();  // the last thread due left before the hold
    else
      hold_watch_.request();
    return status;
  }

  // Sends what is held: by the last thread due to leave, or by the watchdog.
  void send_held() {
    const auto status = writer_.flush();
    due_.sent();
    if (status == net::frame_writer::status::broken) fail_all();
  }

  // A synchronous caller's recent calls, for holding: the engine whose call this thread returned
  // from last (until it calls again), when, and how many calls in a row came straight back to the
  // same engine (due_senders::quick_return).
  struct caller_history {
    const threaded_client_engine* returned_from = nullptr;
    clock::time_point returned_at{};
    unsigned quick_returns = 0;
  };
  static caller_history& history() noexcept {
    thread_local caller_history mine;
    return mine;
  }

  // A synchronous caller back with its next request: whether it may hold it (it returned from a
  // call of this engine last), and how quickly it came back.
  bool back_for_more(clock::time_point now) noexcept {
    caller_history& mine = history();
    const bool same_engine = std::exchange(mine.returned_from, nullptr) == this;
    const bool quick = same_engine && now - mine.returned_at <= due_senders::quick_return;
    mine.quick_returns = quick ? std::min(mine.quick_returns + 1, due_senders::quick_streak) : 0;
    return same_engine;
  }

  // Whether this synchronous caller, about to return, is expected straight back: it has been,
  // lately.
  static bool expected_back() noexcept { return history().quick_returns >= due_senders::quick_streak; }

  // A synchronous caller returns, once done with its call (a send it owed included, so that its
  // gap until the next call counts only the application's time).
  void returned() noexcept {
    caller_history& mine = history();
    mine.returned_from = this;
    mine.returned_at = clock::now();
  }

  // The hold watchdog's look, on the scheduler thread: sends what has been held since the last
  // look, and held frames that nobody due will send (kept by a caller that did not come back) or
  // that wait in the writer at two looks in a row (their hold ended early: due_senders.hpp).
  // Returns whether anything is held.
  static bool look_at_holds(void* context) {
    auto& self = *static_cast<threaded_client_engine*>(context);
    const bool stale = self.due_.held_since_last_look(self.hold_look_);  // first: it notes what it saw
    const bool unsent = self.writer_.holds_unsent();
    const bool unsent_before = std::exchange(self.unsent_at_last_look_, unsent);
    if (stale || (unsent && (unsent_before || !self.due_.any()))) self.send_held();
    return self.due_.holding() || self.writer_.holds_unsent();
  }

  // Removes the entry of `seq` (only if it belongs to `expected`, when given): whoever succeeds
  // owns the call's completion.
  pending_call* take(std::uint64_t seq, pending_call* expected = nullptr) {
    std::lock_guard lock(mutex_);
    pending_call* call = pending_.find(seq);
    if (call == nullptr || (expected != nullptr && call != expected)) return nullptr;
    pending_.erase(seq);
    return call;
  }

  static void on_deadline(void* context) {
    auto& call = *static_cast<pending_call*>(context);
    call.engine->expire(call);
  }

  // Completes `call` with deadline_exceeded if nothing else has. No cancel frame: the server has
  // the same deadline.
  void expire(pending_call& call) { cancel(call, deadline_exceeded_outcome(), false); }

  // start(); with `may_read_own_reply` (a caller that will wait without a stop_token), the call
  // may be made the socket's watcher instead of the receiving thread: then it returns true, no
  // deadline timer is armed, and the caller must call read_own_reply() next.
  bool begin(pending_call& call, const context& ctx, std::span<std::byte> frame, bool may_read_own_reply) {
    call.engine = this;
    const auto now = clock::now();
    // Only a synchronous caller back for more after a batch of replies holds its request; an
    // asynchronous call is on the wire, or queued behind a sender, when start() returns. Asked
    // first, so that a call ending below still counts in its caller's history.
    const bool may_hold = call.sends_next && back_for_more(now);
    if (ctx.stop_token().stop_requested()) {
      finish_now(call, canceled_outcome());
      return false;
    }
    if (ctx.deadline() && *ctx.deadline() <= now) {
      finish_now(call, deadline_exceeded_outcome());
      return false;
    }
    // Only a caller that nothing else needs to wake may sleep in poll() rather than on its call.
    const bool may_read = may_read_own_reply && !ctx.stop_token().stop_possible();
    bool reads_own = false;
    bool wake_receiver = false;
    {
      std::lock_guard lock(mutex_);
      if (closed_) {
        finish_now(call, connection_closed_outcome());
        return false;
      }
      call.seq = ++last_seq_;
      pending_.insert(call.seq, &call);
      if (watcher_.load(std::memory_order_relaxed) == watcher::nobody) {
        reads_own = may_read;
        wake_receiver = !may_read;
        watcher_.store(may_read ? watcher::caller : watcher::receiver, std::memory_order_relaxed);
      }
    }
    if (wake_receiver) wake_.signal();
    stamp_request(frame, call.seq, budget_us(ctx.deadline(), now));
    try {
      if (ctx.deadline() && !reads_own) {
        call.timed = true;
        scheduler_->schedule(call.timer, *ctx.deadline(), &on_deadline, &call);
      }
      if (send_request(frame, may_hold) == net::frame_writer::status::broken) fail_all();
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
    if (ctx.stop_token().stop_possible()) call.on_stop.emplace(ctx.stop_token(), pending_call::stop_action{&call});
    return reads_own;
  }

  // Who waits for replies on the socket. Written under mutex_; the receiving thread reads it
  // without the lock, and whoever makes it the watcher wakes it afterwards, so a stale read only
  // costs it one more turn of its loop. Invariant (under mutex_): a pending call means a watcher.
  enum class watcher : std::uint8_t { nobody, receiver, caller };

  // Called by the caller that watched the socket, once its call is complete (or never sent):
  // hands the watch to the receiving thread if other calls are pending.
  void stop_watching() {
    bool wake_receiver = false;
    {
      std::lock_guard lock(mutex_);
      wake_receiver = !pending_.empty();
      watcher_.store(wake_receiver ? watcher::receiver : watcher::nobody, std::memory_order_relaxed);
    }
    if (wake_receiver) wake_.signal();
  }

  // Called by the receiving thread after it read: with nothing pending, it leaves the socket to
  // the next synchronous caller.
  void park_if_idle() {
    std::lock_guard lock(mutex_);
    if (pending_.empty() && watcher_.load(std::memory_order_relaxed) == watcher::receiver)
      watcher_.store(watcher::nobody, std::memory_order_relaxed);
  }

  void fail_all() {
    std::vector<pending_call*> orphans;
    {
      std::lock_guard lock(mutex_);
      if (!closed_) {
        closed_ = true;
        ::shutdown(fd_.get(), SHUT_RDWR);
      }
      pending_.drain_into(orphans);
    }
    for (pending_call* call : orphans) finish_now(*call, connection_closed_outcome());
  }

  static void want_write(void* context, bool want) {
    auto& self = *static_cast<threaded_client_engine*>(context);
    self.want_write_.store(want, std::memory_order_release);
    if (want) self.wake_.signal();
  }

  void receive() {
    std::byte buffer[64 << 10];  // on this thread's stack: pages are touched only as data arrives
    for (;;) {
      // Parked, it still watches for the connection's end (POLLRDHUP): a reply does not wake it.
      const bool watching = watcher_.load(std::memory_order_relaxed) == watcher::receiver;
      const auto events = (watching ? POLLIN : POLLRDHUP) | (want_write_.load(std::memory_order_acquire) ? POLLOUT : 0);
      pollfd fds[2] = {{fd_.get(), static_cast<short>(events), 0}, {wake_.get(), POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0 && errno != EINTR) return fail_all();
      if (fds[1].revents & POLLIN) {
        wake_.drain();
        if (stopping_.load(std::memory_order_acquire)) return;
      }
      if ((fds[0].revents & POLLOUT) && writer_.flush() == net::frame_writer::status::broken) return fail_all();
      if (fds[0].revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) {
        std::unique_lock lock(reading_);  // a caller reading its own reply holds it until done
        if (!read_ready(buffer, sizeof buffer, true)) {
          lock.unlock();
          return fail_all();
        }
        lock.unlock();
        park_if_idle();
      }
    }
  }

  // Reads and hands out replies; returns false once the connection is over. The receiving thread
  // reads until the socket is empty; a caller spinning for its reply (spin_until_done) reads once,
  // so that it never stays past its spin however fast replies come; `wait` lets the first recv
  // wait for data (read_own_reply). Whoever reads holds reading_.
  bool read_ready(std::byte* buffer, std::size_t size, bool until_empty, bool wait = false) {
    if (!reading_over_ && !read_socket(buffer, size, until_empty, wait)) reading_over_ = true;
    return !reading_over_;
  }

  // A waiting caller reads for a moment itself, when nobody else is reading: on loopback its
  // reply is often microseconds away, while the receiving thread, asleep in poll, would first need
  // a CPU woken (spin.hpp). Returns when `done()` or when the spin is over. noexcept: like the
  // receiving thread, a reader that cannot allocate ends the process rather than lose calls.
  template <class Done>
  void spin_until_done(const reply_wait& wait, Done done) noexcept {
    if (!wait.may_spin()) return;
    std::byte buffer[16 << 10];  // on the stack: pages are touched only as data arrives
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

  // The caller made the socket's watcher by begin() waits here until its call completes: it reads
  // (handing other calls' replies to their owners), first for a moment without sleeping when that
  // pays (spin.hpp), then asleep: in recv() itself when the call has no deadline (one system call
  // instead of two: nothing but the socket can complete such a call, and a close shuts the socket
  // down, which ends the recv), otherwise in poll() with its deadline. noexcept for the reason
  // given above.
  template <class Call>
  void read_own_reply(Call& call, const context& ctx, const reply_wait& wait) noexcept {
    std::byte buffer[16 << 10];  // on the stack: pages are touched only as data arrives
    std::unique_lock lock(reading_);
    bool open = true;
    const auto read_once = [&](bool wait_for_data = false) {
      return open = read_ready(buffer, sizeof buffer, false, wait_for_data);
    };
    if (wait.may_spin()) wait.spin_until([&] { return call.done() || !read_once() || call.done(); });
    if (!ctx.deadline())
      while (open && !call.done()) read_once(true);
    while (open && !call.done()) {
      // Checked before every wait, not only when poll() times out: replies for other calls may keep
      // the socket readable long past this call's deadline.
      if ((ctx.deadline() && clock::now() >= *ctx.deadline()) ||
          net::wait_for(fd_.get(), POLLIN, ctx.deadline()) == net::wait_result::timeout) {
        expire(call);
        break;
      }
      read_once();
    }
    // A close elsewhere may have taken the call and be about to complete it: the caller waits for that.
    if (!open) fail_all();
    stop_watching();
  }

  // Reads once, or until the socket is empty; with `wait`, the first read waits for data (the
  // socket is in blocking mode). Returns false when the connection is over.
  bool read_socket(std::byte* buffer, std::size_t size, bool until_empty, bool wait = false) {
    for (;;) {
      std::size_t got = 0;
      if (const auto status = net::recv_some(fd_.get(), buffer, size, got, wait); status != net::recv_status::data)
        return status == net::recv_status::would_block;
      wait = false;
      bool valid = true;
      const char* broken = nullptr;
      {
        // While it hands out what one recv brought, this reader is due: the callers it completes
        // will send (due_senders.hpp). One recv at a time, so that a peer keeping the socket full
        // never keeps requests held.
        due_.arrive();
        struct leave_at_end {
          threaded_client_engine& self;
          ~leave_at_end() { self.leave_due(); }
        } leave{*this};
        broken = reader_.feed(std::span<const std::byte>(buffer, got), [&](std::span<const std::byte> bytes) {
          valid = deliver(bytes);
          return valid;
        });
      }
      if (broken != nullptr || !valid) return false;
      if (!until_empty || got < size) return true;  // a short read emptied the socket: no recv for EAGAIN
    }
  }

  // Hands a reply to its call. Returns false when the frame breaks the protocol.
  bool deliver(std::span<const std::byte> bytes) {
    wire::frame_view frame;
    if (wire::parse_frame(bytes, frame) != nullptr || frame.header.kind != wire::frame_kind::response) return false;
    pending_call* call = take(frame.header.seq);
    if (call == nullptr) return true;  // its caller gave up: drop the late reply
    if (frame.header.status == 0) {
      call->reply->assign(frame.body.begin(), frame.body.end());
      call->outcome = {};
    } else {
      call->outcome = response_outcome(frame.header.status, frame.text);
    }
    complete(*call);
    return true;
  }

  net::unique_fd fd_;
  const std::uint32_t server_max_frame_size_;
  std::shared_ptr<deadline_scheduler> scheduler_;
  net::frame_writer writer_;
  due_senders due_;     // threads about to send, for whom new requests wait
  std::mutex reading_;  // held by whoever reads the socket: guards reader_ and reading_over_
  net::frame_reader reader_;
  bool reading_over_ = false;
  net::event_fd wake_;  // wakes the receiver: to stop, or to watch for writability
  std::atomic<bool> want_write_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<watcher> watcher_{watcher::nobody};

  mutable std::mutex mutex_;  // guards the pending table and closed_
  seq_map<pending_call> pending_;
  std::uint64_t last_seq_ = 0;
  bool closed_ = false;

  due_senders::look hold_look_;       // what the watchdog's last look saw (its thread only)
  bool unsent_at_last_look_ = false;  // and whether the writer held frames then (its thread only)
  watchdog hold_watch_;               // after everything its looks use

  std::once_flag joined_;
  std::jthread receiver_;  // last: starts once everything it uses exists
};

// A synchronous call's completion. The caller announces that it sleeps (a futex), so the completer
// makes the wake-up system call only when someone sleeps. The completer's last touch is the final
// store, so the caller may destroy the call as soon as it sees `released`.
class blocking_wait_call final : public threaded_client_engine::pending_call {
 public:
  void complete() noexcept override {
    if (state_.exchange(completed, std::memory_order_acq_rel) == sleeping) futex_wake_one(state_);
    state_.store(released, std::memory_order_release);
  }
  bool done() const noexcept { return state_.load(std::memory_order_acquire) != waiting; }
  void wait() noexcept {
    std::uint32_t expected = waiting;
    if (state_.compare_exchange_strong(expected, sleeping, std::memory_order_acq_rel))
      while (state_.load(std::memory_order_acquire) == sleeping) futex_wait(state_, sleeping);
    // Between `completed` and `released` the completer is a few instructions from done.
    while (state_.load(std::memory_order_acquire) != released) std::this_thread::yield();
  }

 private:
  static constexpr std::uint32_t waiting = 0, sleeping = 1, completed = 2, released = 3;
  std::atomic<std::uint32_t> state_{waiting};
};

inline call_outcome threaded_client_engine::call(const context& ctx, std::span<std::byte> frame,
                                                 std::vector<std::byte>& reply) {
  blocking_wait_call call;
  call.reply = &reply;
  call.sends_next = true;
  const reply_wait waiting;
  if (begin(call, ctx, frame, true))
    read_own_reply(call, ctx, waiting);
  else
    spin_until_done(waiting, [&] { return call.done(); });
  call.wait();
  settle(call);
  leave_due(expected_back());
  returned();
  return std::move(call.outcome);
}

// An asynchronous call's state, shared by its future and the engine until the future settles it.
// Waiting uses a mutex and a condition variable, for wait_until; the completer notifies under the
// mutex, so the future may destroy the state as soon as it sees `done`.
class async_call final : public threaded_client_engine::pending_call {
 public:
  explicit async_call(std::shared_ptr<threaded_client_engine> engine) : engine_(std::move(engine)) { reply = &body_; }

  void complete() noexcept override {
    std::lock_guard lock(mutex_);
    done_ = true;
    done_changed_.notify_all();
  }
  bool done() const {
    std::lock_guard lock(mutex_);
    return done_;
  }
  void wait() const {
    std::unique_lock lock(mutex_);
    done_changed_.wait(lock, [&] { return done_; });
  }
  template <class Clock, class Duration>
  bool wait_until(const std::chrono::time_point<Clock, Duration>& tp) const {
    std::unique_lock lock(mutex_);
    return done_changed_.wait_until(lock, tp, [&] { return done_; });
  }

  // Null for a call made on a client that was not connected.
  threaded_client_engine* engine() const noexcept { return engine_.get(); }
  std::vector<std::byte>& body() noexcept { return body_; }

 private:
  std::shared_ptr<threaded_client_engine> engine_;  // outlives the client if the future does
  std::vector<std::byte> body_;
  mutable std::mutex mutex_;
  mutable std::condition_variable done_changed_;
  bool done_ = false;
};

}  // namespace detail
GEERPC_END_NAMESPACE
