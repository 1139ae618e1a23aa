// geerpc: the server half of the `threaded` transport. A fixed pool of handler_threads + 1
// threads shares one epoll set in the leader/followers style: one thread at a time (the leader)
// waits for I/O, reads every ready connection and turns complete frames into requests; then it
// hands leadership to a waiting thread and runs the first request itself, so a quick call costs
// no thread hand-off, and a slow one never stops the others from being read. Threads are woken
// one at a time, each by the one before when it starts a handler: requests queued behind slow
// ones still get a thread each, and a burst of quick ones costs few wake-ups. A thread that runs
// several requests of one connection in a row answers them with one send (reply_holds.hpp).
//
// On one CPU, waking a follower before a handler costs two context switches and buys nothing
// unless the handler blocks: the follower cannot run until then. So when the request is the only
// one in flight on the server and its connection has been making one call at a time, or when no
// handler has lately blocked, the thread runs it without waking anyone, and a watchdog
// (watchdog.hpp) wakes a follower if nobody has led for a whole period meanwhile: a slow handler
// leaves the I/O unled for 0.5 to 1 ms at most. A handler found blocked makes the requests of the
// next calm_period wake followers again, so that handlers that block run side by side: found by
// the watchdog (one handler run that lasted a whole period), or in a random one unled run out of
// blocking_sample by a voluntary context switch of its thread.
// Also on one CPU, a leader woken after a round that read several requests yields once before it
// reads, so that a pipelining client's threads send all their requests first, unless recent
// yields did not pay (batch_yield.hpp).
//
// At most handler_threads threads run handlers at once; the spare thread always remains to lead,
// so a server whose handlers are all busy still reads, answers "busy", accepts cancels and
// fires timeouts. An idle connection costs a socket and a small object, not a thread.
#pragma once

#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "../../config.hpp"
#include "../../error.hpp"
#include "../../net/socket.hpp"
#include "../../server/connection.hpp"
#include "../../tuning/batch_yield.hpp"
#include "../../tuning/reply_holds.hpp"
#include "../../tuning/spin.hpp"
#include "../../tuning/watchdog.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class threaded_server_engine {
 public:
  explicit threaded_server_engine(server_context& context)
      : context_(context),
        handler_threads_(std::max<std::size_t>(1, context.options.handler_threads)),
        holds_(handler_threads_ + 1, *context.scheduler),
        lead_watch_(*context.scheduler, lead_watch_period, &look_for_leader, this) {}
  ~threaded_server_engine() { stop(); }

  threaded_server_engine(const threaded_server_engine&) = delete;
  threaded_server_engine& operator=(const threaded_server_engine&) = delete;

  std::string listen(std::string_view address) {
    std::string bound;
    listen_ = net::listen_on(address, bound);
    epoll_ = net::unique_fd(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_) throw std::system_error(errno, std::generic_category(), "rpc server: epoll_create1");
    watch(listen_.get(), EPOLLIN, &listen_tag_);
    watch(wake_.get(), EPOLLIN, &wake_tag_);
    threads_.reserve(handler_threads_ + 1);
    for (std::size_t i = 0; i < handler_threads_ + 1; ++i) threads_.emplace_back([this, i] { work(i); });
    return bound;
  }

  // Stops accepting, closes every connection (their clients see the connection end), asks running
  // handlers to stop, joins every thread, and drops requests that never started. Safe from several
  // threads at once: each returns once all is done. From a handler it only starts the stop; the
  // threads are joined by the next stop() from outside, at the latest by the destructor.
  void stop() {
    begin_stop();
    if (serving_engine == this) return;
    std::lock_guard joining(join_mutex_);
    for (auto& thread : threads_)
      if (thread.joinable()) thread.join();
    if (context_.scheduler) context_.scheduler->cancel(accept_retry_);
    holds_.stop();
    lead_watch_.stop();
    std::deque<server_request*> never_ran;
    {
      std::lock_guard lock(mutex_);
      never_ran.swap(queue_);
    }
    for (server_request* request : never_ran) server_connection::finish(request);
    std::lock_guard lock(connections_mutex_);
    connections_.clear();
  }

  std::size_t connection_count() const {
    std::lock_guard lock(connections_mutex_);
    return connections_.size();
  }

 private:
  void begin_stop() {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    wake_.signal();
    idle_.notify_all();
    std::vector<std::shared_ptr<server_connection>> open;
    {
      std::lock_guard lock(connections_mutex_);
      for (auto& [raw, connection] : connections_) open.push_back(connection);
    }
    for (auto& connection : open) connection->close();  // runs handlers' stop callbacks: no lock held
  }

  // Whether the loop below takes a request of `connection` next. Called with mutex_ held.
  bool runs_next(const server_connection* connection) const {
    return !stopping_ && !queue_.empty() && running_ < handler_threads_ &&
           queue_.front()->connection.get() == connection;
  }

  // Whether a thread about to run `request` may leave the I/O unled meanwhile (see the top).
  // Called with mutex_ held.
  bool may_run_unled(const server_request& request) const noexcept {
    if (several_cpus()) return false;
    const bool sequential_caller = request.connection->sequential_requests() >= sequential_streak &&
                                   context_.inflight.load(std::memory_order_relaxed) == 1;
    return sequential_caller || clock::now() - last_blocked_ >= calm_period;
  }

  // The lead watchdog's look: wakes a follower if nobody has led since the previous look while a
  // handler runs, and notes a handler found blocked if no handler started meanwhile either (a
  // thread working through a queue of quick requests is not). Returns whether the I/O is unled.
  static bool look_for_leader(void* context) {
    auto& self = *static_cast<threaded_server_engine*>(context);
    std::lock_guard lock(self.mutex_);
    const bool unled = !self.leading_ && self.running_ > 0 && !self.stopping_;
    if (unled && self.lead_rounds_ == self.lead_rounds_seen_) {
      if (self.runs_started_ == self.runs_started_seen_) self.last_blocked_ = clock::now();
      if (self.woken_ == 0 && self.waiting_ > 0) {
        ++self.woken_;
        self.idle_.notify_one();
      }
    }
    self.lead_rounds_seen_ = self.lead_rounds_;
    self.runs_started_seen_ = self.runs_started_;
    return unled;
  }

  // `index`: this thread's slot in holds_.
  void work(std::size_t index) {
    serving_engine = this;
    std::vector<server_request*> fresh;
    std::uint32_t sample_draw = 0x9E3779B9u ^ static_cast<std::uint32_t>(index + 1);  // xorshift32 state
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      server_request* mine = nullptr;
      if (!queue_.empty() && running_ < handler_threads_) {
        mine = queue_.front();
        queue_.pop_front();
      } else if (!leading_) {
        leading_ = true;
        ++lead_rounds_;
        lock.unlock();
        fresh.clear();
        lead(fresh);
        lock.lock();
        leading_ = false;
        // The leader runs the first new request itself: no hand-off on the quick path.
        std::size_t taken = 0;
        if (!fresh.empty() && running_ < handler_threads_) mine = fresh[taken++];
        queue_.insert(queue_.end(), fresh.begin() + static_cast<std::ptrdiff_t>(taken), fresh.end());
      } else {
        ++waiting_;
        idle_.wait(lock);
        --waiting_;
        if (woken_ > 0) --woken_;  // this one, or a spurious wake-up that does its job instead
        continue;
      }
      if (mine == nullptr) continue;
      ++running_;
      ++runs_started_;
      // A handler may take long, so first make sure the I/O will be led: if nobody leads, wake one
      // waiting thread, unless one is already on its way. A woken thread takes queued requests
      // before it leads, and does the same before it runs one; so requests queued behind slow
      // handlers get a thread each, one after another, while a burst of quick ones costs a few
      // wake-ups instead of a context switch per request.
      const bool needs_leader = !leading_ && woken_ == 0 && waiting_ > 0;
      const bool unled = needs_leader && may_run_unled(*mine);
      const bool wake = needs_leader && !unled;
      if (wake) ++woken_;
      // When the next queued request is for the same peer, this thread will likely run it next:
      // hold this reply and send both together (reply_holds.hpp).
      const bool hold = !queue_.empty() && queue_.front()->connection == mine->connection;
      lock.unlock();
      if (wake) idle_.notify_one();  // outside the lock: the woken one needs it
      if (unled) lead_watch_.request();
      if (hold) holds_.hold(index, mine->connection);
      // Now and then, whether an unled run blocked: one that blocks for less than a watchdog
      // period is never found by the watchdog, yet makes the requests queued behind it wait. A
      // random run, not every n-th, which could keep missing a request at a fixed place in each
      // round. Waits inside the library count too (a contended lock, cancelling a deadline).
      const bool sample = unled && next_draw(sample_draw) % blocking_sample == 0;
      const long switches_before = sample ? voluntary_switches() : 0;
      server_connection::run(mine, hold);
      const bool blocked = sample && voluntary_switches() != switches_before;
      lock.lock();
      --running_;
      if (blocked) last_blocked_ = clock::now();
      if (const server_connection* held = holds_.held(index); held != nullptr && !runs_next(held)) {
        lock.unlock();
        holds_.release(index);
        lock.lock();
      }
    }
  }

  // One round of I/O: waits for events, accepts, reads, flushes. New requests go to `fresh`.
  void lead(std::vector<server_request*>& fresh) {
    constexpr int max_events = 64;
    epoll_event events[max_events];
    int count = ::epoll_wait(epoll_.get(), events, max_events, -1);
    if (count <= 0 || several_cpus()) return service_events(events, count, fresh);
    // On one CPU, the threads about to send more requests may do so first (batch_yield.hpp); then
    // epoll is asked again, so that connections that became readable meanwhile are read too. Not
    // after a full list: epoll would then report the connections it left out, in place of those it
    // reported, which could be left out round after round.
    if (count < max_events && batch_yield_.due()) {
      batch_yield_.yield();
      if (const int ready = ::epoll_wait(epoll_.get(), events, max_events, 0); ready > 0) count = ready;
    }
    service_events(events, count, fresh);
    batch_yield_.after_round(fresh.size());
  }

  void service_events(const epoll_event* events, int count, std::vector<server_request*>& fresh) {
    for (int i = 0; i < count; ++i) {
      void* tag = events[i].data.ptr;
      if (tag == &wake_tag_) return;  // stopping; the eventfd stays readable for every leader
      if (tag == &listen_tag_) {
        accept_all();
        continue;
      }
      service(static_cast<server_connection*>(tag), events[i].events, fresh);
    }
  }

  void service(server_connection* connection, std::uint32_t events, std::vector<server_request*>& fresh) {
    if ((events & EPOLLOUT) && connection->writer().flush() == net::frame_writer::status::broken) connection->close();
    if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)) && !read_from(*connection, fresh)) drop(connection);
  }

  // Reads what the socket holds (a bounded amount per round, for fairness between connections).
  // Returns false when the connection is finished.
  static bool read_from(server_connection& connection, std::vector<server_request*>& fresh) {
    thread_local std::vector<std::byte> buffer(64u << 10);
    for (int round = 0; round < 4; ++round) {
      std::size_t got = 0;
      switch (net::recv_some(connection.fd(), buffer.data(), buffer.size(), got)) {
        case net::recv_status::would_block:
          return !connection.closed();
        case net::recv_status::closed:
          return false;
        case net::recv_status::data:
          break;
      }
      if (!connection.on_bytes(std::span<const std::byte>(buffer.data(), got), fresh)) return false;
      if (got < buffer.size()) return true;
    }
    return true;
  }

  void drop(server_connection* connection) {
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
      auto connection = std::make_shared<server_connection>(context_, net::unique_fd(fd), &want_write, epoll_.get());
      std::lock_guard lock(connections_mutex_);
      if (stopping_now()) {
        connection->close();
        continue;
      }
      if (connections_.size() >= context_.options.max_connections) {
        connection->reject("rpc server: too many connections (limit " +
                           std::to_string(context_.options.max_connections) + ")");
        continue;
      }
      connection->arm_handshake_timer();
      connections_.emplace(connection.get(), connection);
      watch(fd, EPOLLIN | EPOLLRDHUP, connection.get());
    }
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
    self.watch(self.listen_.get(), EPOLLIN, &self.listen_tag_, EPOLL_CTL_MOD);
  }

  bool stopping_now() {
    std::lock_guard lock(mutex_);
    return stopping_;
  }

  // One step of xorshift32: a draw cheap enough for every run, random enough to pick samples.
  static std::uint32_t next_draw(std::uint32_t& state) noexcept {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  }

  // This thread's voluntary context switches so far: it blocked if the count moved.
  static long voluntary_switches() noexcept {
    rusage usage{};
    return ::getrusage(RUSAGE_THREAD, &usage) == 0 ? usage.ru_nvcsw : 0;
  }

  // The frame_writer's hook: watch for writability while replies wait for the peer to read.
  static void want_write(void* context, bool want) {
    auto* connection = static_cast<server_connection*>(context);
    epoll_event event{};
    event.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0u);
    event.data.ptr = connection;
    ::epoll_ctl(connection->poller_fd(), EPOLL_CTL_MOD, connection->fd(), &event);  // ENOENT once dropped: fine
  }

  void watch(int fd, std::uint32_t events, void* tag, int op = EPOLL_CTL_ADD) {
    epoll_event event{};
    event.events = events;
    event.data.ptr = tag;
    ::epoll_ctl(epoll_.get(), op, fd, &event);
  }

  server_context& context_;
  const std::size_t handler_threads_;
  net::unique_fd listen_;
  net::unique_fd epoll_;
  net::event_fd wake_;
  char listen_tag_ = 0;  // addresses that mark the listener and the wake-up fd in epoll events
  char wake_tag_ = 0;

  std::mutex mutex_;  // guards the pool state below
  std::condition_variable idle_;
  std::deque<server_request*> queue_;  // received, waiting for a handler thread
  std::size_t running_ = 0;            // threads inside a handler
  std::size_t waiting_ = 0;            // threads asleep on idle_
  std::size_t woken_ = 0;              // threads notified that have not woken up yet
  bool leading_ = false;
  bool stopping_ = false;

  mutable std::mutex connections_mutex_;
  std::unordered_map<server_connection*, std::shared_ptr<server_connection>> connections_;
  deadline_scheduler::timer accept_retry_;
  reply_holds holds_;  // one slot per thread

  // A request runs unled only when it is the only one in flight and this many of its connection's
  // requests came one at a time, or when no handler has been found blocked for calm_period (see
  // the top): one that blocks (on I/O, a lock, a sleep) lets a woken follower run meanwhile.
  static constexpr unsigned sequential_streak = 32;
  static constexpr std::chrono::milliseconds calm_period{200};
  static constexpr unsigned blocking_sample = 8;
  clock::time_point last_blocked_{};  // when a handler was last found blocked (guarded by mutex_)
  // How long the I/O may stay unled behind a slow handler: one to two periods.
  static constexpr std::chrono::microseconds lead_watch_period{500};
  std::size_t lead_rounds_ = 0;        // times a thread began to lead (guarded by mutex_)
  std::size_t lead_rounds_seen_ = 0;   // lead_rounds_ at the watchdog's last look (guarded by mutex_)
  std::size_t runs_started_ = 0;       // handler runs begun (guarded by mutex_)
  std::size_t runs_started_seen_ = 0;  // runs_started_ at the watchdog's last look (guarded by mutex_)
  watchdog lead_watch_;
  batch_yield batch_yield_;  // used by the leader only

  std::mutex join_mutex_;  // one stop() joins; a concurrent one waits for it
  std::vector<std::jthread> threads_;
};

}  // namespace detail
GEERPC_END_NAMESPACE
