// geerpc: the server half of the `threaded` transport: an elastic pool of threads around one epoll
// set, in the leader/followers style. The life of one request:
//
//   1. One thread at a time, the leader, waits for I/O (lead()), reads every ready connection and
//      turns complete frames into requests (server/connection.hpp registers each, with its
//      deadline, and answers "busy" past the limits).
//   2. The leader stops leading, takes the first new request and queues the rest. Before it runs
//      a handler, a thread makes sure the I/O stays led: it wakes a waiting thread, or, when none
//      waits, starts a new one. A woken thread takes a queued request before it leads, and does
//      the same before it runs it; so requests queued behind slow handlers get a thread each, one
//      after another, and a burst of quick ones costs few wake-ups.
//   3. server_connection::run() runs the handler and answers unless the request was answered
//      already (its deadline or a cancel won: exactly one response); then the request is finished.
//
// The pool starts with threads.handlers + 1 threads. It grows, one thread at a time, while requests
// wait, every thread is busy and either fewer than threads.handlers threads are free of stuck
// handlers (running one request for threads.growth_delay or more) or handlers were found stuck and
// none has finished since, up to threads.max_handlers running handlers plus one to lead: handlers
// that wait on something slow do not starve a quick call, as in Go's net/rpc, while a burst of
// quick ones, which only needs the CPUs, is not spread over more threads than it needs. Threads
// above the core size retire after threads.idle_timeout without work. A thread that cannot be
// started is counted (thread_start_failures()); the requests wait for a thread that exists.
//
// The tuning policy (tuning/none.hpp names its hooks) may hold replies of one connection to send
// them together (tuning/reply_holds.hpp), and, on one CPU, run a handler without making sure
// another thread leads (tuning/unled_runs.hpp).
#pragma once

#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include "../../config.hpp"
#include "../../detail/assert.hpp"
#include "../../detail/deadline.hpp"
#include "../../error.hpp"
#include "../../net/socket.hpp"
#include "../../net/stream.hpp"
#include "../../server/connection.hpp"
#include "../../tuning/none.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

template <class Tuning>
class threaded_server_engine {
  using hooks = typename Tuning::server_hooks;

 public:
  explicit threaded_server_engine(server_context& context)
      : context_(context),
        core_threads_(std::max<std::size_t>(1, context.options.threads.handlers)),
        max_running_(std::max(core_threads_, context.options.threads.max_handlers)),
        idle_limit_(idle_limit(context.options.threads.idle_timeout)),
        growth_delay_(std::max(context.options.threads.growth_delay, std::chrono::nanoseconds::zero())),
        handler_slots_(max_running_ + 1),
        slot_used_(max_running_ + 1, false),
        tuning_(tuning::server_setup{*context.scheduler, max_running_ + 1, context.options.tuning,
                                     context.runtime->cpus(), &look_for_leader, this}) {
    context.pool_probe = &probe;
    context.pool_engine = this;
  }
  ~threaded_server_engine() {
    stop();
    context_.pool_probe = nullptr;
    context_.pool_engine = nullptr;
  }

  threaded_server_engine(const threaded_server_engine&) = delete;
  threaded_server_engine& operator=(const threaded_server_engine&) = delete;

  std::string listen(std::string_view address) {
    std::string bound;
    listen_ = net::listen_on(address, bound);
    epoll_ = net::unique_fd(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_) throw std::system_error(errno, std::generic_category(), "rpc server: epoll_create1");
    watch(listen_.get(), EPOLLIN, &listen_tag_);
    watch(wake_.get(), EPOLLIN, &wake_tag_);
    std::lock_guard lock(mutex_);
    // As many of the core threads as the system allows: one alone leads and runs handlers too.
    for (std::size_t i = 0; i < core_threads_ + 1; ++i) start_thread_locked();
    if (threads_ == 0) throw rpc_error(errc::invalid_argument, "rpc server: the system would not start a thread");
    return bound;
  }

  // Stops accepting, closes every connection (their clients see the connection end), asks running
  // handlers to stop, joins every thread, and drops requests that never started. Safe from several
  // threads at once: each returns once all is done. From a handler it only starts the stop; the
  // threads are joined by the next stop() from outside, at the latest by the destructor.
  void stop() {
    begin_stop();
    if (on_own_thread()) return;
    std::lock_guard joining(join_mutex_);
    // Once stopping, no thread starts or retires, so the lists keep their nodes while they are
    // joined; a handler's stop() meanwhile still finds its own thread in them.
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
    if (context_.scheduler) {
      context_.scheduler->cancel(accept_retry_);
      context_.scheduler->cancel(growth_timer_);  // stopping_ is set: nothing arms it again
    }
    listen_.close();  // no leader or accept retry can touch it now: frees the address at once
    tuning_.stop();
    std::deque<server_request*> never_ran;
    {
      std::lock_guard lock(mutex_);
      never_ran.swap(queue_);
    }
    for (server_request* request : never_ran) server_connection::finish(request);
    // What is still in flight waits for a responder (responder.hpp), whose stop_token has fired:
    // its request holds its connection, and the context it refers to must outlive it.
    context_.wait_drained(clock::time_point::max());
    std::lock_guard lock(connections_mutex_);
    connections_.clear();
  }

  // Graceful shutdown's first step: no more connections. The listening socket leaves the poller
  // and is shut down (dials are refused from now on); stop() closes it.
  // Returns false when a stop has begun already (nothing to drain then: stop() finishes it).
  bool stop_accepting() {
    if (context_.scheduler) context_.scheduler->cancel(accept_retry_);  // its resume would watch it again
    // Under the lock that stop() sets stopping_ under before it ever closes the socket.
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    if (!accepting_) return true;
    accepting_ = false;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, listen_.get(), nullptr);
    listen_.shutdown();
    return true;
  }

  // Calls f(server_connection&) for each open connection, with no lock held.
  template <class F>
  void for_each_connection(F&& f) {
    std::vector<std::shared_ptr<server_connection>> open;
    {
      std::lock_guard lock(connections_mutex_);
      for (auto& [raw, connection] : connections_) open.push_back(connection);
    }
    for (auto& connection : open) f(*connection);
  }

  // Whether the calling thread is one of this server's (a handler's).
  bool on_own_thread() const {
    std::lock_guard lock(mutex_);
    const auto me = std::this_thread::get_id();
    const auto mine = [&](const worker& w) { return w.id == me; };
    return std::any_of(workers_.begin(), workers_.end(), mine) || std::any_of(retired_.begin(), retired_.end(), mine);
  }

  std::size_t connection_count() const {
    std::lock_guard lock(connections_mutex_);
    return connections_.size();
  }
  // Threads in the pool now, and threads it could not start (the system refused).
  std::size_t thread_count() const {
    std::lock_guard lock(mutex_);
    return threads_;
  }
  std::size_t thread_start_failures() const {
    std::lock_guard lock(mutex_);
    return start_failures_;
  }

 private:
  // The debug page's view of the pool (server_context::pool_probe).
  static pool_view probe(const void* engine) {
    const auto& self = *static_cast<const threaded_server_engine*>(engine);
    std::lock_guard lock(self.mutex_);
    return {self.threads_, self.running_, self.start_failures_};
  }

  struct worker {
    std::thread thread;
    std::thread::id id;  // set once, when it starts; compared by stop() from a handler
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

  void begin_stop() {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
      for (follower* f : idle_) f->wake.notify_one();
      listen_.shutdown();  // refuses dials from now on; closed in stop() once no thread can accept
    }
    wake_.signal();
    std::vector<std::shared_ptr<server_connection>> open;
    {
      std::lock_guard lock(connections_mutex_);
      for (auto& [raw, connection] : connections_) open.push_back(connection);
    }
    for (auto& connection : open) connection->close();  // runs handlers' stop callbacks: no lock held
  }

  // Starts one more pool thread. A refusal (the system's limit on threads, or memory) is counted
  // and holds back further tries for a moment. Called with mutex_ held.
  void start_thread_locked() noexcept {
    // Every live thread holds a slot, and there are max_running_ + 1 of both.
    const auto slot =
        static_cast<std::size_t>(std::find(slot_used_.begin(), slot_used_.end(), false) - slot_used_.begin());
    if (slot == slot_used_.size()) return;
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
    } catch (...) {
      if (!workers_.empty() && !workers_.back().thread.joinable()) workers_.pop_back();
      ++start_failures_;
      no_start_before_ = clock::now() + std::chrono::milliseconds(50);
    }
  }

  // Makes sure a thread is on its way for what this one leaves undone while it runs a handler:
  // leading the I/O if nobody leads, the queued requests if any. Wakes the most recently idle
  // follower, unless one is on its way already (woken, or just started), or starts a new one when
  // may_grow_locked() allows: so the pool grows one thread at a time. Called with mutex_ held.
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
      const auto now = clock::now();
      if (now < no_start_before_)  // after a refused start: try again then, in a look a whole delay long
        arm_look_locked(std::max(no_start_before_, saturating_deadline(now, growth_delay_)));
      else if (may_grow_locked(now))
        start_thread_locked();
    }
  }

  // Whether the pool may start a thread now. Up to its core size at once (after a refused start);
  // above it only while fewer than core_threads_ threads are free of stuck handlers (those a look
  // found running the same request as when it was armed, growth_delay_ before, blocked or not), or
  // while stalled: from a look that found handlers newly stuck until a handler finishes. Handlers
  // that keep finishing are CPU work, which more threads would only spread over the same CPUs;
  // handlers that stop finishing most often wait on something, and so will the requests waiting
  // behind them: those get a thread each, one right after another, at the speed threads start.
  // When the pool may not grow, a look is armed. Called with mutex_ held.
  bool may_grow_locked(clock::time_point now) noexcept {
    if (threads_ < core_threads_ + 1 || growth_delay_ == std::chrono::nanoseconds::zero() ||
        context_.scheduler == nullptr)
      return true;
    if (stalled_ || threads_ < core_threads_ + 1 + stuck_) return true;
    return !arm_look_locked(saturating_deadline(now, growth_delay_));
  }

  // Arms the growth timer, unless it is armed, and notes which request each thread runs, for the
  // look to compare. Returns false if it could not (no memory for the timer). Called with mutex_ held.
  bool arm_look_locked(clock::time_point when) noexcept {
    if (growth_armed_) return true;
    if (context_.scheduler == nullptr) return false;
    try {
      context_.scheduler->schedule(growth_timer_, when, &on_growth_look, this);
    } catch (...) {
      return false;
    }
    growth_armed_ = true;
    for (handler_slot& h : handler_slots_) h.runs_at_look = h.runs;
    return true;
  }

  // The growth timer: a handler still running the request it ran when the look was armed is stuck
  // (it has run at least growth_delay_); then the pool is asked again whether it needs a thread.
  static void on_growth_look(void* context) {
    auto& self = *static_cast<threaded_server_engine*>(context);
    std::lock_guard lock(self.mutex_);
    self.growth_armed_ = false;
    for (handler_slot& h : self.handler_slots_)
      if (h.running && !h.stuck && h.runs == h.runs_at_look) {
        h.stuck = true;
        ++self.stuck_;
        self.stalled_ = true;
      }
    self.hand_on_locked();  // a thread may have finished, or taken the work, meanwhile
  }

  // What the growth look reads of one thread's handler (may_grow_locked). Called with mutex_ held.
  void handler_began_locked(std::size_t slot) noexcept {
    handler_slot& h = handler_slots_[slot];
    ++h.runs;
    h.running = true;
  }
  void handler_ended_locked(std::size_t slot) noexcept {
    handler_slot& h = handler_slots_[slot];
    if (h.stuck) {
      GEERPC_ASSERT(stuck_ > 0, "threaded server: a stuck handler ended that was not counted");
      h.stuck = false;
      --stuck_;
    }
    h.running = false;
    stalled_ = false;  // handlers finish again
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
    auto& self = *static_cast<threaded_server_engine*>(context);
    std::lock_guard lock(self.mutex_);
    const bool unled = !self.leading_ && self.running_ > 0 && !self.stopping_;
    if (self.tuning_.leader_overdue(unled)) self.hand_on_locked();
    return unled;
  }

  void work(worker_ref self) {
    std::vector<server_request*> fresh;
    std::vector<std::byte> buffer;  // for reading, once this thread leads: most of a grown pool never does
    follower me;
    std::unique_lock lock(mutex_);
    // start_thread_locked() counted this thread as starting, under this lock, before it could run.
    GEERPC_ASSERT(starting_ > 0, "threaded server: a thread started that was not counted");
    --starting_;
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
        if (buffer.empty()) buffer.resize(64u << 10);
        lead(fresh, buffer);
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
      handler_began_locked(self->slot);
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
      const bool hold = tuning_.hold_reply(mine_state, *mine, next_same);
      if (unled) {
        const auto probe = tuning_.unled_run_begins(mine_state);
        server_connection::run(mine, hold);
        const bool blocked = hooks::blocked(probe);
        lock.lock();
        if (blocked) tuning_.found_blocked();
      } else {
        server_connection::run(mine, hold);
        lock.lock();
      }
      GEERPC_ASSERT(running_ > 0, "threaded server: more handlers ended than began");
      --running_;
      handler_ended_locked(self->slot);
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
    if (retired) {
      // Counted out by wait_as_follower(); its slot stays taken until its held replies are sent
      // through it, above.
      GEERPC_ASSERT(slot_used_[self->slot], "threaded server: a thread's slot freed twice");
      slot_used_[self->slot] = false;
      retired_.splice(retired_.end(), workers_, self);  // the next leader joins it
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
    if (retire) --threads_;
    GEERPC_ASSERT(threads_ >= core_threads_ + 1 || !retire, "threaded server: the pool retired below its core size");
    return !retire;
  }

  // Whether the loop above takes a request of `connection` next. Called with mutex_ held.
  bool runs_next(const server_connection* connection) const {
    return !stopping_ && !queue_.empty() && running_ < max_running_ && queue_.front()->connection.get() == connection;
  }

  // One round of I/O: waits for events, accepts, reads, flushes. New requests go to `fresh`.
  // Connections whose stream session holds bytes after a round cut short (resume_) are read
  // again without waiting for their descriptor, which may never become readable for those bytes:
  // while there are any, epoll is only looked at (stream.hpp, rule 2).
  void lead(std::vector<server_request*>& fresh, std::vector<std::byte>& buffer) {
    constexpr int max_events = 64;
    epoll_event events[max_events];
    resuming_.swap(resume_);
    const int count = ::epoll_wait(epoll_.get(), events, max_events, resuming_.empty() ? -1 : 0);
    if (service_events(events, count, fresh, buffer) && !resuming_.empty()) resume_reads(events, count, fresh, buffer);
    resuming_.clear();
  }

  // Returns false when it finds the server stopping.
  bool service_events(const epoll_event* events, int count, std::vector<server_request*>& fresh,
                      std::vector<std::byte>& buffer) {
    for (int i = 0; i < count; ++i) {
      void* tag = events[i].data.ptr;
      if (tag == &wake_tag_) return false;  // stopping; the eventfd stays readable for every leader
      if (tag == &listen_tag_) {
        accept_all();
        continue;
      }
      auto* connection = static_cast<server_connection*>(tag);
      if (!connection->stream().plain()) {
        service_session(connection, fresh, buffer);
        continue;
      }
      if (events[i].events & EPOLLOUT) connection->flush_output();  // closes it if broken
      bool more = false;  // a plain socket holds nothing outside the kernel: never set
      if ((events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)) &&
          !read_from(*connection, fresh, buffer, more))
        drop(connection);
    }
    return true;
  }

  // A connection with a stream session, on any readiness or to resume its reads: the session may
  // have waited for either direction on behalf of the other (a read that must write first), so
  // both the flush and the read are tried (rule 3), and the poller then watches for what the
  // session's read wants.
  [[gnu::noinline]] void service_session(server_connection* connection, std::vector<server_request*>& fresh,
                                         std::vector<std::byte>& buffer) {
    connection->flush_output();  // closes it if broken; the read then finds it closed
    bool more = false;
    if (!read_from(*connection, fresh, buffer, more)) return drop(connection);
    if (more) resume_.push_back(connection);
    const bool reader_wants_out = (connection->stream().wants() & POLLOUT) != 0;
    rewatch(*connection, nullptr, &reader_wants_out);
  }

  // The connections of the round before whose sessions held bytes, unless this round's events
  // served them already (or dropped them).
  void resume_reads(const epoll_event* events, int count, std::vector<server_request*>& fresh,
                    std::vector<std::byte>& buffer) {
    for (server_connection* connection : resuming_) {
      const bool served =
          std::any_of(events, events + count, [&](const epoll_event& e) { return e.data.ptr == connection; });
      if (!served) service_session(connection, fresh, buffer);
    }
  }

  // Reads what the stream holds (a bounded amount per round, for fairness between connections):
  // until would_block, or a short read that leaves nothing in the stream's session (rule 1).
  // `more` says that the round was cut short while the session holds bytes. Returns false when the
  // connection is finished.
  // Forced inline: on the plain path it is what the leader's loop did before the seam, not a call.
  [[gnu::always_inline]] static bool read_from(server_connection& connection, std::vector<server_request*>& fresh,
                                               std::vector<std::byte>& buffer, bool& more) {
    net::stream& stream = connection.stream();
    for (int round = 0; round < 4; ++round) {
      const net::io_result r = stream.read_some(buffer);
      switch (r.status) {
        case net::io_status::would_block:
          return !connection.closed();
        case net::io_status::closed:
          return false;
        case net::io_status::data:
          break;
      }
      if (!connection.on_bytes(std::span<const std::byte>(buffer.data(), r.bytes), fresh)) return false;
      if (r.bytes < buffer.size() && !stream.buffered()) return true;
    }
    more = stream.buffered();
    return true;
  }

  void drop(server_connection* connection) {
    if (!connection->stream().plain()) std::erase(resume_, connection);
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, connection->fd(), nullptr);
    connection->close();
    std::lock_guard lock(connections_mutex_);
    connections_.erase(connection);  // requests still running keep it alive until they finish
  }

  void accept_all() {
    for (;;) {
      const int fd = ::accept4(listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) pause_accepting();
        return;
      }
      net::set_no_delay(fd);
      net::unique_fd accepted(fd);  // closes the socket if no connection takes it
      std::shared_ptr<server_connection> connection;
      try {
        connection = std::make_shared<server_connection>(context_, std::move(accepted), &want_write, epoll_.get());
        admit(connection);
      } catch (...) {
        // No memory for this connection's state (or its table entry, or its reason): it is closed
        // without a word and counted; the leader goes on serving the others.
        context_.refused.fetch_add(1, std::memory_order_relaxed);
        if (connection) connection->close();
      }
    }
  }

  // Watches an accepted connection, or refuses it.
  void admit(const std::shared_ptr<server_connection>& connection) {
    std::lock_guard lock(connections_mutex_);
    if (stopping_now()) {
      connection->close();
      return;
    }
    if (connections_.size() >= context_.options.limits.max_connections) {
      if (context_.stats) context_.stats->turned_away(limit_kind::connections);
      connection->reject("rpc server: too many connections (limit " +
                         std::to_string(context_.options.limits.max_connections) + ")");
      return;
    }
    connection->arm_handshake_timer();
    connections_.emplace(connection.get(), connection);
    watch(connection->fd(), EPOLLIN | EPOLLRDHUP, connection.get());
    // Accepted as a shutdown began: it missed for_each_connection(), which holds the same lock.
    if (context_.draining.load()) connection->go_away();
  }

  // Out of descriptors (or kernel memory): stop watching the listener, which would report readiness
  // forever, and try again a little later. Only the leader gets here, so one retry is armed at a time.
  void pause_accepting() {
    watch(listen_.get(), 0, &listen_tag_, EPOLL_CTL_MOD);
    context_.scheduler->cancel(accept_retry_);
    context_.scheduler->schedule(accept_retry_, clock::now() + std::chrono::milliseconds(50), &resume_accepting, this);
  }
  static void resume_accepting(void* context) {
    auto& self = *static_cast<threaded_server_engine*>(context);
    // (After stop_accepting() the socket has left the poller, and this fails with ENOENT.)
    self.watch(self.listen_.get(), EPOLLIN, &self.listen_tag_, EPOLL_CTL_MOD);
  }

  bool stopping_now() {
    std::lock_guard lock(mutex_);
    return stopping_;
  }

  // The frame_writer's hook: watch for writability while replies wait for the peer to read.
  static void want_write(void* context, bool want) {
    auto* connection = static_cast<server_connection*>(context);
    if (!connection->stream().plain()) return rewatch(*connection, &want, nullptr);
    epoll_event event{};
    event.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0u);
    event.data.ptr = connection;
    ::epoll_ctl(connection->poller_fd(), EPOLL_CTL_MOD, connection->fd(), &event);  // ENOENT once dropped: fine
  }

  // For a connection with a stream session: the writer's wish or the reader's (null: unchanged)
  // for writability, and the poller updated when their sum changes (server_connection::wishes()).
  static void rewatch(server_connection& connection, const bool* writer, const bool* reader) {
    auto& wishes = connection.wishes();
    std::lock_guard lock(wishes.mutex);
    const bool before = wishes.writer || wishes.reader;
    if (writer != nullptr) wishes.writer = *writer;
    if (reader != nullptr) wishes.reader = *reader;
    const bool out = wishes.writer || wishes.reader;
    if (out == before) return;
    epoll_event event{};
    event.events = EPOLLIN | EPOLLRDHUP | (out ? EPOLLOUT : 0u);
    event.data.ptr = &connection;
    ::epoll_ctl(connection.poller_fd(), EPOLL_CTL_MOD, connection.fd(), &event);  // ENOENT once dropped: fine
  }

  void watch(int fd, std::uint32_t events, void* tag, int op = EPOLL_CTL_ADD) {
    epoll_event event{};
    event.events = events;
    event.data.ptr = tag;
    ::epoll_ctl(epoll_.get(), op, fd, &event);
  }

  server_context& context_;
  const std::size_t core_threads_;  // threads that run handlers and never retire (one more leads)
  const std::size_t max_running_;   // the most threads that run handlers at once
  const std::optional<std::chrono::nanoseconds> idle_limit_;  // how long a surplus thread idles; none: forever
  const std::chrono::nanoseconds growth_delay_;               // threads.growth_delay, at least 0
  net::listener listen_;
  net::unique_fd epoll_;
  net::event_fd wake_;
  char listen_tag_ = 0;  // addresses that mark the listener and the wake-up fd in epoll events
  char wake_tag_ = 0;

  mutable std::mutex mutex_;             // guards the pool state below
  std::deque<server_request*> queue_;    // received, waiting for a handler thread
  std::vector<follower*> idle_;          // followers asleep, the most recently idle last
  std::size_t running_ = 0;              // threads inside a handler
  std::size_t woken_ = 0;                // followers woken that have not run yet
  std::size_t starting_ = 0;             // threads started that have not run yet
  std::size_t threads_ = 0;              // threads started and not retired
  std::size_t start_failures_ = 0;       // threads the system would not start
  clock::time_point no_start_before_{};  // after a refusal, the next start waits until then
  // What the growth look compares, per thread slot: requests begun, and their count when the look
  // was armed; whether a handler runs, and whether the look found it stuck (counted in stuck_).
  struct handler_slot {
    std::uint64_t runs = 0;
    std::uint64_t runs_at_look = 0;
    bool running = false;
    bool stuck = false;
  };
  std::vector<handler_slot> handler_slots_;
  std::size_t stuck_ = 0;      // handlers running that a look found stuck
  bool stalled_ = false;       // a look found handlers newly stuck, and none has finished since
  bool growth_armed_ = false;  // growth_timer_ is queued, or its callback runs
  bool leading_ = false;
  bool stopping_ = false;
  bool accepting_ = true;        // until stop_accepting()
  std::list<worker> workers_;    // live threads
  std::list<worker> retired_;    // retired threads, joined by the next leader (or by stop())
  std::vector<bool> slot_used_;  // which thread indexes (the tuning's per-thread slots) are taken

  // Only the leader touches these: connections whose session holds bytes after a round cut short,
  // to read next round without waiting (resume_), and the round's own copy (resuming_).
  std::vector<server_connection*> resume_, resuming_;

  mutable std::mutex connections_mutex_;
  std::unordered_map<server_connection*, std::shared_ptr<server_connection>> connections_;
  deadline_scheduler::timer accept_retry_;
  deadline_scheduler::timer growth_timer_;  // asks again whether the pool may grow (may_grow_locked)

  hooks tuning_;  // after what its hooks use

  std::mutex join_mutex_;  // one stop() joins; a concurrent one waits for it
};

}  // namespace detail
GEERPC_END_NAMESPACE
