// geerpc: a lone synchronous caller reads its own reply. The threaded client's receiving thread
// waits for replies and hands each to its caller: a thread wake-up per call. A synchronous call
// that finds no other call pending instead reads the socket itself, as the blocking transport's
// caller does, handing any other call's reply to its owner meanwhile; the receiving thread is
// parked off the socket (it watches only for the connection's end) until calls overlap again.
// Exactly one thread at a time waits for replies on the socket: socket_watch says which.
#pragma once

#include <poll.h>

#include <atomic>
#include <cstdint>
#include <optional>

#include "../config.hpp"
#include "../detail/assert.hpp"
#include "../detail/chrono.hpp"
#include "../net/socket.hpp"
#include "../net/stream.hpp"
#include "spin.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// Who waits for replies on the socket. Changed under the client's lock on its pending table; the
// receiving thread reads it without the lock, and whoever makes it the watcher wakes it
// afterwards, so a stale read only costs it one more turn of its loop. Invariant (under that
// lock): a pending call means a watcher.
class socket_watch {
 public:
  // A call was just added to the pending table. Returns whether its caller, which may read its
  // own reply (`may_read`), is to watch; sets `wake_receiver` when the receiving thread must be
  // woken to watch instead.
  bool call_added(bool may_read, bool& wake_receiver) noexcept {
    if (who_.load(std::memory_order_relaxed) != who::nobody) return false;
    who_.store(may_read ? who::caller : who::receiver, std::memory_order_relaxed);
    wake_receiver = !may_read;
    return may_read;
  }

  // The caller that watched is done: the receiving thread takes over while calls are pending.
  // Returns whether it must be woken for that.
  bool caller_done(bool calls_pending) noexcept {
    // Only call_added() makes a caller the watcher, and only from nobody; nothing but this hands
    // the watch on from a caller: the one calling is still the watcher.
    GEERPC_ASSERT(who_.load(std::memory_order_relaxed) == who::caller,
                  "socket_watch: a caller that does not watch hands the watch on");
    who_.store(calls_pending ? who::receiver : who::nobody, std::memory_order_relaxed);
    return calls_pending;
  }

  // The receiving thread, after it read: with nothing pending, it leaves the socket to the next
  // synchronous caller.
  void receiver_read(bool calls_pending) noexcept {
    // Pending calls keep a watcher (under the client's lock), whoever it is.
    GEERPC_ASSERT(!calls_pending || who_.load(std::memory_order_relaxed) != who::nobody,
                  "socket_watch: calls pending and nobody waits for their replies");
    if (!calls_pending && who_.load(std::memory_order_relaxed) == who::receiver)
      who_.store(who::nobody, std::memory_order_relaxed);
  }

  // Whether the receiving thread waits for replies now (otherwise only for the connection's end).
  bool receiver_watches() const noexcept { return who_.load(std::memory_order_relaxed) == who::receiver; }

 private:
  enum class who : std::uint8_t { nobody, receiver, caller };
  std::atomic<who> who_{who::nobody};
};

// The socket's receive timeout (SO_RCVTIMEO), kept so that a watching caller with a deadline
// sleeps in recv() alone, as one without does, instead of in poll() and then recv(): one system
// call per reply instead of two. The kernel rounds such a timeout up, to its tick and, beyond 63
// ticks, to its timer wheel's coarser steps (about an eighth of the timeout): so the timeout is
// kept short, 16 or 32 ms, where it ends at most a tick or two late (20 ms at HZ=100), and at
// least 25 ms before the deadline. A long wait wakes every 32 ms to look at the clock; the last
// stretch before a deadline is waited in poll(), which keeps it to the microsecond. The timeout is
// set only when the socket's does not fit the wait (set once for calls with like deadlines). Only
// the watching caller, under the engine's reading lock, uses it.
class receive_timeout {
 public:
  // The least time left to the deadline when a recv under the timeout ends: room for the kernel's
  // rounding, against the stretch that costs a poll() and a recv() per reply.
  static constexpr std::chrono::milliseconds margin{25};
  // The timeouts used: short enough that the kernel rounds them by a tick or two, long enough
  // that a long wait wakes only about 30 times a second to look at the clock.
  static constexpr std::chrono::milliseconds short_step{16};
  static constexpr std::chrono::milliseconds long_step{32};

  // Whether the watcher may wait in recv() now, `left` before its deadline (none: no deadline);
  // sets the socket's timeout first when the one set does not fit.
  bool arm(int fd, const std::optional<std::chrono::steady_clock::duration>& left) noexcept {
    const std::chrono::milliseconds want = step_for(left);
    if (left && want.count() == 0) return false;  // too close to the deadline: poll
    if (!fits(set_, want, left.has_value())) {
      if (!net::set_receive_timeout(fd, want)) return false;
      set_ = want;
    }
    // A recv under the timeout ends at least the margin before the deadline; without one, it
    // waits for data alone.
    GEERPC_ASSERT(left ? set_.count() != 0 && set_ + margin <= *left : set_.count() == 0,
                  "receive_timeout: a recv that may outlast its call's deadline");
    return true;
  }

  // The step for a wait of `left` (none: 0, no timeout); 0 with `left` given: too short for recv.
  static std::chrono::milliseconds step_for(const std::optional<std::chrono::steady_clock::duration>& left) noexcept {
    if (!left) return std::chrono::milliseconds(0);
    const auto usable = std::chrono::duration_cast<std::chrono::milliseconds>(*left) - margin;
    if (usable < short_step) return std::chrono::milliseconds(0);
    return usable < long_step ? short_step : long_step;
  }

  // Whether the timeout `set` does for a wait that wants `want`: never longer than it, and no
  // timeout only for no deadline.
  static bool fits(std::chrono::milliseconds set, std::chrono::milliseconds want, bool deadline) noexcept {
    if (!deadline) return set.count() == 0;
    return set.count() != 0 && set <= want;
  }

  std::chrono::milliseconds current() const noexcept { return set_; }

 private:
  std::chrono::milliseconds set_{0};  // what the socket has: 0, no timeout (a fresh socket's)
};

// The watching caller waits here until its call is done: it reads (`read_once(wait_for_data)`
// returns false once the connection is over), first for a moment without sleeping when that pays
// (spin.hpp), then asleep: in recv() itself when the stream allows it (nothing but the socket can
// complete such a call, and a close shuts the socket down, which ends the recv), with the socket's
// receive timeout below the call's deadline (receive_timeout above); otherwise, and in the last
// stretch before the deadline, in poll() (for POLLIN and what the stream's session wants) with
// the deadline, at which it calls `expire()`. Returns false when the connection is over. `now`
// reads the clock the deadline is compared with (steady_clock's; a test's fake one).
template <class Done, class ReadOnce, class Expire, class Now = steady_now>
bool read_own_reply(const net::stream& stream, const std::optional<std::chrono::steady_clock::time_point>& deadline,
                    const reply_wait& wait, receive_timeout& timeout, Done done, ReadOnce read_once, Expire expire,
                    Now now_fn = {}) {
  bool open = true;
  const auto read = [&](bool wait_for_data) { return open = read_once(wait_for_data); };
  // Nothing else ends this spin at the deadline: no timer is armed for a caller that reads its own reply.
  if (wait.may_spin()) wait.spin_within([&] { return done() || !read(false) || done(); }, deadline);
  while (open && !done()) {
    // Checked before every wait, not only when a wait times out: replies for other calls may keep
    // the socket readable long past this call's deadline.
    std::optional<std::chrono::steady_clock::duration> left;
    if (deadline) {
      const auto now = now_fn();
      if (now >= *deadline) {
        expire();
        break;
      }
      left = *deadline - now;
    }
    if (stream.blocking_reads() && timeout.arm(stream.fd(), left)) {
      read(true);  // a reply, EAGAIN at the receive timeout, or the connection's end
      continue;
    }
    // Bytes a session holds (a record read with an earlier one) never make the socket readable.
    if (!stream.buffered() && net::wait_for(stream.fd(), static_cast<short>(POLLIN | stream.wants()), deadline) ==
                                  net::wait_result::timeout) {
      expire();
      break;
    }
    read(false);
  }
  return open;
}

}  // namespace detail
GEERPC_END_NAMESPACE
