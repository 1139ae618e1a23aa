// geerpc: the clocks a server connection's wire session (wire_session.hpp) keeps on its peer: when
// it last spoke, and the two timers that drop it when it stalls: the stall timer (a hello or a
// frame begun and not finished in time; after the last words, the wait for EOF) and the write timer
// (replies the peer does not read).
//
// A base of wire_session<Connection>, which `Connection` derives from (a template parameter, so
// that no call is virtual): it reaches the connection's server context, closed(), close(),
// writer(), observer() and shared_from_this() through it, and its opening and last words to
// learn what the stall timer watches. wire_session makes it a friend for that.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../detail/deadline.hpp"
#include "../scheduler/deadline_scheduler.hpp"
#include "context.hpp"
#include "statistics.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

template <class Connection>
class wire_session;
template <class Connection>
class last_words;

template <class Connection>
class session_timers {
 public:
  using clock = std::chrono::steady_clock;

  session_timers(const session_timers&) = delete;
  session_timers& operator=(const session_timers&) = delete;

 protected:
  session_timers() = default;
  ~session_timers() = default;

  // The last bytes read, or reply sent (with statistics), and when the connection was made.
  void touch(clock::time_point now) noexcept {
    last_activity_ns_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
  }
  clock::time_point last_activity() const noexcept {
    return clock::time_point(clock::duration(last_activity_ns_.load(std::memory_order_relaxed)));
  }
  clock::time_point opened() const noexcept { return opened_; }

 private:
  // The timers' controls are wire_session's alone, as they were when they were its own members:
  // disarm_stall_timer() cancels outside the lock because only the connection's reader (and the
  // last words, through wire_session) arms the stall timer, a rule the compiler keeps by keeping
  // the connection's other code, and handler threads, away from them.
  friend class wire_session<Connection>;
  friend class last_words<Connection>;  // forget_partial(), arm_stall_timer()

  // A frame begun and not finished (`buffered` bytes of it held) starts its clock, which later
  // bytes of the same frame do not reset (a trickling peer gains nothing); a new frame starts a new
  // clock. The timer is armed once and re-arms itself while the frame it finds pending is younger
  // than the limit, so this path costs a clock read, not a timer per read.
  void watch_partial(bool completed, std::size_t buffered) {
    if (buffered != 0) {
      if (completed || partial_since_ns_.load(std::memory_order_relaxed) == 0)
        partial_since_ns_.store(server().config.scheduler()->now().time_since_epoch().count(),
                                std::memory_order_relaxed);
      arm_stall_timer(server().config.options().timeouts.frame);
    } else {
      partial_since_ns_.store(0, std::memory_order_relaxed);
      if (stall_armed_.load(std::memory_order_relaxed)) disarm_stall_timer();
    }
  }
  // No frame is pending any more (the last words: the stall timer waits for EOF instead).
  void forget_partial() noexcept { partial_since_ns_.store(0, std::memory_order_relaxed); }

  // The stall timer: armed while the peer owes us the rest of a hello or of a frame. While armed it
  // holds a reference to the connection (stall_guard_), so that its callback never outlives the
  // connection whichever thread drops the last other reference. Whoever takes the guard decides:
  // the callback closes the connection; a disarm (the frame completed, or a close) keeps the
  // guard, and so the connection, until cancel() has waited out a callback already running.
  // cancel() is never called with stall_mutex_ held: the callback needs that lock.
  void arm_stall_timer(std::chrono::nanoseconds limit) {
    if (limit <= std::chrono::nanoseconds::zero()) return;  // 0 or negative: no limit (options.hpp)
    std::lock_guard lock(stall_mutex_);
    if (stall_guard_ || connection().closed()) return;  // closed: a closer has disarmed, and must stay the last
    // Scheduled first: if that throws, no guard is left behind to keep the connection alive. The
    // callback cannot run before the guard is set: it needs stall_mutex_.
    // By the runtime's clock, as partial_since_ns_ and on_stall's look.
    server().config.scheduler()->schedule(stall_timer_, saturating_deadline(server().config.scheduler()->now(), limit),
                                          &on_stall, this);
    stall_guard_ = connection().shared_from_this();
    stall_armed_.store(true, std::memory_order_relaxed);
  }
  void disarm_stall_timer() {
    std::shared_ptr<Connection> guard;
    {
      std::lock_guard lock(stall_mutex_);
      guard.swap(stall_guard_);
      stall_armed_.store(false, std::memory_order_relaxed);
    }
    // Whoever took the guard cancels: that also takes off a deadline that a running callback set
    // again before it saw the guard gone. Cancelling after the lock is released is safe because
    // only the connection's reader arms the timer (and answer_sent(), once, after the last words,
    // when the reader neither arms nor disarms it any more), and a closer sets closed_ before
    // disarming, so nobody arms it again in between.
    if (guard) server().config.scheduler()->cancel(stall_timer_);
  }  // `guard` goes here, after any running callback has returned

  // The write timer: armed when replies start waiting for the socket to drain (whoever wrote
  // last learns it from the writer: status::pending), it closes a connection whose socket took
  // none of their bytes for timeouts.write. One timer per stall, not per write: when it fires it
  // looks at the writer, and waits again if bytes went out since, or lets go if all of them did.
  // It holds the connection as the stall timer does (write_guard_, under stall_mutex_), and is
  // disarmed the same way, by close().
  void arm_write_timer() {
    const std::chrono::nanoseconds limit = server().config.options().timeouts.write;
    if (limit <= std::chrono::nanoseconds::zero()) return;
    std::lock_guard lock(stall_mutex_);
    if (write_guard_ || connection().closed()) return;
    // By the runtime's clock, as the writer's stalled_since().
    server().config.scheduler()->schedule(write_timer_, saturating_deadline(server().config.scheduler()->now(), limit),
                                          &on_write_stall, this);
    write_guard_ = connection().shared_from_this();
  }
  void disarm_write_timer() {
    std::shared_ptr<Connection> guard;
    {
      std::lock_guard lock(stall_mutex_);
      guard.swap(write_guard_);
    }
    // As in disarm_stall_timer(): a closer set closed_ first, so nobody arms it again meanwhile.
    if (guard) server().config.scheduler()->cancel(write_timer_);
  }

  Connection& connection() noexcept { return static_cast<Connection&>(*this); }
  server_context& server() noexcept { return connection().context_; }

  static void on_stall(void* raw) {
    auto& self = *static_cast<session_timers*>(raw);
    Connection& owner = self.connection();
    std::shared_ptr<Connection> guard;
    bool watching_frames = false;
    {
      std::lock_guard lock(self.stall_mutex_);
      if (!self.stall_guard_) return;  // a disarm won the race and is waiting for us to return
      // Past the handshake the timer watches frames: if the frame pending now began after this
      // timer was armed, it has time left; wait for it instead of closing.
      // After the last words it waits for EOF, not for a frame (eof_wait()): no second chance.
      watching_frames = owner.opening_.greeted() && !owner.closing_after_output_.load(std::memory_order_relaxed);
      const auto since = self.partial_since_ns_.load(std::memory_order_relaxed);
      if (watching_frames && since != 0 && !owner.closed()) {
        const auto due = saturating_deadline(clock::time_point(clock::duration(since)),
                                             self.server().config.options().timeouts.frame);
        if (due > self.server().config.scheduler()->now()) {
          self.server().config.scheduler()->schedule(self.stall_timer_, due, &on_stall, &self);
          return;  // the guard stays with the new timer
        }
      }
      guard.swap(self.stall_guard_);
      self.stall_armed_.store(false, std::memory_order_relaxed);
    }
    if (!guard) return;
    if (!owner.closed())
      owner.observer().turned_away(watching_frames ? limit_kind::frame_timeout : limit_kind::handshake_timeout);
    owner.close();
  }

  static void on_write_stall(void* raw) {
    auto& self = *static_cast<session_timers*>(raw);
    Connection& owner = self.connection();
    std::shared_ptr<Connection> guard;
    bool expired = false;
    {
      std::lock_guard lock(self.stall_mutex_);
      if (!self.write_guard_) return;  // a disarm won the race and is waiting for us to return
      if (!owner.closed()) {
        // The writer's clock restarts whenever the socket takes bytes: until it has run for the
        // whole limit, wait again. Nothing waiting for the socket: the next stall arms anew.
        if (const auto since = owner.writer().stalled_since()) {
          const auto due = saturating_deadline(*since, self.server().config.options().timeouts.write);
          if (due > self.server().config.scheduler()->now()) {
            self.server().config.scheduler()->schedule(self.write_timer_, due, &on_write_stall, &self);
            return;  // the guard stays with the new timer
          }
          expired = true;
        }
      }
      guard.swap(self.write_guard_);
    }
    if (!expired) return;
    owner.observer().turned_away(limit_kind::write_timeout);
    owner.close();
  }  // `guard` goes here: it may be the connection's last reference

  std::mutex stall_mutex_;
  deadline_scheduler::timer stall_timer_;
  // What keeps a callback from outliving what it reads is its guard, not the order of members: a
  // base's members are destroyed after the session's own (its stream and writer), and a queued
  // timer always holds its guard, and so the whole connection.
  std::shared_ptr<Connection> stall_guard_;  // set while the stall timer is armed
  deadline_scheduler::timer write_timer_;
  std::shared_ptr<Connection> write_guard_;      // set while the write timer is armed (stall_mutex_)
  std::atomic<bool> stall_armed_{false};         // a hint that lets the common case skip stall_mutex_
  std::atomic<clock::rep> partial_since_ns_{0};  // when the pending frame began; 0: none
  const clock::time_point opened_ = clock::now();
  std::atomic<clock::rep> last_activity_ns_{opened_.time_since_epoch().count()};  // with statistics
};

}  // namespace detail
GEERPC_END_NAMESPACE
