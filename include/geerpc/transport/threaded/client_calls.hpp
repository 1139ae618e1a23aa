// geerpc: the threaded client's two kinds of call, each the engine's pending_call with its own
// way of waiting for completion: a synchronous caller's (blocking_wait_call, on a futex) and an
// asynchronous call's state behind its future (async_call, a mutex and a condition variable).
// The engine (client.hpp) completes either exactly once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "../../client/call.hpp"
#include "../../config.hpp"
#include "../../detail/assert.hpp"
#include "../../detail/chrono.hpp"
#include "../../detail/current_call.hpp"
#include "../../detail/futex.hpp"
#include "../link.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// A synchronous call's completion. The caller announces that it sleeps (a futex), so the completer
// makes the wake-up system call only when someone sleeps. The completer's last touch is the final
// store, so the caller may destroy the call as soon as it sees `released`.
template <class Engine>
class blocking_wait_call final : public Engine::pending_call {
 public:
  void complete() noexcept override {
    const std::uint32_t before = state_.exchange(completed, std::memory_order_acq_rel);
    // Only whoever took the call's entry from the pending table completes it: exactly once.
    GEERPC_ASSERT(before == waiting || before == sleeping, "threaded client: a call completed twice");
    if (before == sleeping) futex_wake_one(state_);
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

// An asynchronous call's state, shared by its future and the engine until the future settles it.
// Waiting uses a mutex and a condition variable, for wait_until; the completer notifies under the
// mutex, so the future may destroy the state as soon as it sees `done`.
template <class Engine>
class async_call final : public Engine::pending_call, public async_state {
 public:
  explicit async_call(std::shared_ptr<Engine> owner, completion_hook hook = {})
      : engine_(std::move(owner)), hook_(std::move(hook)) {
    this->reply = &sink_;
  }

  void complete() noexcept override {
    // This thread may be running a handler (a caller that reads replies, or sees the connection
    // break, completes other calls too): the hook and the continuation (a then() callback, a
    // resumed coroutine) belong to another call and must not inherit that handler's deadline.
    const current_call_scope no_handler(nullptr);
    // Before `done`: the future may destroy the call after that. What the hook throws (it builds
    // strings) must not leave this noexcept function.
    if (hook_) {
      try {
        hook_(this->outcome);
      } catch (...) {
      }
    }
    continuation next;
    {
      std::lock_guard lock(mutex_);
      // Only whoever took the call's entry from the pending table completes it: exactly once.
      GEERPC_ASSERT(!done_, "threaded client: a call completed twice");
      done_ = true;
      next = next_;
      done_changed_.notify_all();
    }
    // Last: it may destroy this call (its owner is the continuation, which nobody else waits for).
    if (next.run != nullptr) next.run(next.context);
  }
  bool then(continuation next) override {
    std::lock_guard lock(mutex_);
    GEERPC_ASSERT(next_.run == nullptr, "threaded client: a call's continuation set twice");
    if (done_) return false;
    next_ = next;
    return true;
  }
  void forget() noexcept override {
    std::lock_guard lock(mutex_);
    next_ = {};
  }
  bool done() const override {
    std::lock_guard lock(mutex_);
    return done_;
  }
  void wait() const override {
    std::unique_lock lock(mutex_);
    done_changed_.wait(lock, [&] { return done_; });
  }
  bool wait_until(std::chrono::steady_clock::time_point deadline) const override {
    std::unique_lock lock(mutex_);
    return done_changed_.wait_until(lock, deadline, [&] { return done_; });
  }
  void cancel() override { engine_->cancel(*this, canceled_outcome(), true); }
  void settle() override { engine_->settle(*this); }
  const call_outcome& final_outcome() const override { return this->outcome; }
  std::span<const std::byte> body() const override { return body_; }

 private:
  std::shared_ptr<Engine> engine_;  // outlives the client if the future does
  completion_hook hook_;
  std::vector<std::byte> body_;
  reply_sink sink_ = reply_sink::into(body_);
  mutable std::mutex mutex_;
  mutable std::condition_variable done_changed_;
  bool done_ = false;
  continuation next_;  // guarded by mutex_
};

}  // namespace detail
GEERPC_END_NAMESPACE
