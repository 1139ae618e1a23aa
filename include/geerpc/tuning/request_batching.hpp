// geerpc: a threaded client's requests wait for each other, so that requests made together leave
// in one send. When the reading thread hands out a batch of replies, the callers it wakes each send
// their next request as soon as they run: one send, and one wake-up of the server, per call. They
// need not, because the threads about to send are known: the callers whose call has completed but
// who have not yet returned from it, and a reader handing out replies (it completes more calls).
// While any of them is due, a new request is held in the writer (frame_writer::hold), and whoever
// brings the count back to zero sends everything held, in one send.
//
// That last thread is most often a caller on its way back with its own next request: sending the
// lot as it returns, and its own request a moment later, makes two sends per batch. So a caller
// that has come straight back for its next call several times in a row (quick_streak returns, each
// within quick_return) keeps the lot held as it returns, and its next request takes the lot along.
// Any other send on the connection takes it too. Should that caller not come back (it pauses, calls
// another client, its next call ends before it sends), the watchdog sends what is held while
// nobody is due at its next look: the others' requests then wait up to max_hold, once per such
// pause. The held bit is only a hint there: a send that began before a hold may clear it once
// nobody is due, so the watchdog asks the writer whether frames wait, and sends frames it finds
// waiting at two looks in a row whoever is due.
//
// Only a synchronous caller back for more after a batch of replies holds its request; an
// asynchronous call never waits. Every thread counted is running the library's code with nothing
// to wait for but a CPU: a caller between its completion and its return, a reader handing out what
// one recv brought. So a held request waits for those threads to be scheduled, never for the peer,
// and for the application only through the gap of a caller that keeps coming straight back; in
// case the operating system keeps them waiting (an overloaded CPU, a thread of low priority), a
// watchdog on the scheduler thread (watchdog.hpp) sends a request held across two of its looks,
// max_hold apart. It runs only while requests are held.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <span>
#include <utility>

#include "../config.hpp"
#include "../detail/assert.hpp"
#include "../detail/chrono.hpp"
#include "../net/frame_writer.hpp"
#include "../scheduler/deadline_scheduler.hpp"
#include "watchdog.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class due_senders {
 public:
  // The watchdog's period: it sends a request still held at a second look, so at most about two
  // of these after the hold began. On one CPU, 32 callers woken together take a few hundred
  // microseconds to run one after another: a bound below that would send batches early for
  // nothing.
  static constexpr std::chrono::milliseconds max_hold{1};

  // A caller whose last quick_streak calls each came within quick_return of its return from the
  // one before keeps what is held for its next request. The lot then waits for that caller's gap
  // between calls, which has lately been about what one send costs; the streak keeps a caller
  // that alternates quick calls with work in between from making the lot wait for the watchdog.
  static constexpr std::chrono::microseconds quick_return{10};
  static constexpr unsigned quick_streak = 4;

  // A thread will send soon: a caller whose call is about to complete, a reader about to hand out
  // replies. Each arrive() is matched by exactly one leave().
  void arrive() noexcept {
    const std::uint32_t before = state_.fetch_add(1, std::memory_order_seq_cst);
    // The count stays below the held bit: far fewer threads than that are ever due at once.
    GEERPC_ASSERT((before & ~held_bit) < held_bit - 1, "due_senders: too many threads due");
  }

  // That thread is done. Returns true when it was the last one due and something is held: it must
  // then send what is held and call sent(), unless it is a caller that keeps the lot for its next
  // request (see the top).
  bool leave() noexcept {
    const std::uint32_t before = state_.fetch_sub(1, std::memory_order_seq_cst);
    // Every leave() matches an arrive(): the count of threads due never goes below zero.
    GEERPC_ASSERT((before & ~held_bit) != 0, "due_senders: a thread left that was not due");
    return before == (held_bit | 1);
  }

  // Whether a request sent now should be held instead.
  bool any() const noexcept { return (state_.load(std::memory_order_seq_cst) & ~held_bit) != 0; }

  // Called once a request is held. Returns true when nobody is due any more (the last one left
  // between any() and the hold): the holder must then send it, and call sent(). Otherwise the
  // last one to leave sends it (or keeps it, see the top): whichever of the two comes second in
  // the state's order sees the other.
  bool held() noexcept { return (state_.fetch_or(held_bit, std::memory_order_seq_cst) & ~held_bit) == 0; }

  // What was held has been sent (by the thread that owed it, by the watchdog, or by any send that
  // took it along, since every send takes what is queued): the hold ends unless threads became
  // due meanwhile, whose last one will then send again. The bit stays set until the send is done,
  // so that a watchdog sees a hold whose sender is kept off the CPU. A send that began before a
  // new hold may end it too early, once nobody is due: the watchdog then finds the frame in the
  // writer (see the top).
  void sent() noexcept {
    std::uint32_t expected = held_bit;
    if (state_.compare_exchange_strong(expected, 0, std::memory_order_seq_cst))
      holds_ended_.fetch_add(1, std::memory_order_relaxed);
  }

  // What a periodic look saw, for the next one.
  struct look {
    bool holding = false;
    std::uint32_t holds_ended = 0;
  };

  // For the watchdog's periodic look: whether a request held at the previous look is still held,
  // with no hold ended in between, so that it has waited a whole period at least.
  bool held_since_last_look(look& last) const noexcept {
    const look now{holding(), holds_ended_.load(std::memory_order_relaxed)};
    const bool stale = now.holding && last.holding && now.holds_ended == last.holds_ended;
    last = now;
    return stale;
  }
  // seq_cst, as held() is: a holder then asks the watchdog for a look (it reads whether one is
  // armed), while a look disarms and then reads this; each must see the other's write.
  bool holding() const noexcept { return (state_.load(std::memory_order_seq_cst) & held_bit) != 0; }

 private:
  static constexpr std::uint32_t held_bit = std::uint32_t{1} << 31;
  std::atomic<std::uint32_t> state_{0};  // the threads due, and held_bit while a request waits for them
  std::atomic<std::uint32_t> holds_ended_{0};
};

// The threaded client's side of it (tuning::automatic's client hooks): due_senders, each caller's
// recent calls, and the watchdog that bounds a hold.
class request_batching {
 public:
  using clock = std::chrono::steady_clock;
  using broken_fn = void (*)(void* engine);  // the writer broke: fail every call

  request_batching(net::frame_writer& writer, deadline_scheduler& scheduler, bool enabled, broken_fn broken,
                   void* engine)
      : writer_(writer),
        enabled_(enabled),
        broken_(broken),
        engine_(engine),
        id_(next_id()),
        watch_(scheduler, due_senders::max_hold, &look, this) {}
  ~request_batching() { stop(); }

  request_batching(const request_batching&) = delete;
  request_batching& operator=(const request_batching&) = delete;

  // Once no call is left to hold a request: after this, no look runs.
  void stop() { watch_.stop(); }

  // A thread will send soon: a synchronous caller whose call is about to be completed (woken, it
  // sends its next request), or a reader about to hand out what one recv brought (it completes
  // calls whose callers send). A reader done with it leaves.
  void arrive() noexcept {
    if (enabled_) due_.arrive();
  }
  void reader_leaves() { leave(false); }

  // A synchronous caller begins a call: whether it may hold its request (it returned from a call
  // of this client last). Notes how quickly it came back.
  bool caller_may_hold(clock::time_point now) noexcept {
    if (!enabled_) return false;
    caller_history& mine = history();
    const bool same_client = std::exchange(mine.returned_from, 0) == id_;
    // Both times come from the engine's runtime clock: a return is never after the next call.
    GEERPC_ASSERT(!same_client || now >= mine.returned_at, "request_batching: a call began before its caller returned");
    const bool quick = same_client && now - mine.returned_at <= due_senders::quick_return;
    mine.quick_returns = quick ? std::min(mine.quick_returns + 1, due_senders::quick_streak) : 0;
    return same_client;
  }

  // Whether the calling thread, on returning now, keeps what is held for its next request: it
  // came straight back for its last quick_streak calls.
  bool caller_keeps_lot() const noexcept {
    const caller_history& mine = history();
    GEERPC_ASSERT(mine.quick_returns <= due_senders::quick_streak, "request_batching: a streak past its cap");
    return mine.quick_returns >= due_senders::quick_streak;
  }

  // Sends a request, or, when allowed, holds it while threads that will send soon are due.
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
      watch_.request();
    return status;
  }

  // A synchronous caller returns from its call, once done with it: the last one due sends what is
  // held, unless it is expected straight back with its next request, which takes the lot along.
  // `now`: by the clock caller_may_hold() is given (the engine's runtime's).
  void caller_returns(clock::time_point now) {
    if (!enabled_) return;
    leave(caller_keeps_lot());
    caller_history& mine = history();
    mine.returned_from = id_;
    mine.returned_at = now;
  }

 private:
  // A synchronous caller's recent calls: the client it returned from last (until it calls again),
  // when, and how many calls in a row came straight back. Per thread, and keyed by a number no
  // other client in the process ever has, so a thread's history reaches only the client it names.
  struct caller_history {
    std::uint64_t returned_from = 0;
    clock::time_point returned_at{};
    unsigned quick_returns = 0;
  };
  static caller_history& history() noexcept {
    thread_local caller_history mine;
    return mine;
  }
  static std::uint64_t next_id() noexcept {
    static std::atomic<std::uint64_t> last{0};
    return last.fetch_add(1, std::memory_order_relaxed) + 1;
  }

  void leave(bool comes_back) {
    if (enabled_ && due_.leave() && !comes_back) send_held();
  }

  // Sends what is held: by the last thread due to leave, or by the watchdog.
  void send_held() {
    const auto status = writer_.flush();
    due_.sent();
    if (status == net::frame_writer::status::broken) broken_(engine_);
  }

  // The watchdog's look, on the scheduler thread: sends what has been held since the last look,
  // and held frames that nobody due will send (kept by a caller that did not come back) or that
  // wait in the writer at two looks in a row (their hold ended early: see the top). Returns
  // whether anything is held.
  static bool look(void* context) {
    auto& self = *static_cast<request_batching*>(context);
    const bool stale = self.due_.held_since_last_look(self.last_look_);  // first: it notes what it saw
    const bool unsent = self.writer_.holds_unsent();
    const bool unsent_before = std::exchange(self.unsent_at_last_look_, unsent);
    if (stale || (unsent && (unsent_before || !self.due_.any()))) self.send_held();
    return self.due_.holding() || self.writer_.holds_unsent();
  }

  net::frame_writer& writer_;
  const bool enabled_;
  const broken_fn broken_;
  void* const engine_;
  const std::uint64_t id_;
  due_senders due_;
  due_senders::look last_look_;       // what the watchdog's last look saw (its thread only)
  bool unsent_at_last_look_ = false;  // and whether the writer held frames then (its thread only)
  watchdog watch_;                    // last: its looks use everything above
};

}  // namespace detail
GEERPC_END_NAMESPACE
