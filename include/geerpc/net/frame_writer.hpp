// geerpc: the write side of a connection, shared by every thread that answers on it. Frames go out
// whole and never interleaved; a thread that finds another one sending queues its frame and
// returns, and the sender takes the queue along (several frames, one send). It never blocks (but
// close() waits for a send in progress): what
// the socket does not take waits in a bounded queue until the owner of the connection, told through
// `want_write`, sees the socket writable and calls flush().
//
// The bound is on memory held, not on bytes queued: the queue is a list of fixed-size blocks
// (net/chunk_queue.hpp), each counted whole, and a block is added only within the limit, so a peer
// that reads nothing costs at most the limit (or one frame larger than it, which may wait alone),
// in resident memory as in the books: a block goes back as soon as its bytes are sent, and an idle
// writer holds none. Queued bytes are copied once, into the blocks, and sent from there in one
// gather write; the fast path (nothing queued) sends from the caller's buffer. A block that cannot
// be had (no memory) breaks the connection, as an overflow does: a reply is sent whole or the
// connection closes, never left half-queued.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <new>
#include <optional>
#include <span>

#include "../config.hpp"
#include "../detail/assert.hpp"
#include "../detail/chrono.hpp"
#include "../scheduler/manual_clock.hpp"
#include "chunk_queue.hpp"
#include "memory_gauge.hpp"
#include "output_chunk.hpp"
#include "stream.hpp"

GEERPC_BEGIN_NAMESPACE
namespace net {

class frame_writer {
 public:
  using clock = std::chrono::steady_clock;
  // Called with the writer's lock held whenever "bytes wait for the socket to drain" changes.
  using want_write_fn = void (*)(void* context, bool want);

  enum class status {
    done,     // sent, or queued behind a sender that will send it; dropped after write_last()
    pending,  // queued until the socket drains; the owner was told through want_write
    broken,   // the connection failed or the queue overflowed: the owner must close it
  };

  // `gauge`, if given, is kept up to date with the memory this writer holds (added to it as the
  // writer's buffers grow, taken back as they shrink), so that an owner of many writers can read
  // their sum. Only changes of capacity touch it: none on the fast path. Its blocks come from
  // `pool` (its runtime's, which must outlive the writer), or straight from the allocator when null.
  // `manual`: the clock stalled_since() reads, when the owner's runtime has a manual one (the
  // owner's timers measure by it); null: steady_clock.
  frame_writer(stream& out, std::size_t max_pending, want_write_fn want_write = nullptr, void* context = nullptr,
               memory_gauge* gauge = nullptr, chunk_pool* pool = nullptr,
               const geerpc::detail::manual_clock* manual = nullptr) noexcept
      : stream_(out),
        max_pending_(max_pending),
        want_write_(want_write),
        context_(context),
        gauge_(gauge),
        manual_(manual),
        queue_(block_size_for(out, max_pending), pool) {}
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

  // A session's write that found the socket full may need its retry to offer at least as many
  // bytes as that try did, from the same start (TLS: the records it sealed; OpenSSL fails a
  // shorter retry with "bad length"). A retry starts with the same bytes. A session that makes a
  // record of one buffer (TLS: a buffer of a record's size or more, or the last one) needs that
  // buffer as long again, so the rest of a frame cut short starts a block of its own, and blocks
  // with room for a whole record keep every such retry long enough, whatever the limit.
  static constexpr std::size_t session_block = 32u << 10;
  static std::size_t block_size_for(const stream& out, std::size_t max_pending) noexcept {
    const std::size_t size = chunk_pool::block_size(max_pending);
    return out.plain() ? size : std::max(size, session_block);
  }

  status write(std::span<const std::byte> frame) {
    std::unique_lock lock(mutex_);
    if (broken_) return status::broken;
    if (sealed_) return status::done;  // the last words are written: nothing goes after them
    if (sending_ || want_write_now_) {
      if (const queued q = append_locked(frame); q != queued::yes) return refuse_locked(q);
      return sending_ ? status::done : status::pending;
    }
    if (!queue_.empty()) {
      // Held frames: they go out first, with this one, in one send. Nothing waits for the peer
      // yet, so the limit does not apply: held frames are at most batch_limit bytes.
      if (const queued q = append_locked(frame, false); q != queued::yes) return refuse_locked(q);
      sending_ = true;
      return drain_locked(lock, false);
    }
    // Fast path: nothing queued, nobody sending, so send straight from the caller's buffer.
    sending_ = true;
    lock.unlock();
    const long sent = send_some(frame);
    lock.lock();
    if (sent < 0 || broken_) {  // broken_: another thread gave up on the connection meanwhile
      stop_sending_locked();
      return break_locked();
    }
    if (static_cast<std::size_t>(sent) < frame.size()) {
      // The rest goes ahead of anything queued meanwhile.
      if (const queued q = keep_rest_locked(frame.subspan(static_cast<std::size_t>(sent))); q != queued::yes) {
        stop_sending_locked();
        return refuse_locked(q);
      }
    } else if (queue_.empty()) {
      stop_sending_locked();
      return status::done;
    }
    return drain_locked(lock, sent > 0);
  }

  // Queues a frame without sending it, so that frames written in a row go out in one send; the
  // caller owes a flush() (or a later write()) that sends them. Past `batch_limit` queued bytes, or
  // when another thread is sending or the socket is full, this is a plain write().
  // batch_limit trades fewer sends for bytes held back: past it a batch is worth its own send.
  static constexpr std::size_t batch_limit = 64u << 10;
  status hold(std::span<const std::byte> frame) {
    std::unique_lock lock(mutex_);
    if (broken_ || sealed_ || sending_ || want_write_now_ || queue_.bytes() + frame.size() > batch_limit ||
        append_locked(frame, false) != queued::yes) {
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

  // The last bytes the connection sends (an answer before it closes): waits for a send in progress
  // on another thread, as close() does, then sends them after whatever is queued; every write
  // after it is dropped (status::done). Unlike write(), done means that the socket took every
  // byte, so that the owner may shut the stream down at once; pending: some wait for the socket,
  // and a flush() sends them (last_sent() says when none is left). Never on the sending thread,
  // nor from the want_write hook.
  status write_last(std::span<const std::byte> frame) {
    std::unique_lock lock(mutex_);
    ++closers_waiting_;
    sender_done_.wait(lock, [this] { return !sending_; });
    --closers_waiting_;
    if (broken_) return status::broken;
    sealed_ = true;
    if (const queued q = append_locked(frame, false); q != queued::yes) return refuse_locked(q);
    sending_ = true;
    return drain_locked(lock, false);
  }
  // write_last() was called, and the socket took its bytes: nothing waits, and nobody is sending.
  bool last_sent() const {
    std::lock_guard lock(mutex_);
    return sealed_ && queue_.empty() && !sending_;
  }

  // The connection closes: waits for a send in progress on another thread (its whole drain,
  // which never blocks), sends what the socket takes now, and drops the rest; every write after
  // it is refused (status::broken), and the writer holds no memory. What waits behind that
  // sender, or is held, may be the reply of a request already counted out (a graceful shutdown
  // closes once its last request has finished): shutting the stream down under the sender would
  // cut it off. Call it before the stream is shut down; never on the sending thread, nor from the
  // want_write hook (which runs with this writer's lock held).
  void close() {
    std::unique_lock lock(mutex_);
    ++closers_waiting_;
    sender_done_.wait(lock, [this] { return !sending_; });
    --closers_waiting_;
    if (!broken_) {
      sending_ = true;
      drain_locked(lock, false);
    }
    break_locked();
  }

  // Whether bytes wait that no send in progress has taken.
  bool has_pending() const {
    std::lock_guard lock(mutex_);
    return queue_.bytes() > taken_;
  }
  // Whether held frames wait with nobody on the way to send them: no send in progress, and the
  // socket not full (then the owner flushes when it drains).
  bool holds_unsent() const {
    std::lock_guard lock(mutex_);
    return !queue_.empty() && !sending_ && !want_write_now_;
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
  // The unsent bytes are queue_'s. While sending_, its first taken_ bytes are the sender's: it sends
  // them outside the lock, and nobody else moves or frees them; other threads append after them.
  // Bytes wait in the queue with nobody sending them only while held (hold()) or while the socket
  // is full (want_write_now_).
  //
  // Precondition: this thread is the sender (sending_ == true). `progressed`: bytes went out
  // already on this call.
  // Blocks per send (4 MiB of standard ones): fewer system calls for a long queue against the
  // iovec array on the sender's stack.
  static constexpr std::size_t max_parts = 64;
  status drain_locked(std::unique_lock<std::mutex>& lock, bool progressed) {
    GEERPC_ASSERT(sending_, "frame_writer: only the sender drains");
    while (!queue_.empty()) {
      ::iovec parts[max_parts];
      std::size_t offered = 0;
      const std::size_t count = queue_.gather(parts, offered);
      GEERPC_ASSERT(count > 0 && offered > 0, "frame_writer: a queue that is not empty has bytes at its head");
      taken_ = offered;
      lock.unlock();
      const long sent = send_some(std::span<const ::iovec>(parts, count));
      lock.lock();
      taken_ = 0;
      if (sent < 0 || broken_) {
        stop_sending_locked();
        return break_locked();
      }
      queue_.consume(static_cast<std::size_t>(sent));  // blocks sent go back at once
      account_locked();
      if (sent > 0) progressed = true;
      if (static_cast<std::size_t>(sent) < offered) {  // the socket is full: the owner flushes once it drains
        stop_sending_locked();
        if (progressed || !want_write_now_) stalled_since_ = manual_ != nullptr ? manual_->now() : clock::now();
        set_want_write(true);
        return status::pending;
      }
    }
    stop_sending_locked();
    set_want_write(false);
    return status::done;
  }

  // The sender lets go; a closer waiting for it (close()) is woken.
  void stop_sending_locked() {
    sending_ = false;
    if (closers_waiting_ != 0) sender_done_.notify_all();
  }

  enum class queued { yes, over_limit, no_memory };

  // Appends to the queue if the blocks that takes stay within the limit (when `limited`).
  queued append_locked(std::span<const std::byte> frame, bool limited = true) {
    // Alone (nothing queued), a frame may always wait, as keep_rest_locked() lets a rest: the
    // limit bounds what waits beside it.
    if (limited && !queue_.empty() &&
        queue_.held() + queue_.blocks_to_append(frame.size()) * queue_.block_size() > max_pending_)
      return queued::over_limit;
    try {
      queue_.append(frame);  // all or nothing
    } catch (const std::bad_alloc&) {
      return queued::no_memory;
    }
    account_locked();
    return queued::yes;
  }

  // Keeps the unsent rest of a frame whose first bytes went out, ahead of anything queued
  // meanwhile. Alone, it may exceed the limit: one frame always can wait; beside queued frames it
  // must fit.
  queued keep_rest_locked(std::span<const std::byte> rest) {
    GEERPC_ASSERT(taken_ == 0, "frame_writer: a rest goes ahead only of queued frames");
    if (!queue_.empty() && queue_.held() + queue_.blocks_for(rest.size()) * queue_.block_size() > max_pending_)
      return queued::over_limit;
    try {
      queue_.prepend(rest);  // all or nothing
    } catch (const std::bad_alloc&) {
      return queued::no_memory;
    }
    account_locked();
    return queued::yes;
  }

  // A frame that could not be queued breaks the connection: part of it may be on the wire
  // already, and the peer must not wait for the rest. Over the limit, it counts as an overflow.
  status refuse_locked(queued why) {
    if (why == queued::over_limit) overflowed_ = true;
    return break_locked();
  }
  status break_locked() {
    broken_ = true;
    if (!sending_) queue_.clear();  // a sender still owns its bytes: it lets go once it sees broken_
    account_locked();
    set_want_write(false);
    return status::broken;
  }

  void set_want_write(bool want) {
    if (want == want_write_now_) return;
    want_write_now_ = want;
    if (want_write_ != nullptr) want_write_(context_, want);
  }

  // Brings held_ (and the owner's total) up to date after the queue may have gained or lost blocks.
  void account_locked() noexcept {
    const std::size_t now = queue_.held();
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
  template <class Bytes>
  long send_some(Bytes bytes) noexcept {
    const io_result r = stream_.write_some(bytes);
    return r.status == io_status::closed ? -1 : static_cast<long>(r.bytes);
  }

  stream& stream_;
  const std::size_t max_pending_;
  const want_write_fn want_write_;
  void* const context_;
  memory_gauge* gauge_;                               // null once detached (detach_gauge)
  const geerpc::detail::manual_clock* const manual_;  // null: steady_clock
  mutable std::mutex mutex_;
  chunk_queue queue_;                    // waiting to be sent, in order
  std::size_t taken_ = 0;                // queue_'s first bytes, which the sender is sending outside the lock
  std::size_t held_ = 0;                 // queue_.held(), as counted on the gauge
  clock::time_point stalled_since_{};    // meaningful while want_write_now_
  std::condition_variable sender_done_;  // a sender let go, notified while closers_waiting_
  int closers_waiting_ = 0;
  bool sending_ = false;
  bool want_write_now_ = false;
  bool broken_ = false;
  bool sealed_ = false;      // write_last() was called: later writes are dropped
  bool overflowed_ = false;  // broken_ by a frame over the limit (refuse_locked())
};

}  // namespace net
GEERPC_END_NAMESPACE
