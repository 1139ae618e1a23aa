// geerpc: a lone synchronous caller reads its own reply. The threaded client's receiving thread
// waits for replies and hands each to its caller: a thread wake-up per call. A synchronous call
// that finds no other call pending instead reads the socket itself, as the blocking transport's
// caller does, handing any other call's reply to its owner meanwhile; the receiving thread is
// parked off the socket (it watches only for the connection's end) until calls overlap again.
// Exactly one thread at a time waits for replies on the socket: socket_watch says which.
#pragma once

#include <poll.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

#include "../config.hpp"
#include "../detail/assert.hpp"
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

// The watching caller waits here until its call is done: it reads (`read_once(wait_for_data)`
// returns false once the connection is over), first for a moment without sleeping when that pays
// (spin.hpp), then asleep: in recv() itself when the call has no deadline and the stream allows it
// (one system call instead of two: nothing but the socket can complete such a call, and a close
// shuts the socket down, which ends the recv), otherwise in poll() (for POLLIN and what the
// stream's session wants) with its deadline, at which it calls `expire()`. Returns false when the
// connection is over.
template <class Done, class ReadOnce, class Expire>
bool read_own_reply(const net::stream& stream, const std::optional<std::chrono::steady_clock::time_point>& deadline,
                    const reply_wait& wait, Done done, ReadOnce read_once, Expire expire) {
  bool open = true;
  const auto read = [&](bool wait_for_data) { return open = read_once(wait_for_data); };
  if (wait.may_spin()) wait.spin_until([&] { return done() || !read(false) || done(); });
  if (!deadline && stream.blocking_reads())
    while (open && !done()) read(true);
  while (open && !done()) {
    // Checked before every wait, not only when poll() times out: replies for other calls may keep
    // the socket readable long past this call's deadline.
    if ((deadline && std::chrono::steady_clock::now() >= *deadline) ||
        net::wait_for(stream.fd(), static_cast<short>(POLLIN | stream.wants()), deadline) ==
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
