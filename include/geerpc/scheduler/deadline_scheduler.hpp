// geerpc: the one timer thread behind every deadline that nobody waits on in poll(): a threaded
// client's call deadlines, the server's handle timeouts, callers' budgets and handshake timeouts.
// (dial() and the blocking client wait on their socket themselves, with the deadline as poll's
// timeout.) A binary heap of timers ordered by deadline and a std::jthread that sleeps until the
// earliest one: no thread per call, and a call without a deadline costs nothing here.
//
// The timers are the owners' objects (a call's, a request's), so a deadline costs no allocation:
// the heap holds pointers to them and each timer knows its slot, which makes cancel() O(log n).
//
// Callbacks run on the scheduler thread, one at a time, and must be short and must not block:
// they flip an atomic state, request a stop, queue a frame. cancel() waits for a running callback,
// so once it returns the callback's context may be destroyed.
//
// Its owner is a runtime (runtime.hpp), which also chooses its clock: steady_clock, or a
// manual_clock that a test moves by hand. Its thread reads the clock once per look at the heap;
// the engines read it through now() where they set a deadline or decide one has passed (a null
// test before the clock read they made anyway: no indirect call on a call's path).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "../config.hpp"
#include "../detail/assert.hpp"
#include "../detail/chrono.hpp"
#include "manual_clock.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class deadline_scheduler {
 public:
  using clock = std::chrono::steady_clock;
  using callback = void (*)(void* context);

  // One deadline, owned by whoever set it. While it is queued the scheduler points at it, so it
  // stays where it is (neither copied nor moved) from schedule() until cancel() has returned or its
  // callback has run. The scheduler's mutex guards every field.
  class timer {
   public:
    timer() = default;
    timer(const timer&) = delete;
    timer& operator=(const timer&) = delete;

   private:
    friend class deadline_scheduler;
    static constexpr std::size_t unqueued = static_cast<std::size_t>(-1);
    clock::time_point when_{};
    callback fn_ = nullptr;
    void* context_ = nullptr;
    std::size_t slot_ = unqueued;  // its index in the heap
  };

  // With `manual` (not null, outliving the scheduler), deadlines fall due by its time, not by
  // steady_clock's, and the thread sleeps until catch_up() is called.
  explicit deadline_scheduler(const manual_clock* manual = nullptr) : manual_(manual), thread_([this] { run(); }) {}

  ~deadline_scheduler() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    finished_.notify_all();  // a catch_up() still waiting returns
    // thread_ joins here, unless this is the scheduler thread: a callback may let go of the last
    // owner (a call's continuation frees the last client of the program). A thread cannot join
    // itself: it is told to leave run() without touching this object again, and let go.
    if (std::this_thread::get_id() == thread_.get_id()) {
      *destroyed_ = true;
      thread_.detach();
    }
  }

  deadline_scheduler(const deadline_scheduler&) = delete;
  deadline_scheduler& operator=(const deadline_scheduler&) = delete;

  // Queues `t` to call fn(context) at `when`; a timer already queued moves to the new deadline.
  // May be called from a callback, for its own timer too.
  void schedule(timer& t, clock::time_point when, callback fn, void* context) {
    GEERPC_ASSERT(fn != nullptr, "deadline_scheduler: a timer needs a callback");
    std::lock_guard lock(mutex_);
    GEERPC_ASSERT(queued_here(t), "deadline_scheduler: a timer queued on another scheduler, or moved while queued");
    if (t.slot_ == timer::unqueued) {
      heap_.push_back(&t);  // first: if it throws, nothing has changed
      t.slot_ = heap_.size() - 1;
    }
    t.when_ = when;
    t.fn_ = fn;
    t.context_ = context;
    sift_down(t.slot_);
    sift_up(t.slot_);
    // Wake the thread only if it would sleep past this deadline. Most timers are cancelled before
    // they fire (a call answered in time), and the thread may still be set to wake for one of those:
    // it then wakes early once, finds the later deadline, and sleeps again. Waking it on every
    // schedule would cost a context switch per call.
    if (when < wakes_at_) {
      wakes_at_ = when;
      wake_.notify_one();
    }
  }

  // Takes `t` off the queue. If its callback is running, first waits for it to return (except on
  // the scheduler thread), and then takes off the deadline that callback may have set again.
  // Returns true when it took a deadline off the queue. Harmless on a timer never scheduled.
  bool cancel(timer& t) {
    std::unique_lock lock(mutex_);
    if (std::this_thread::get_id() != thread_.get_id()) finished_.wait(lock, [&] { return running_ != &t; });
    GEERPC_ASSERT(queued_here(t), "deadline_scheduler: a timer queued on another scheduler, or moved while queued");
    if (t.slot_ == timer::unqueued) return false;
    remove(t.slot_);
    return true;
  }

  std::size_t pending() const {
    std::lock_guard lock(mutex_);
    return heap_.size();
  }

  // The time deadlines are measured against: the manual clock's, or steady_clock's.
  clock::time_point now() const noexcept { return manual_ != nullptr ? manual_->now() : clock::now(); }
  // The manual clock now() reads, or null for steady_clock: for a part that reads the time
  // without the scheduler (net::frame_writer's stall clock).
  const manual_clock* manual() const noexcept { return manual_; }

  // Returns once the thread has looked at the heap after this call began, and run every callback
  // due by then: after a manual clock moved, every deadline it passed has fired. Not from a callback.
  void catch_up() {
    GEERPC_ASSERT(std::this_thread::get_id() != thread_.get_id(), "deadline_scheduler: catch_up() from a callback");
    std::unique_lock lock(mutex_);
    const std::uint64_t ticket = ++looks_asked_;
    wake_.notify_all();
    finished_.wait(lock, [&] { return looks_done_ >= ticket || stopping_; });
  }

 private:
  // Whether `t` is unqueued or sits where it says it does in this heap. Called with mutex_ held.
  bool queued_here(const timer& t) const noexcept {
    return t.slot_ == timer::unqueued || (t.slot_ < heap_.size() && heap_[t.slot_] == &t);
  }

  // A heap of deadlines, earliest at slot 0; every move writes the timer's slot back.
  void place(std::size_t slot, timer* t) noexcept {
    heap_[slot] = t;
    t->slot_ = slot;
  }
  void sift_up(std::size_t slot) noexcept {
    timer* const t = heap_[slot];
    while (slot > 0) {
      const std::size_t parent = (slot - 1) / 2;
      if (!(t->when_ < heap_[parent]->when_)) break;
      place(slot, heap_[parent]);
      slot = parent;
    }
    place(slot, t);
  }
  void sift_down(std::size_t slot) noexcept {
    timer* const t = heap_[slot];
    const std::size_t size = heap_.size();
    for (std::size_t child = 2 * slot + 1; child < size; child = 2 * slot + 1) {
      if (child + 1 < size && heap_[child + 1]->when_ < heap_[child]->when_) ++child;
      if (!(heap_[child]->when_ < t->when_)) break;
      place(slot, heap_[child]);
      slot = child;
    }
    place(slot, t);
  }
  void remove(std::size_t slot) noexcept {
    GEERPC_ASSERT(slot < heap_.size() && heap_[slot]->slot_ == slot, "deadline_scheduler: a timer's slot is stale");
    timer* const gone = heap_[slot];
    timer* const last = heap_.back();
    heap_.pop_back();
    gone->slot_ = timer::unqueued;
    if (last == gone) return;
    place(slot, last);
    sift_down(slot);
    sift_up(last->slot_);
  }

  void run() {
    // Set by a destructor that runs inside a callback, on this thread; outlives the scheduler.
    const std::shared_ptr<bool> destroyed = destroyed_;
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      if (heap_.empty()) {
        // After a storm of deadlines, give back what the heap grew to.
        if (heap_.capacity() > 4096) std::vector<timer*>().swap(heap_);
        wakes_at_ = clock::time_point::max();
        looked(lock);
        continue;
      }
      timer& first = *heap_.front();
      // A copy: the timer may be cancelled while we wait, and wait_until reads its argument again.
      if (const clock::time_point when = first.when_; when > now()) {
        wakes_at_ = when;
        looked(lock, when);
        continue;
      }
      wakes_at_ = clock::time_point::min();  // awake: running callbacks, it looks at the heap again
      const callback fn = first.fn_;
      void* const context = first.context_;
      remove(0);
      GEERPC_ASSERT(running_ == nullptr, "deadline_scheduler: one callback at a time");
      running_ = &first;
      lock.unlock();
      fn(context);             // may destroy `first`: from here on it is only an address to compare
      if (*destroyed) return;  // and the scheduler itself (`lock` no longer owns the mutex)
      lock.lock();
      running_ = nullptr;
      finished_.notify_all();
    }
  }

  // Nothing is due now: answers catch_up() calls made before this look, then sleeps until
  // `until` (by steady_clock; a manual clock's time moves only with a catch_up()) or a wake-up.
  void looked(std::unique_lock<std::mutex>& lock, clock::time_point until = clock::time_point::max()) {
    if (looks_done_ != looks_asked_) {
      looks_done_ = looks_asked_;
      finished_.notify_all();
    }
    if (manual_ != nullptr || until == clock::time_point::max())
      wake_.wait(lock);
    else
      wake_.wait_until(lock, until);
  }

  const manual_clock* const manual_;  // null: steady_clock
  mutable std::mutex mutex_;
  std::condition_variable wake_;      // a deadline earlier than wakes_at_, or stopping
  std::condition_variable finished_;  // a callback returned, or a look answered catch_up()
  // Shared with run(): set by a destructor called from a callback, read after the scheduler is gone.
  const std::shared_ptr<bool> destroyed_ = std::make_shared<bool>(false);
  std::vector<timer*> heap_;
  const timer* running_ = nullptr;  // whose callback runs now
  // When the thread will next look at the heap by itself: max() asleep with no timer, min() awake.
  clock::time_point wakes_at_ = clock::time_point::min();
  std::uint64_t looks_asked_ = 0;  // catch_up() calls made
  std::uint64_t looks_done_ = 0;   // of them, answered by a look at the heap
  bool stopping_ = false;
  std::jthread thread_;  // last member: starts after the rest is built, joins before it is torn down
};

}  // namespace detail
GEERPC_END_NAMESPACE
