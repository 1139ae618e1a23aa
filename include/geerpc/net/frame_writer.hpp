// geerpc: the write side of a connection, shared by every thread that answers on it. Frames go out
// whole and never interleaved; a thread that finds another one sending queues its frame and
// returns, and the sender takes the queue along (several frames, one send). It never blocks: what
// the socket does not take waits in a bounded queue until the owner of the connection, told through
// `want_write`, sees the socket writable and calls flush().
#pragma once

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <span>
#include <vector>

#include "../config.hpp"
#include "socket.hpp"

GEERPC_BEGIN_NAMESPACE
namespace net {

class frame_writer {
 public:
  // Called with the writer's lock held whenever "bytes wait for the socket to drain" changes.
  using want_write_fn = void (*)(void* context, bool want);

  enum class status {
    done,     // sent, or queued behind a sender that will send it
    pending,  // queued until the socket drains; the owner was told through want_write
    broken,   // the connection failed or the queue overflowed: the owner must close it
  };

  frame_writer(int fd, std::size_t max_pending, want_write_fn want_write = nullptr, void* context = nullptr) noexcept
      : fd_(fd), max_pending_(max_pending), want_write_(want_write), context_(context) {}

  status write(std::span<const std::byte> frame) {
    std::unique_lock lock(mutex_);
    if (broken_) return status::broken;
    if (sending_ || want_write_now_) {
      if (queued_.size() + frame.size() > max_pending_) return break_locked();
      queued_.insert(queued_.end(), frame.begin(), frame.end());
      return sending_ ? status::done : status::pending;
    }
    if (!queued_.empty()) {  // held frames: they go out first, with this one, in one send
      queued_.insert(queued_.end(), frame.begin(), frame.end());
      sending_ = true;
      return drain_locked(lock);
    }
    // Fast path: nothing queued, nobody sending, so send straight from the caller's buffer.
    sending_ = true;
    lock.unlock();
    const long sent = send_some(fd_, frame.data(), frame.size());
    lock.lock();
    if (sent < 0 || broken_) {  // broken_: another thread gave up on the connection meanwhile
      sending_ = false;
      return break_locked();
    }
    const auto rest = frame.subspan(static_cast<std::size_t>(sent));
    queued_.insert(queued_.begin(), rest.begin(), rest.end());  // ahead of anything queued meanwhile
    return drain_locked(lock);
  }

  // Queues a frame without sending it, so that frames written in a row go out in one send; the
  // caller owes a flush() (or a later write()) that sends them. Past `batch_limit` queued bytes, or
  // when another thread is sending or the socket is full, this is a plain write().
  static constexpr std::size_t batch_limit = 64u << 10;
  status hold(std::span<const std::byte> frame) {
    std::unique_lock lock(mutex_);
    if (broken_ || sending_ || want_write_now_ || queued_.size() + frame.size() > batch_limit) {
      lock.unlock();
      return write(frame);
    }
    queued_.insert(queued_.end(), frame.begin(), frame.end());
    return status::done;
  }

  // Sends what is queued: held frames, or, when the owner sees the socket writable, what it did not take.
  status flush() {
    std::unique_lock lock(mutex_);
    if (broken_) return status::broken;
    if (sending_) return status::done;
    sending_ = true;
    return drain_locked(lock);
  }

  bool has_pending() const {
    std::lock_guard lock(mutex_);
    return !queued_.empty();
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

 private:
  // Precondition: this thread is the sender (sending_ == true).
  status drain_locked(std::unique_lock<std::mutex>& lock) {
    while (!queued_.empty()) {
      in_flight_.swap(queued_);
      lock.unlock();
      const long sent = send_some(fd_, in_flight_.data(), in_flight_.size());
      lock.lock();
      if (sent < 0 || broken_) {
        sending_ = false;
        in_flight_.clear();
        return break_locked();
      }
      if (static_cast<std::size_t>(sent) < in_flight_.size()) {
        queued_.insert(queued_.begin(), in_flight_.begin() + sent, in_flight_.end());
        in_flight_.clear();
        sending_ = false;
        set_want_write(true);
        return status::pending;
      }
      in_flight_.clear();
    }
    sending_ = false;
    set_want_write(false);
    release_if_large(queued_);
    release_if_large(in_flight_);
    return status::done;
  }

  status break_locked() {
    broken_ = true;
    queued_.clear();
    set_want_write(false);
    return status::broken;
  }

  void set_want_write(bool want) {
    if (want == want_write_now_) return;
    want_write_now_ = want;
    if (want_write_ != nullptr) want_write_(context_, want);
  }

  // A burst of big replies should not pin its memory for the life of an idle connection.
  static void release_if_large(std::vector<std::byte>& buffer) {
    if (buffer.empty() && buffer.capacity() > (64u << 10)) std::vector<std::byte>().swap(buffer);
  }

  const int fd_;
  const std::size_t max_pending_;
  const want_write_fn want_write_;
  void* const context_;
  mutable std::mutex mutex_;
  std::vector<std::byte> queued_;     // waiting to be sent, in order
  std::vector<std::byte> in_flight_;  // being sent by the current sender, outside the lock
  bool sending_ = false;
  bool want_write_now_ = false;
  bool broken_ = false;
};

}  // namespace net
GEERPC_END_NAMESPACE
