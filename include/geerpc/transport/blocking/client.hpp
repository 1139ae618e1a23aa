// geerpc: the client half of the `blocking` transport. No thread of its own: the calling thread
// writes its request and reads until its reply comes, waiting in poll() with the call's deadline.
// One call is on the wire at a time; other callers wait their turn (within their own deadlines),
// in arrival order. A call reads up to its own reply and no further: the bytes after it are kept
// for the next call, which drops a reply that arrived after its call gave up.
//
// The tuning policy (tuning/none.hpp) decides two things here, and only through what it names:
//   - client_wait's waiter: whether a caller spins for a moment before it sleeps in poll
//     (tuning::automatic: spin.hpp's reply_wait with settings::spin; tuning::none: never, and its
//     empty waiter compiles to nothing);
//   - client_send::overtake_limit: how long a caller that finds the connection free may take it
//     ahead of the first waiter (tuning::automatic: 1 ms; tuning::none: 0, strict arrival order,
//     and the clock is never read for it).
// This client has no scheduler and no batching (it sends each request at once, itself), so it
// builds no tuning::client_setup: it makes a client_wait from a tuning::wait_setup (knobs, CPUs,
// waiting callers) and reads client_send's constant without making one.
#pragma once

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <stop_token>
#include <utility>
#include <vector>

#include "../../client/call.hpp"
#include "../../client/dial.hpp"
#include "../../config.hpp"
#include "../../context.hpp"
#include "../../detail/assert.hpp"
#include "../../detail/chrono.hpp"
#include "../../net/frame_writer.hpp"
#include "../../net/socket.hpp"
#include "../../net/stream.hpp"
#include "../../options.hpp"
#include "../../runtime.hpp"
#include "../../tuning/none.hpp"
#include "../../wire/frame.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// The blocking client's fixed numbers, each with what it trades (docs/transports.md lists them all).
// (How long a waiting caller may be overtaken is its tuning's: client_send::overtake_limit.)
struct blocking_client_constants {
  // Requests queued while the socket is full before the connection breaks.
  static constexpr std::size_t max_pending_output = std::size_t{64} << 20;
  // The receive buffer a connection starts with and shrinks back to: fewer reads per reply
  // against memory held by an idle connection.
  static constexpr std::size_t initial_buffer = std::size_t{16} << 10;
  // A buffer grown past this by a big reply is given back after it: a big reply's memory is not
  // kept for the connection's life, at the price of growing again for the next big one.
  static constexpr std::size_t kept_buffer = std::size_t{64} << 10;
};

template <class Tuning>
class blocking_client_engine {
  using wait_strategy = typename Tuning::client_wait;  // how a reply is awaited: its waiter alone

 public:
  // How long the first waiting caller may be overtaken (0: strict arrival order).
  static constexpr auto overtake_limit = Tuning::client_send::overtake_limit;
  static_assert(overtake_limit.count() >= 0, "blocking client: a negative overtake limit");

  blocking_client_engine(connection_info connection, const options& opts)
      : stream_(std::move(connection.stream)),
        server_max_frame_size_(connection.server_max_frame_size),
        runtime_(opts.runtime ? opts.runtime : runtime::default_runtime()),
        writer_(stream_, blocking_client_constants::max_pending_output, nullptr, nullptr, nullptr,
                &runtime_->chunk_pool()),
        max_frame_size_(opts.limits.max_frame_size),
        wait_(tuning::wait_setup{opts.tuning, runtime_->cpus(), runtime_->waiting_callers()}) {}

  ~blocking_client_engine() { close(); }

  blocking_client_engine(const blocking_client_engine&) = delete;
  blocking_client_engine& operator=(const blocking_client_engine&) = delete;

  std::uint32_t server_max_frame_size() const noexcept { return server_max_frame_size_; }
  // Whether new calls may be made: not closed, and the server has not said it is going away.
  bool is_open() const noexcept { return connected() && !going_away_.load(std::memory_order_relaxed); }
  bool on_own_thread() const noexcept { return false; }  // it has no thread of its own

  call_outcome call(const context& ctx, std::span<std::byte> frame, const reply_sink& reply) {
    if (going_away_.load(std::memory_order_relaxed)) return going_away_outcome();
    if (auto refused = take_turn(ctx)) return std::move(*refused);
    struct turn_passer {
      blocking_client_engine* engine;
      ~turn_passer() { engine->pass_turn(); }  // also if the exchange throws
    } passer{this};
    return exchange(ctx, ++last_seq_, frame, reply);
  }

  void close() {
    if (closed_.exchange(true, std::memory_order_acq_rel)) return;
    stream_.shutdown();  // wakes a caller waiting in poll
    std::lock_guard lock(mutex_);
    for (turn_waiter* w = first_waiter_; w != nullptr; w = w->next) w->wake.notify_one();
  }

  // Callers waiting for their turn (for tests).
  std::size_t waiting() const {
    std::lock_guard lock(mutex_);
    std::size_t count = 0;
    for (const turn_waiter* w = first_waiter_; w != nullptr; w = w->next) ++count;
    return count;
  }

 private:
  bool connected() const noexcept { return !closed_.load(std::memory_order_acquire); }

  struct wake_on_stop {
    const net::event_fd* wake;
    void operator()() const noexcept { wake->signal(); }
  };

  // A caller waiting for its turn, in arrival order; lives on that caller's stack.
  struct turn_waiter {
    std::condition_variable wake;
    std::chrono::steady_clock::time_point since{};  // by the runtime's clock; unread in strict order
    bool granted = false;                           // the turn was handed to it: busy_ stayed true for it
    turn_waiter* next = nullptr;
    turn_waiter* prev = nullptr;
  };
  struct wake_waiter_on_stop {
    blocking_client_engine* engine;
    turn_waiter* waiter;
    void operator()() const noexcept {
      std::lock_guard lock(engine->mutex_);
      waiter->wake.notify_one();
    }
  };

  // Waits for the connection to be free, within the call's deadline and stop token. Returns the
  // outcome of a call that never got its turn, or nothing once the turn is this caller's.
  std::optional<call_outcome> take_turn(const context& ctx) {
    {
      std::lock_guard lock(mutex_);
      if (take_free_turn()) return std::nullopt;
    }
    turn_waiter me;
    // Made before the lock is taken: a stop already requested runs the callback at once, and it
    // takes the lock.
    std::optional<std::stop_callback<wake_waiter_on_stop>> on_stop;
    if (ctx.stop_token().stop_possible()) on_stop.emplace(ctx.stop_token(), wake_waiter_on_stop{this, &me});
    std::unique_lock lock(mutex_);
    if (take_free_turn()) return std::nullopt;  // freed while the stop callback was being made
    if constexpr (overtake_limit.count() > 0) me.since = runtime_->now();
    enqueue(me);
    for (;;) {
      if (me.granted) return std::nullopt;  // dequeued by whoever granted it
      // Free, and nobody ahead of us: the turn is ours (an earlier holder released it normally).
      if (first_waiter_ == &me && take_free_turn()) {
        dequeue(me);
        return std::nullopt;
      }
      enum class refusal { none, closed, canceled, deadline };
      refusal why = refusal::none;
      if (!connected())
        why = refusal::closed;
      else if (ctx.stop_token().stop_requested())
        why = refusal::canceled;
      else if (ctx.deadline() && std::chrono::steady_clock::now() >= *ctx.deadline())
        why = refusal::deadline;
      if (why != refusal::none) {
        dequeue(me);
        lock.unlock();  // before on_stop goes (its callback takes the lock), and before allocating
        return why == refusal::closed     ? connection_closed_outcome()
               : why == refusal::canceled ? canceled_outcome()
                                          : deadline_exceeded_outcome();
      }
      if (ctx.deadline())
        me.wake.wait_until(lock, *ctx.deadline());
      else
        me.wake.wait(lock);
    }
  }

  // With mutex_ held: takes the turn if the connection is free and open.
  bool take_free_turn() noexcept {
    if (busy_ || !connected()) return false;
    busy_ = true;
    return true;
  }

  // Ends this caller's turn: hands it straight to the first waiter if that one has been overtaken
  // long enough (at once, in strict arrival order), otherwise frees the connection and wakes the
  // first waiter to take it (a caller that comes meanwhile may take it first).
  void pass_turn() {
    std::lock_guard lock(mutex_);
    // Only the caller whose turn it is passes it; a granted turn kept busy_ true for its taker.
    GEERPC_ASSERT(busy_, "blocking client: a turn passed by a caller that did not have it");
    turn_waiter* first = first_waiter_;
    if (first == nullptr) {
      busy_ = false;
      return;
    }
    if (owed_turn(*first)) {
      dequeue(*first);
      first->granted = true;  // busy_ stays true: the turn is first's
    } else {
      busy_ = false;
    }
    first->wake.notify_one();  // under the lock: once it returns, `first` may be gone
  }

  // Whether the first waiter `first` is handed the turn now rather than left to race for it.
  bool owed_turn(const turn_waiter& first) const noexcept {
    if constexpr (overtake_limit.count() == 0)
      return true;
    else
      return runtime_->now() - first.since >= overtake_limit;
  }

  void enqueue(turn_waiter& w) noexcept {
    w.prev = last_waiter_;
    (last_waiter_ != nullptr ? last_waiter_->next : first_waiter_) = &w;
    last_waiter_ = &w;
  }
  void dequeue(turn_waiter& w) noexcept {
    // Each waiter is dequeued once, by itself or by whoever grants it the turn, under mutex_.
    GEERPC_ASSERT((w.prev == nullptr) == (first_waiter_ == &w) && (w.next == nullptr) == (last_waiter_ == &w),
                  "blocking client: a waiter dequeued that is not queued");
    (w.prev != nullptr ? w.prev->next : first_waiter_) = w.next;
    (w.next != nullptr ? w.next->prev : last_waiter_) = w.prev;
    w.next = w.prev = nullptr;
  }

  enum class wait_outcome { ready, timed_out, canceled };

  // Waits for `events` on the socket, and what the stream's session wants, within the call's
  // deadline; a stop request interrupts it.
  wait_outcome wait(short events, const context& ctx, const typename wait_strategy::waiter& waiter) {
    const short watched = stream_.readiness(events);  // the session's wants() replace `events` (rule 3)
    // Look without sleeping for a moment first: on loopback a reply is often microseconds away,
    // and waking from poll onto a halted CPU costs more (spin.hpp). A stop request ends the spin
    // and is then seen below, like one that comes while asleep; the call's deadline ends it too.
    const auto stopped = [&] { return ctx.stop_token().stop_requested(); };
    if (events == POLLIN && waiter.may_spin() &&
        waiter.spin_within([&] { return stopped() || net::ready_now(stream_.fd(), watched); }, ctx.deadline()) &&
        !stopped())
      return wait_outcome::ready;
    for (;;) {
      switch (net::wait_for(stream_.fd(), watched, ctx.deadline(), wake_.get())) {
        case net::wait_result::ready:
          return wait_outcome::ready;
        case net::wait_result::timeout:
          return wait_outcome::timed_out;
        case net::wait_result::woken:
          wake_.drain();  // may be left over from an earlier call's stop_token: check ours
          if (ctx.stop_token().stop_requested()) return wait_outcome::canceled;
      }
    }
  }

  call_outcome exchange(const context& ctx, std::uint64_t seq, std::span<std::byte> frame, const reply_sink& reply) {
    if (ctx.stop_token().stop_requested()) return canceled_outcome();
    const auto waiter = wait_.waiting();  // joins the runtime's waiting callers, where it counts them
    const auto now = std::chrono::steady_clock::now();
    if (ctx.deadline() && *ctx.deadline() <= now) return deadline_exceeded_outcome();
    // Whole frames left by earlier calls answer calls that have returned (this one's request is not
    // sent yet): dropped. Junk there breaks the connection now, before this request goes out.
    if (!drop_held_frames()) return broken();
    // A goaway that came behind an earlier reply: this request is not sent.
    if (going_away_.load(std::memory_order_relaxed)) return going_away_outcome();
    std::optional<std::stop_callback<wake_on_stop>> on_stop;
    if (ctx.stop_token().stop_possible()) on_stop.emplace(ctx.stop_token(), wake_on_stop{&wake_});

    stamp_request(frame, seq, budget_us(ctx.deadline(), now));
    // What the socket does not take stays queued in order and goes out before the next call's frame.
    for (auto status = writer_.write(frame); status != net::frame_writer::status::done; status = writer_.flush()) {
      if (status == net::frame_writer::status::broken) return broken();
      switch (wait(POLLOUT, ctx, waiter)) {
        case wait_outcome::ready:
          break;
        case wait_outcome::timed_out:
          return deadline_exceeded_outcome();
        case wait_outcome::canceled:
          return canceled_outcome();
      }
    }

    // Reads frames up to this call's reply and no further: what follows it in the stream stays held
    // for the next call. A call that got its reply succeeds, whatever comes after it.
    bool dropped = false;
    for (;;) {
      wire::frame_view f;
      switch (take_frame(f)) {
        case held_frame::broken:
          return broken();
        case held_frame::whole:
          if (f.header.seq != seq) {  // a late reply to a call that gave up: dropped
            dropped = true;
            continue;
          }
          if (f.header.status != 0) return response_outcome(f.header.status, f.text);
          reply(f.body);
          trim_buffer();
          return call_outcome{};
        case held_frame::partial:
          break;
      }
      // Replies that are not ours may keep coming without a pause, and then the wait below, where
      // the deadline and the stop token are otherwise seen, is never reached: look at them here.
      if (dropped) {
        dropped = false;
        if (ctx.stop_token().stop_requested()) return cancel(seq);
        if (ctx.deadline() && std::chrono::steady_clock::now() >= *ctx.deadline()) return deadline_exceeded_outcome();
      }
      // Read until would_block (rule 1, stream.hpp): a session's would_block means nothing is
      // held, so only then is the socket waited on.
      switch (receive()) {
        case net::io_status::closed:
          return broken();
        case net::io_status::data:
          continue;
        case net::io_status::would_block:
          switch (wait(POLLIN, ctx, waiter)) {
            case wait_outcome::ready:
              continue;
            case wait_outcome::timed_out:
              return deadline_exceeded_outcome();
            case wait_outcome::canceled:
              return cancel(seq);
          }
      }
    }
  }

  // Tells the server that call `seq` gave up waiting for its reply (its stop token fired).
  call_outcome cancel(std::uint64_t seq) {
    const auto frame = cancel_frame(seq);
    writer_.write(frame);
    return canceled_outcome();
  }

  // What the front of the received bytes holds.
  enum class held_frame { whole, partial, broken };

  // Takes the next whole frame off the received bytes into `f` (a view into buffer_, valid until
  // the next receive()); or says that the frame there is not whole yet, or that the stream is
  // broken (a length out of bounds, a malformed frame, a frame that is not a response).
  held_frame take_frame(wire::frame_view& f) {
    for (;;) {
      const std::span<const std::byte> held(buffer_.data() + begin_, end_ - begin_);
      const wire::frame_scan scan = wire::scan_frame(held, max_frame_size_);
      switch (scan.what) {
        case wire::frame_scan::state::need_more:
          return held_frame::partial;
        case wire::frame_scan::state::too_large:
        case wire::frame_scan::state::too_small:
          return held_frame::broken;
        case wire::frame_scan::state::complete:
          break;
      }
      if (wire::parse_frame(held.first(scan.size), f) != nullptr) return held_frame::broken;
      begin_ += scan.size;
      if (f.header.kind == wire::frame_kind::response) return held_frame::whole;
      if (f.header.kind != wire::frame_kind::goaway) return held_frame::broken;
      going_away_.store(true, std::memory_order_relaxed);  // noted, and the next frame is looked at
    }
  }

  // Drops the whole frames held; false if the stream is broken.
  bool drop_held_frames() {
    wire::frame_view f;
    for (;;) {
      switch (take_frame(f)) {
        case held_frame::whole:
          continue;
        case held_frame::partial:
          return true;
        case held_frame::broken:
          return false;
      }
    }
  }

  // Receives after the bytes held, which are the start of one frame (take_frame() said so), making
  // room first: they move to the front, and a buffer they fill doubles, up to the size of their
  // frame (its length prefix has been checked against the limit). A peer gets memory by sending
  // bytes, not by claiming a size. Forced inline: exchange() is its one caller, and the call per
  // read would cost the fast path more than the stream seam's check of its session does.
  [[gnu::always_inline]] net::io_status receive() {
    if (begin_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (end_ == buffer_.size()) {
      const wire::frame_scan scan = wire::scan_frame(std::span<const std::byte>(buffer_.data(), end_), max_frame_size_);
      buffer_.resize(std::max(std::min(buffer_.size() * 2, scan.size), buffer_.size() + 1));
    }
    // Room was made above: a frame's bytes never fill a buffer that it is allowed to grow.
    GEERPC_ASSERT(begin_ == 0 && end_ < buffer_.size(), "blocking client: no room to receive into");
    const net::io_result r = stream_.read_some(std::span<std::byte>(buffer_).subspan(end_));
    if (r.status == net::io_status::data) end_ += r.bytes;
    return r.status;
  }

  // After a big reply: gives the grown buffer back, keeping what is held for the next call.
  void trim_buffer() {
    if (buffer_.size() <= blocking_client_constants::kept_buffer || end_ - begin_ > initial_buffer_size) return;
    std::vector<std::byte> smaller(initial_buffer_size);
    std::memcpy(smaller.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    buffer_.swap(smaller);
  }

  call_outcome broken() {
    close();
    return connection_closed_outcome();
  }

  net::stream stream_;
  const std::uint32_t server_max_frame_size_;
  // Its CPU budget, waiting callers, clock and writer blocks; no thread (this transport starts no
  // scheduler).
  const std::shared_ptr<runtime> runtime_;
  net::frame_writer writer_;
  const std::uint32_t max_frame_size_;  // of a reply
  net::event_fd wake_;                  // a stop_token's way into poll()
  const wait_strategy wait_;            // whether a caller spins before it sleeps
  static constexpr std::size_t initial_buffer_size = blocking_client_constants::initial_buffer;
  // Received bytes: [begin_, end_) are not consumed yet. Only the caller whose turn it is touches them.
  std::vector<std::byte> buffer_ = std::vector<std::byte>(initial_buffer_size);
  std::size_t begin_ = 0, end_ = 0;
  std::atomic<bool> closed_{false};
  std::atomic<bool> going_away_{false};  // the server sent goaway: new calls fail with errc::going_away

  mutable std::mutex mutex_;  // guards busy_ and the waiters
  bool busy_ = false;         // a caller has the turn
  turn_waiter* first_waiter_ = nullptr;
  turn_waiter* last_waiter_ = nullptr;
  std::uint64_t last_seq_ = 0;  // only touched by the caller whose turn it is
};

}  // namespace detail
GEERPC_END_NAMESPACE
