// geerpc: one reactor of the threaded server: an epoll set (reactor_io.hpp) and an elastic pool
// of threads around it, in the leader/followers style. The life of one request:
//
//   1. One thread of the reactor at a time, the leader, waits for I/O (reactor_io::lead()), reads
//      every ready connection and turns complete frames into requests.
//   2. The leader stops leading, takes the first new request and queues the rest. Before it runs
//      a handler, a thread makes sure the I/O stays led: it wakes a waiting thread, or, when none
//      waits, starts a new one. A woken thread takes a queued request before it leads, and does
//      the same before it runs it; so requests queued behind slow handlers get a thread each, one
//      after another, and a burst of quick ones costs few wake-ups.
//   3. server_connection::run() runs the handler and answers unless the request was answered
//      already (its deadline or a cancel won: exactly one response); then the request is finished.
//
// The pool starts with its core size (its share of threads.handlers) plus one threads, and grows
// by its tuning's pool_grow (tuning::automatic: pool_growth.hpp's rule), one thread at a time,
// while the server's handler budget (below) has room. Threads above the core size retire after
// threads.idle_timeout without work. A thread that cannot be started is counted; the requests wait
// for a thread that exists, and the pool may try again a little later (as it does when the budget
// is spent: another reactor's thread may retire).
//
// The budget is threads.max_handlers, one for the whole server: every thread of a reactor but the
// first (the one left to lead) takes a unit of it as it starts and gives it back as it retires. So
// one busy connection may grow its reactor's pool to the server's max_handlers, less the core
// threads of the other reactors, which never retire.
// The pool's threads are named "geerpc-r<index>" (top -H, /proc/<pid>/task/*/comm).
//
// The tuning policy's two server strategies (tuning/none.hpp names them), one each per reactor:
// server_schedule may hold replies of one connection to send them together
// (tuning/reply_holds.hpp), and, on one CPU, run a handler without making sure another thread
// leads (tuning/unled_runs.hpp); pool_grow decides when the pool may grow above its core size.
#pragma once

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../../config.hpp"
#include "../../detail/assert.hpp"
#include "../../detail/chrono.hpp"
#include "../../detail/deadline.hpp"
#include "../../error.hpp"
#include "../../options.hpp"
#include "../../server/connection.hpp"
#include "../../tuning/none.hpp"
#include "handler_budget.hpp"
#include "reactor_io.hpp"
#include "server_constants.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

template <class Tuning>
class threaded_reactor {
  using schedule = typename Tuning::server_schedule;
  using grow = typename Tuning::pool_grow;
  using clock = std::chrono::steady_clock;

 public:
  // `threads`: this reactor's share of the server's (transport/threaded/server.hpp): its core, and
  // the most handler threads it could hold, the budget permitting; `budget`: the server's.
  threaded_reactor(server_context& context, std::size_t index, const server_threads& threads, handler_budget& budget)
      : index_(index),
        scheduler_(*context.config.scheduler()),
        budget_(budget),
        io_(context),
        core_threads_(std::max<std::size_t>(1, threads.handlers)),
        max_running_(std::max(core_threads_, threads.max_handlers)),
        idle_limit_(idle_limit(threads.idle_timeout)),
        growth_(tuning::pool_setup{core_threads_, max_running_ + 1, threads.growth_delay, scheduler_, &on_growth_look,
                                   this}),
        slot_used_(max_running_ + 1, false),
        tuning_(tuning::server_setup{scheduler_, max_running_ + 1, context.config.options().tuning,
                                     context.config.runtime()->cpus(), &look_for_leader, this}) {}
  ~threaded_reactor() = default;  // the server joined its threads (stop())

  threaded_reactor(const threaded_reactor&) = delete;
  threaded_reactor& operator=(const threaded_reactor&) = delete;

  reactor_io& io() noexcept { return io_; }
  const reactor_io& io() const noexcept { return io_; }

  // Makes the epoll set and starts as many of the core threads as the system allows: one alone
  // leads and runs handlers too.
  void start() {
    io_.open();
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < core_threads_ + 1; ++i) start_thread_locked();
    if (threads_ == 0) throw rpc_error(errc::invalid_argument, "rpc server: the system would not start a thread");
  }

  // Stop's first step, from any thread, handlers' included: no thread starts or retires from now
  // on, every follower and leader is woken to leave, and the connections are closed.
  void begin_stop() {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
      for (follower* f : idle_) f->wake.notify_one();
    }
    io_.begin_closing();
  }

  // Joins every thread (not from one of them), then drops the requests that never started.
  void join() {
    // Once stopping, no thread starts or retires, so the lists keep their nodes while they are
    // joined; a handler's stop() meanwhile still finds its own thread in them.
    // A joined thread's node no longer has its id (work() cleared it as its last act): a thread
    // started since may have that id (glibc reuses the stack), and is not this pool's.
    std::vector<std::thread*> all;
    {
      std::lock_guard lock(mutex_);
      for (auto& w : workers_) all.push_back(&w.thread);
      for (auto& w : retired_) all.push_back(&w.thread);
    }
    for (std::thread* thread : all)
      if (thread->joinable()) thread->join();
    {
      std::lock_guard lock(mutex_);
      // Every thread has left work(), each undoing what it counted: none runs, leads or is on its
      // way. A thread that could not start never counted itself.
      GEERPC_ASSERT(running_ == 0 && starting_ == 0 && woken_ == 0 && !leading_,
                    "threaded server: a joined pool still counts a thread at work");
      workers_.clear();
      retired_.clear();
    }
    growth_.stop();                   // stopping_ is set: nothing arms it again
    scheduler_.cancel(start_retry_);  // nor this one (hand_on_locked() returns when stopping)
    tuning_.stop();
    std::deque<server_request*> never_ran;
    {
      std::lock_guard lock(mutex_);
      never_ran.swap(queue_);
    }
    for (server_request* request : never_ran) server_connection::finish(request);
  }

  // Whether the calling thread is one of this reactor's.
  bool on_own_thread() const {
    std::lock_guard lock(mutex_);
    const auto me = std::this_thread::get_id();
    const auto mine = [&](const worker& w) { return w.id == me; };
    return std::any_of(workers_.begin(), workers_.end(), mine) || std::any_of(retired_.begin(), retired_.end(), mine);
  }

  // The pool now: threads, of them inside a handler, threads the system would not start, and
  // starts refused for want of a unit of the server's budget.
  pool_view view() const {
    std::lock_guard lock(mutex_);
    return {threads_, running_, start_failures_, {}, budget_refusals_};
  }

 private:
  struct worker {
    std::thread thread;
    std::thread::id id;  // set when it starts, cleared as it leaves work(); compared by stop() from a handler
    std::size_t slot = 0;
  };
  using worker_ref = typename std::list<worker>::iterator;

  // A follower asleep until it is woken to take a request or to lead. Each has its own condition
  // variable, so that the most recently idle is woken first: the others stay idle, and those above
  // the core size retire.
  struct follower {
    std::condition_variable wake;
    bool woken = false;
  };

  // threads.idle_timeout as a wait: none at or below zero, and "never retire" beyond a day (a wait
  // that long would overflow the clock's arithmetic).
  static std::optional<std::chrono::nanoseconds> idle_limit(std::chrono::nanoseconds timeout) {
    if (timeout > std::chrono::hours(24)) return std::nullopt;
    return std::max(timeout, std::chrono::nanoseconds::zero());
  }

  // Starts one more pool thread; returns whether it did. A refusal (the system's limit on threads,
  // or memory) is counted; it, or the server's budget found spent, holds back further tries for a
  // moment. Called with mutex_ held.
  bool start_thread_locked() noexcept {
    // Every live thread holds a slot, and there are max_running_ + 1 of both.
    const auto slot =
        static_cast<std::size_t>(std::find(slot_used_.begin(), slot_used_.end(), false) - slot_used_.begin());
    // A retired thread still sends its held replies through its slot: it hands on as it frees the
    // slot (work()), so the start is tried again then, with no wait. (A guard too: a thread never
    // retires holding replies, see work(), so it frees its slot as it is counted out.)
    slot_wanted_ = slot == slot_used_.size();
    if (slot_wanted_) return false;
    // Every thread but the first takes a unit of the server's budget (the first is left to lead).
    const bool takes = threads_ > 0;
    if (takes && !budget_.try_take()) {
      ++budget_refusals_;
      no_start_before_ = scheduler_.now() + threaded_server_constants::thread_start_retry;
      return false;
    }
    try {
      workers_.emplace_back();
      const worker_ref self = std::prev(workers_.end());
      self->slot = slot;
      self->thread = std::thread([this, self] { work(self); });
      self->id = self->thread.get_id();
      slot_used_[slot] = true;
      ++threads_;
      ++starting_;
      // Every live thread holds one of the max_running_ + 1 slots, taken above.
      GEERPC_ASSERT(threads_ <= max_running_ + 1, "threaded server: more threads than slots");
      return true;
    } catch (...) {
      if (!workers_.empty() && !workers_.back().thread.joinable()) workers_.pop_back();
      if (takes) budget_.give_back();
      ++start_failures_;
      no_start_before_ = scheduler_.now() + threaded_server_constants::thread_start_retry;
      return false;
    }
  }

  // Makes sure a thread is on its way for what this one leaves undone while it runs a handler:
  // leading the I/O if nobody leads, the queued requests if any. Wakes the most recently idle
  // follower, unless one is on its way already (woken, or just started), or starts a new one when
  // the growth rule allows: so the pool grows one thread at a time. Called with mutex_ held.
  void hand_on_locked() {
    if (woken_ > 0 || starting_ > 0 || stopping_ || (leading_ && queue_.empty())) return;
    if (!idle_.empty()) {
      follower* f = idle_.back();
      idle_.pop_back();
      // A follower in idle_ waits, not woken: whoever wakes one takes it out of idle_ first.
      GEERPC_ASSERT(!f->woken, "threaded server: a woken follower left among the idle");
      f->woken = true;
      ++woken_;
      f->wake.notify_one();  // under the lock: the follower, and its condition variable, outlive it
    } else if (threads_ < max_running_ + 1) {
      const auto now = scheduler_.now();  // the runtime's clock
      if (now < no_start_before_)         // after a refused start: not before then
        retry_start_locked();
      else if (growth_.may_grow(threads_, now) && !start_thread_locked() && !slot_wanted_)
        retry_start_locked();  // refused (the budget spent, the system): try again then
    }
  }

  // After a refused start, requests may wait with every thread busy, and nothing here would come
  // back to them: a budget unit another reactor gives back wakes nobody. So the pool tries again
  // at no_start_before_ on its own timer, whatever its tuning: the only retry (a pool_grow
  // strategy looks only for stuck handlers). Should the timer not be queued (no memory), the next
  // request or finished handler tries again. (A start refused for want of a slot needs no timer:
  // the retiring thread that holds the slot hands on as it frees it.)
  void retry_start_locked() {
    if (queue_.empty()) return;
    try {
      scheduler_.schedule(start_retry_, no_start_before_, &on_start_retry, this);
    } catch (...) {
    }
  }
  static void on_start_retry(void* context) {
    auto& self = *static_cast<threaded_reactor*>(context);
    std::lock_guard lock(self.mutex_);
    self.hand_on_locked();
  }

  // The growth timer: marks stuck handlers, then asks again whether the pool needs a thread (one
  // may have finished, or taken the work, meanwhile).
  static void on_growth_look(void* context) {
    auto& self = *static_cast<threaded_reactor*>(context);
    std::lock_guard lock(self.mutex_);
    self.growth_.look();
    self.hand_on_locked();
  }

  // Whether this thread may take a request to run now: below the bound, and leaving one thread
  // out of handlers to lead (a lone thread, all the system allowed, runs them itself). Called with
  // mutex_ held.
  bool may_take_request() const noexcept {
    return running_ < max_running_ && running_ + 1 < std::max<std::size_t>(threads_, 2);
  }

  // The tuning's lead watchdog: if its look says the I/O has been unled too long while a handler
  // runs, a thread is woken (or started) to lead. Returns whether the I/O is unled.
  static bool look_for_leader(void* context) {
    auto& self = *static_cast<threaded_reactor*>(context);
    std::lock_guard lock(self.mutex_);
    const bool unled = !self.leading_ && self.running_ > 0 && !self.stopping_;
    if (self.tuning_.leader_overdue(unled)) self.hand_on_locked();
    return unled;
  }

  void name_this_thread() const noexcept {
    const std::string name = "geerpc-r" + std::to_string(index_);
    ::pthread_setname_np(::pthread_self(), name.substr(0, 15).c_str());
  }

  void work(worker_ref self) {
    std::vector<server_request*> fresh;
    std::vector<std::byte> buffer;  // for reading, once this thread leads: most of a grown pool never does
    follower me;
    std::unique_lock lock(mutex_);
    // start_thread_locked() counted this thread as starting, under this lock, before it could run.
    GEERPC_ASSERT(starting_ > 0, "threaded server: a thread started that was not counted");
    --starting_;
    name_this_thread();
    auto mine_state = tuning_.thread_begins(self->slot);
    bool retired = false;
    while (!stopping_) {
      server_request* mine = nullptr;
      if (!queue_.empty() && may_take_request()) {
        mine = queue_.front();
        queue_.pop_front();
      } else if (!leading_) {
        leading_ = true;
        tuning_.lead_round_began();
        // Requests wait that this thread may not take (every other thread is in a handler): one
        // more thread takes them while this one leads.
        if (!queue_.empty()) hand_on_locked();
        std::list<worker> finished;
        if (!retired_.empty()) finished.splice(finished.end(), retired_);
        lock.unlock();
        if (!finished.empty()) {
          for (auto& w : finished) w.thread.join();  // they are past their last use of the pool
          finished.clear();
        }
        fresh.clear();
        if (buffer.empty()) buffer.resize(threaded_server_constants::read_buffer);
        io_.lead(fresh, buffer);
        lock.lock();
        // One leader at a time: leading_ was set by this thread and nobody else clears it.
        GEERPC_ASSERT(leading_, "threaded server: the lead was taken from its leader");
        leading_ = false;
        // The leader runs the first new request itself: no hand-off on the quick path.
        std::size_t taken = 0;
        if (!fresh.empty() && may_take_request()) mine = fresh[taken++];
        if (taken < fresh.size())  // (an empty range still costs deque::insert its bookkeeping)
          queue_.insert(queue_.end(), fresh.begin() + static_cast<std::ptrdiff_t>(taken), fresh.end());
        if (mine == nullptr && !queue_.empty()) hand_on_locked();  // someone else runs them
      } else {
        if (!wait_as_follower(lock, me)) {
          retired = true;
          break;
        }
        continue;
      }
      if (mine == nullptr) continue;
      ++running_;
      growth_.handler_began(self->slot);
      // `mine` was taken under this lock only when may_take_request() allowed it: within the bound,
      // and one thread left out of handlers to lead (or a lone thread). Threads retire only idle,
      // while another leads, so the count of threads never falls under that either.
      GEERPC_ASSERT(running_ <= max_running_ && running_ < std::max<std::size_t>(threads_, 2),
                    "threaded server: a handler runs past the bound, or on the thread left to lead");
      tuning_.run_began();
      const bool unled = !leading_ && woken_ == 0 && starting_ == 0 && tuning_.may_run_unled();
      if (!unled) hand_on_locked();
      const bool next_same = !queue_.empty() && queue_.front()->connection == mine->connection;
      lock.unlock();
      // Replies held for another connection go now: they must not wait behind this handler. A
      // guard: no schedule gets here today. A thread keeps a hold past its handler only while the
      // held connection's request is next (runs_next()), and then it may always take it: a thread
      // takes a request only while another is out of handlers to lead, so once it has finished,
      // may_take_request() holds whenever runs_next() does. So it never leads, waits or retires
      // holding replies.
      if (const server_connection* held = tuning_.held(mine_state); held != nullptr && held != mine->connection.get())
        tuning_.release(mine_state);
      const bool hold = tuning_.hold_reply(mine_state, *mine, next_same);
      if (unled) {
        const auto probe = tuning_.unled_run_begins(mine_state);
        server_connection::run(mine, hold);
        const bool blocked = schedule::blocked(probe);
        lock.lock();
        if (blocked) tuning_.found_blocked();
      } else {
        server_connection::run(mine, hold);
        lock.lock();
      }
      GEERPC_ASSERT(running_ > 0, "threaded server: more handlers ended than began");
      --running_;
      growth_.handler_ended(self->slot);
      if (const server_connection* held = tuning_.held(mine_state); held != nullptr && !runs_next(held)) {
        lock.unlock();
        tuning_.release(mine_state);
        lock.lock();
      }
    }
    // Stopping, or retired.
    if (tuning_.held(mine_state) != nullptr) {
      lock.unlock();
      tuning_.release(mine_state);
      lock.lock();
    }
    // Its last act under the lock, while it is alive: once joined, its id may be given to a new
    // thread (glibc reuses the stack), which on_own_thread() must not take for this one while the
    // node stays listed (a second stop() made while the first joins would return at once).
    self->id = std::thread::id();
    if (retired) {
      // Counted out by wait_as_follower(); its slot stays taken until its held replies are sent
      // through it, above.
      GEERPC_ASSERT(slot_used_[self->slot], "threaded server: a thread's slot freed twice");
      slot_used_[self->slot] = false;
      retired_.splice(retired_.end(), workers_, self);  // the next leader joins it
      // A start refused for want of this slot is tried again now.
      if (slot_wanted_) {
        slot_wanted_ = false;
        hand_on_locked();
      }
    }
  }

  // A follower waits to be woken (to take a request or to lead). One above the core size that
  // waits threads.idle_timeout in vain while another leads retires: returns false.
  bool wait_as_follower(std::unique_lock<std::mutex>& lock, follower& me) {
    me.woken = false;
    idle_.push_back(&me);
    const auto woken_or_stopping = [&] { return me.woken || stopping_; };
    bool timed_out = false;
    if (threads_ > core_threads_ + 1 && idle_limit_)
      timed_out = !me.wake.wait_for(lock, *idle_limit_, woken_or_stopping);
    else
      me.wake.wait(lock, woken_or_stopping);
    if (me.woken) {
      // hand_on_locked() counted the wake-up when it took this follower out of idle_.
      GEERPC_ASSERT(woken_ > 0, "threaded server: a follower woken without being counted");
      --woken_;
      return true;
    }
    // Not woken: nobody took this follower out of idle_ (only a wake-up does).
    const auto mine = std::find(idle_.begin(), idle_.end(), &me);
    GEERPC_ASSERT(mine != idle_.end(), "threaded server: an idle follower missing from idle_");
    idle_.erase(mine);
    const bool retire = timed_out && !stopping_ && leading_ && queue_.empty() && threads_ > core_threads_ + 1;
    // Counted out here, under the same lock as the decision: work() may unlock before it leaves
    // (to send held replies), and another surplus thread timing out then must not also see room
    // to retire, which would take the pool below its core size.
    if (retire) {
      --threads_;
      budget_.give_back();
    }
    GEERPC_ASSERT(threads_ >= core_threads_ + 1 || !retire, "threaded server: the pool retired below its core size");
    return !retire;
  }

  // Whether the loop above takes a request of `connection` next. Called with mutex_ held.
  bool runs_next(const server_connection* connection) const {
    return !stopping_ && !queue_.empty() && running_ < max_running_ && queue_.front()->connection.get() == connection;
  }

  const std::size_t index_;
  deadline_scheduler& scheduler_;          // the runtime's: its clock, and the strategies' timers
  handler_budget& budget_;                 // the server's, shared with the other reactors
  deadline_scheduler::timer start_retry_;  // retry_start_locked()'s
  reactor_io io_;
  const std::size_t core_threads_;  // threads that run handlers and never retire (one more leads)
  const std::size_t max_running_;   // the most threads that run handlers at once, if the budget allows
  const std::optional<std::chrono::nanoseconds> idle_limit_;  // how long a surplus thread idles; none: forever

  mutable std::mutex mutex_;             // guards the pool state below
  std::deque<server_request*> queue_;    // received, waiting for a handler thread
  std::vector<follower*> idle_;          // followers asleep, the most recently idle last
  std::size_t running_ = 0;              // threads inside a handler
  std::size_t woken_ = 0;                // followers woken that have not run yet
  std::size_t starting_ = 0;             // threads started that have not run yet
  std::size_t threads_ = 0;              // threads started and not retired
  std::size_t start_failures_ = 0;       // threads the system would not start
  std::size_t budget_refusals_ = 0;      // starts refused because the server's budget was spent
  bool slot_wanted_ = false;             // the last start found no free slot (a retiring thread holds it)
  clock::time_point no_start_before_{};  // after a refusal, the next start waits until then
  grow growth_;                          // when the pool may grow above its core size
  bool leading_ = false;
  bool stopping_ = false;
  std::list<worker> workers_;    // live threads
  std::list<worker> retired_;    // retired threads, joined by the next leader (or by stop())
  std::vector<bool> slot_used_;  // which thread indexes (the tuning's per-thread slots) are taken

  schedule tuning_;  // after what it uses
};

}  // namespace detail
GEERPC_END_NAMESPACE
