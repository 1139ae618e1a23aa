// geerpc: the write side of a connection, shared by every thread that answers on it. Frames go out
// whole and never interleaved; a thread that finds another one sending queues its frame and
// returns, and the sender takes the queue along (several frames, one send). It never blocks: what
// the socket does not take waits in a bounded queue until the owner of the connection, told through
// `want_write`, sees the socket writable and calls flush().
//
// The bound is on memory held, not on bytes queued: the capacity of both buffers counts, and a
// buffer grows only within what the limit leaves, so a peer that reads nothing costs at most the
// limit (or one frame larger than it, which may wait alone). The unsent rest of a buffer stays
// where it is, sent from an offset, so a slow reader costs no copying per partial send.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "../config.hpp"
#include "../detail/assert.hpp"
#include "memory_gauge.hpp"
#include "stream.hpp"

GEERPC_BEGIN_NAMESPACE
namespace net {

class frame_writer {
 public:
  using clock = std::chrono::steady_clock;
  // Called with the writer's lock held whenever "bytes wait for the socket to drain" changes.
  using want_write_fn = void (*)(void* context, bool want);

  enum class status {
    done,     // sent, or queued behind a sender that will send it
    pending,  // queued until the socket drains; the owner was told through want_write
    broken,   // the connection failed or the queue overflowed: the owner must close it
  };

  // `gauge`, if given, is kept up to date with the memory this writer holds (added to it as the
  // writer's buffers grow, taken back as they shrink), so that an owner of many writers can read
  // their sum. Only changes of capacity touch it: none on the fast path.
  frame_writer(stream& out, std::size_t max_pending, want_write_fn want_write = nullptr, void* context = nullptr,
               memory_gauge* gauge = nullptr) noexcept
      : stream_(out), max_pending_(max_pending), want_write_(want_write), context_(context), gauge_(gauge) {}
  ~frame_writer() { detach_gauge(); }
  // Gives back what it counted on its owner's gauge, and counts no more: for an owner that must be
  // done with the gauge before the writer itself goes.
  void detach_gauge() noexcept {
    std::lock_guard lock(mutex_);
    if (gauge_ != nullptr) gauge_->sub(held_);
    gauge_ = nullptr;
  }
  frame_writer(const frame_writer&) = delete;
  frame_writer& operator=(const frame_writer&) = delete;

  status write(std::span<const std::byte> frame) {
    std::unique_lock lock(mutex_);
    if (broken_) return status::broken;
    if (sending_ || want_write_now_) {
      if (!append_locked(frame)) return overflow_locked();
      return sending_ ? status::done : status::pending;
    }
    if (!queued_.empty()) {  // held frames: they go out first, with this one, in one send
      if (!append_locked(frame)) return overflow_locked();
      sending_ = true;
      return drain_locked(lock, false);
    }
    // Fast path: nothing queued, nobody sending, so send straight from the caller's buffer.
    sending_ = true;
    lock.unlock();
    const long sent = send_some(frame);
    lock.lock();
    if (sent < 0 || broken_) {  // broken_: another thread gave up on the connection meanwhile
      sending_ = false;
      return break_locked();
    }
    if (static_cast<std::size_t>(sent) < frame.size()) {
      // The rest goes ahead of anything queued meanwhile.
      if (!keep_rest_locked(frame.subspan(static_cast<std::size_t>(sent)))) {
        sending_ = false;
        return overflow_locked();
      }
    } else if (queued_.empty()) {
      sending_ = false;
      return status::done;
    }
    return drain_locked(lock, sent > 0);
  }

  // Queues a frame without sending it, so that frames written in a row go out in one send; the
  // caller owes a flush() (or a later write()) that sends them. Past `batch_limit` queued bytes, or
  // when another thread is sending or the socket is full, this is a plain write().
  static constexpr std::size_t batch_limit = 64u << 10;
  status hold(std::span<const std::byte> frame) {
    std::unique_lock lock(mutex_);
    if (broken_ || sending_ || want_write_now_ || queued_.size() + frame.size() > batch_limit ||
        !append_locked(frame)) {
      lock.unlock();
      return write(frame);
    }
    return status::done;
  }

  // Sends what is queued: held frames, or, when the owner sees the socket writable, what it did not take.
  status flush() {
    std::unique_lock lock(mutex_);
    if (broken_) return status::broken;
    if (sending_) return status::done;
    sending_ = true;
    return drain_locked(lock, false);
  }

  // Whether bytes wait that no send in progress has taken.
  bool has_pending() const {
    std::lock_guard lock(mutex_);
    return !queued_.empty() || (!sending_ && head_ < in_flight_.size());
  }
  // Whether held frames wait with nobody on the way to send them: no send in progress, and the
  // socket not full (then the owner flushes when it drains).
  bool holds_unsent() const {
    std::lock_guard lock(mutex_);
    return !queued_.empty() && !sending_ && !want_write_now_;
  }
  bool broken() const {
    std::lock_guard lock(mutex_);
    return broken_;
  }
  // Broken because replies waiting for the peer to read them would have passed max_pending.
  bool overflowed() const {
    std::lock_guard lock(mutex_);
    return overflowed_;
  }
  // The memory this writer holds for bytes the socket has not taken: what max_pending bounds.
  std::size_t held() const {
    std::lock_guard lock(mutex_);
    return held_;
  }
  // While bytes wait for the socket to drain: since when the socket has taken none of them (the
  // time it filled, or last took some). Empty when nothing waits for the socket.
  std::optional<clock::time_point> stalled_since() const {
    std::lock_guard lock(mutex_);
    if (!want_write_now_) return std::nullopt;
    return stalled_since_;
  }

 private:
  // The unsent bytes are in_flight_[head_..] and then queued_. in_flight_ belongs to the sender
  // while sending_; queued_ takes what other threads write meanwhile. Bytes are left in
  // in_flight_ only while the socket is full (want_write_now_).
  //
  // Precondition: this thread is the sender (sending_ == true). `progressed`: bytes went out
  // already on this call.
  status drain_locked(std::unique_lock<std::mutex>& lock, bool progressed) {
    GEERPC_ASSERT(sending_, "frame_writer: only the sender drains");
    for (;;) {
      if (head_ == in_flight_.size()) {  // all of it sent: take the queue along
        in_flight_.clear();
        head_ = 0;
        if (queued_.empty()) break;
        release_if_large(in_flight_);  // an emptied buffer a burst grew is not kept while the next one is sent
        in_flight_.swap(queued_);
        account_locked();
      }
      lock.unlock();
      const long sent = send_some(std::span<const std::byte>(in_flight_).subspan(head_));
      lock.lock();
      if (sent < 0 || broken_) {
        sending_ = false;
        std::vector<std::byte>().swap(in_flight_);
        head_ = 0;
        return break_locked();
      }
      head_ += static_cast<std::size_t>(sent);
      GEERPC_ASSERT(head_ <= in_flight_.size(), "frame_writer: the socket took more than it was given");
      if (sent > 0) progressed = true;
      if (head_ < in_flight_.size()) {  // the socket is full: the owner flushes once it drains
        sending_ = false;
        if (progressed || !want_write_now_) stalled_since_ = clock::now();
        set_want_write(true);
        return status::pending;
      }
    }
    sending_ = false;
    set_want_write(false);
    // A burst of big replies should not pin its memory for the life of an idle connection.
    release_if_large(queued_);
    release_if_large(in_flight_);
    account_locked();
    return status::done;
  }

  // Appends to the queue if the memory that takes stays within the limit. The queue grows by
  // doubling, but never past what the limit leaves beside the other buffer.
  bool append_locked(std::span<const std::byte> frame) {
    const std::size_t need = queued_.size() + frame.size();
    if (need > queued_.capacity()) {
      // An idle in_flight_ holds nothing worth keeping when room is short.
      if (!sending_ && in_flight_.empty() && need > room_beside(in_flight_)) release(in_flight_);
      const std::size_t room = room_beside(in_flight_);
      if (need > room) return false;
      queued_.reserve(std::max(need, std::min(2 * queued_.capacity(), room)));
    }
    queued_.insert(queued_.end(), frame.begin(), frame.end());
    account_locked();
    return true;
  }

  // Keeps the unsent rest of a frame whose first bytes went out (in_flight_ is idle and empty).
  // Alone, it may exceed the limit: one frame always can wait; beside queued frames it must fit.
  bool keep_rest_locked(std::span<const std::byte> rest) {
    GEERPC_ASSERT(in_flight_.empty() && head_ == 0, "frame_writer: a rest goes ahead only of queued frames");
    if (in_flight_.capacity() < rest.size() || in_flight_.capacity() > room_beside(queued_)) release(in_flight_);
    if (std::max(in_flight_.capacity(), rest.size()) > room_beside(queued_)) {
      if (!queued_.empty()) return false;
      release(queued_);  // only what an empty queue kept from before
    }
    in_flight_.assign(rest.begin(), rest.end());
    head_ = 0;
    account_locked();
    return true;
  }

  std::size_t room_beside(const std::vector<std::byte>& other) const noexcept {
    return other.capacity() < max_pending_ ? max_pending_ - other.capacity() : 0;
  }

  // Broken because what waits for the socket would pass max_pending.
  status overflow_locked() {
    overflowed_ = true;
    return break_locked();
  }
  status break_locked() {
    broken_ = true;
    release(queued_);
    if (!sending_) {  // a sender still owns in_flight_: it lets go of it when it sees broken_
      release(in_flight_);
      head_ = 0;
    }
    account_locked();
    set_want_write(false);
    return status::broken;
  }

  void set_want_write(bool want) {
    if (want == want_write_now_) return;
    want_write_now_ = want;
    if (want_write_ != nullptr) want_write_(context_, want);
  }

  // Brings held_ (and the owner's total) up to date after the buffers' capacity may have changed.
  void account_locked() noexcept {
    const std::size_t now = queued_.capacity() + in_flight_.capacity();
    // Within the limit, but for one frame that waits alone (keep_rest_locked()).
    GEERPC_ASSERT(now <= max_pending_ || queued_.empty() || in_flight_.empty(), "frame_writer: held past the limit");
    if (now == held_) return;
    if (gauge_ != nullptr) {
      if (now > held_)
        gauge_->add(now - held_);
      else
        gauge_->sub(held_ - now);
    }
    held_ = now;
  }

  // Bytes the stream took, 0 when it has no room now (the owner then waits for POLLOUT | wants()
  // and flushes), -1 when the connection is broken. Outside the lock: any thread may write.
  long send_some(std::span<const std::byte> bytes) noexcept {
    const io_result r = stream_.write_some(bytes);
    return r.status == io_status::closed ? -1 : static_cast<long>(r.bytes);
  }

  static void release(std::vector<std::byte>& buffer) noexcept { std::vector<std::byte>().swap(buffer); }
  static void release_if_large(std::vector<std::byte>& buffer) noexcept {
    if (buffer.empty() && buffer.capacity() > (64u << 10)) release(buffer);
  }

  stream& stream_;
  const std::size_t max_pending_;
  const want_write_fn want_write_;
  void* const context_;
  memory_gauge* gauge_;  // null once detached (detach_gauge)
  mutable std::mutex mutex_;
  std::vector<std::byte> queued_;      // waiting to be sent, in order, after in_flight_
  std::vector<std::byte> in_flight_;   // being sent by the current sender, outside the lock, from head_
  std::size_t head_ = 0;               // in_flight_'s bytes before this have been sent
  std::size_t held_ = 0;               // queued_.capacity() + in_flight_.capacity()
  clock::time_point stalled_since_{};  // meaningful while want_write_now_
  bool sending_ = false;
  bool want_write_now_ = false;
  bool broken_ = false;
  bool overflowed_ = false;  // broken_ by overflow_locked()
};

}  // namespace net
GEERPC_END_NAMESPACE
