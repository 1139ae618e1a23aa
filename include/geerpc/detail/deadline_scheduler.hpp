// geerpc: the one timer thread behind every deadline that nobody waits on in poll(): a threaded
// client's call deadlines, the server's handle timeouts, callers' budgets and handshake timeouts.
// (dial() and the blocking client wait on their socket themselves, with the deadline as poll's
// timeout.) A sorted map of (deadline, id) and a std::jthread that sleeps until the earliest one:
// no thread per call, and a call without a deadline costs nothing here.
//
// Callbacks run on the scheduler thread, one at a time, and must be short and must not block:
// they flip an atomic state, request a stop, queue a frame. cancel() waits for a running callback,
// so once it returns the callback's context may be destroyed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class deadline_scheduler {
 public:
  using clock = std::chrono::steady_clock;
  using callback = void (*)(void* context);

  struct timer {
    clock::time_point when{};
    std::uint64_t id = 0;  // 0: no timer
    explicit operator bool() const noexcept { return id != 0; }
  };

  deadline_scheduler() : thread_([this] { run(); }) {}

  ~deadline_scheduler() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    // thread_ joins here. Callbacks never own a client or server, so the last owner of the
    // scheduler is never the scheduler thread itself.
  }

  deadline_scheduler(const deadline_scheduler&) = delete;
  deadline_scheduler& operator=(const deadline_scheduler&) = delete;

  // The process-wide scheduler, created on first use and destroyed (its thread joined) when the last
  // client or server holding it is gone.
  static std::shared_ptr<deadline_scheduler> shared() {
    static std::mutex mutex;
    static std::weak_ptr<deadline_scheduler> current;
    std::lock_guard lock(mutex);
    auto scheduler = current.lock();
    if (!scheduler) {
      scheduler = std::make_shared<deadline_scheduler>();
      current = scheduler;
    }
    return scheduler;
  }

  timer schedule(clock::time_point when, callback fn, void* context) {
    std::lock_guard lock(mutex_);
    const timer t{when, ++last_id_};
    timers_.emplace(std::pair{when, t.id}, entry{fn, context});
    // Wake the thread only if it would sleep past this deadline. Most timers are cancelled before
    // they fire (a call answered in time), and the thread may still be set to wake for one of those:
    // it then wakes early once, finds the later deadline, and sleeps again. Waking it on every
    // schedule would cost a context switch per call.
    if (when < wakes_at_) {
      wakes_at_ = when;
      wake_.notify_one();
    }
    return t;
  }

  // Removes `t` and resets it. Returns true when the callback will never run; false when it already
  // ran or is running, in which case this waits for it to return (except on the scheduler thread).
  bool cancel(timer& t) {
    if (!t) return false;
    std::unique_lock lock(mutex_);
    const bool removed = timers_.erase(std::pair{t.when, t.id}) == 1;
    if (!removed && std::this_thread::get_id() != thread_.get_id())
      finished_.wait(lock, [&] { return running_id_ != t.id; });
    t = timer{};
    return removed;
  }

  std::size_t pending() const {
    std::lock_guard lock(mutex_);
    return timers_.size();
  }

 private:
  struct entry {
    callback fn;
    void* context;
  };

  void run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      if (timers_.empty()) {
        wakes_at_ = clock::time_point::max();
        wake_.wait(lock);
        continue;
      }
      auto first = timers_.begin();
      // A copy: the node may be erased while we wait, and wait_until reads its argument again.
      if (const clock::time_point when = first->first.first; when > clock::now()) {
        wakes_at_ = when;
        wake_.wait_until(lock, when);
        continue;
      }
      wakes_at_ = clock::time_point::min();  // awake: running callbacks, it looks at the map again
      const entry due = first->second;
      running_id_ = first->first.second;
      timers_.erase(first);
      lock.unlock();
      due.fn(due.context);
      lock.lock();
      running_id_ = 0;
      finished_.notify_all();
    }
  }

  mutable std::mutex mutex_;
  std::condition_variable wake_;      // a deadline earlier than wakes_at_, or stopping
  std::condition_variable finished_;  // a callback returned
  std::map<std::pair<clock::time_point, std::uint64_t>, entry> timers_;
  std::uint64_t last_id_ = 0;
  std::uint64_t running_id_ = 0;
  // When the thread will next look at the map by itself: max() asleep with no timer, min() awake.
  clock::time_point wakes_at_ = clock::time_point::min();
  bool stopping_ = false;
  std::jthread thread_;  // last member: starts after the rest is built, joins before it is torn down
};

}  // namespace detail
GEERPC_END_NAMESPACE
