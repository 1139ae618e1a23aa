// geerpc: the server half of the `threaded` transport: a listening socket and threads.io_threads
// reactors (reactor.hpp), each an epoll set with its own leader/followers pool of threads. A
// server's throughput is no longer capped by the one thread that leads an epoll set: each reactor
// has its own leader.
//
// Accepting: the listener is watched by reactor 0 alone; its leader accepts every pending
// connection and hands each to the next reactor in turn (round-robin), which watches it in its own
// epoll set for the connection's life. Chosen over the listener in every reactor's set with
// EPOLLEXCLUSIVE: the kernel wakes the first reactor whose leader waits, so an idle server (or a
// test dialling one connection after another) puts every connection on reactor 0, and a server
// under load puts them wherever a leader happens to wait; round-robin spreads them evenly and
// predictably, and the accept itself is a small share of a connection's work. (SO_REUSEPORT's
// listener per reactor spreads by a hash of the peer's address: no better for a few connections.)
//
// Threads: threads.max_handlers is one budget for the whole server, shared by the reactors (not
// split): each grows and shrinks its own pool by the growth rule (pool_growth.hpp) while the budget
// has room, so one busy connection can have as many handler threads on its reactor as the server
// allows, less the other reactors' cores. threads.handlers, the core that never retires, is split
// evenly, at least one each (there are no more reactors than handler threads): a core is where a
// reactor's quick requests run without waiting for a thread to start, and threads that never
// retire are threads the others cannot take; one leader each comes on top.
// What the server reports (thread counts, the pool's probe, start failures) is summed over them.
#pragma once

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "../../config.hpp"
#include "../../detail/chrono.hpp"
#include "../../error.hpp"
#include "../../net/socket.hpp"
#include "../../options.hpp"
#include "../../server/connection.hpp"
#include "../../tuning/none.hpp"
#include "reactor.hpp"
#include "server_constants.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// threads.io_threads 0: one reactor per two CPUs of the runtime's budget, at least 1 and at most 8
// (docs/transports.md, "Several reactors", has the figures behind it).
inline std::size_t default_io_threads(unsigned cpus) noexcept { return std::clamp<std::size_t>(cpus / 2, 1, 8); }

// Reactor `index`'s threads among `count` reactors (no more than all.handlers): its core, an even
// split of all.handlers, the remainder to the first ones; and the most handler threads it can hold,
// the whole budget less the other reactors' cores.
inline server_threads reactor_share(const server_threads& all, std::size_t index, std::size_t count) {
  const std::size_t handlers = std::max<std::size_t>(1, all.handlers);
  server_threads mine = all;
  mine.handlers = std::max<std::size_t>(1, handlers / count + (index < handlers % count ? 1 : 0));
  mine.max_handlers = std::max(handlers, all.max_handlers) - (handlers - mine.handlers);
  return mine;
}

template <class Tuning>
class threaded_server_engine {
  using reactor = threaded_reactor<Tuning>;
  using clock = std::chrono::steady_clock;

 public:
  explicit threaded_server_engine(server_context& context)
      : context_(context),
        budget_(std::max(std::max<std::size_t>(1, context.config.options().threads.handlers),
                         context.config.options().threads.max_handlers)) {
    const server_threads& threads = context.config.options().threads;
    const std::size_t wanted =
        threads.io_threads != 0 ? threads.io_threads : default_io_threads(context.config.runtime()->cpus());
    // Each reactor runs at least one handler: no more reactors than handler threads.
    const std::size_t count = std::min(wanted, std::max<std::size_t>(1, threads.handlers));
    reactors_.reserve(count);
    for (std::size_t i = 0; i < count; ++i)
      reactors_.push_back(
          std::make_unique<reactor>(context, i, reactor_share(context.config.options().threads, i, count), budget_));
    context.pool.attach(&probe, this);
  }
  ~threaded_server_engine() {
    stop();
    context_.pool.detach();
  }

  threaded_server_engine(const threaded_server_engine&) = delete;
  threaded_server_engine& operator=(const threaded_server_engine&) = delete;

  std::string listen(std::string_view address) {
    std::string bound;
    listen_ = net::listen_on(address, bound);
    for (auto& r : reactors_) r->start();
    reactors_.front()->io().watch_listener(listen_.get(), &on_listener, this);
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
    for (auto& r : reactors_) r->join();
    if (context_.config.scheduler()) context_.config.scheduler()->cancel(accept_retry_);
    listen_.close();  // no leader or accept retry can touch it now: frees the address at once
    // What is still in flight waits for a responder (responder.hpp), whose stop_token has fired:
    // its request holds its connection, and the context it refers to must outlive it.
    context_.wait_drained(clock::time_point::max());
    for (auto& r : reactors_) r->io().clear_connections();
  }

  // Graceful shutdown's first step: no more connections. The listening socket leaves the poller
  // and is shut down (dials are refused from now on); stop() closes it.
  // Returns false when a stop has begun already (nothing to drain then: stop() finishes it).
  bool stop_accepting() {
    if (context_.config.scheduler())
      context_.config.scheduler()->cancel(accept_retry_);  // its resume would watch it again
    std::lock_guard lock(listen_mutex_);
    if (stopping_) return false;
    if (!accepting_) return true;
    accepting_ = false;
    ::epoll_ctl(reactors_.front()->io().poller(), EPOLL_CTL_DEL, listen_.get(), nullptr);  // cannot fail: it is watched
    listen_.shutdown();
    return true;
  }

  // Calls f(server_connection&) for each open connection, with no lock held.
  template <class F>
  void for_each_connection(F&& f) {
    for (auto& r : reactors_) r->io().for_each_connection(f);
  }

  // Whether the calling thread is one of this server's (a handler's).
  bool on_own_thread() const {
    return std::any_of(reactors_.begin(), reactors_.end(), [](const auto& r) { return r->on_own_thread(); });
  }

  std::size_t connection_count() const {
    std::size_t n = 0;
    for (const auto& r : reactors_) n += r->io().connection_count();
    return n;
  }
  // The open connections of each reactor, in order.
  std::vector<std::size_t> reactor_connections() const {
    std::vector<std::size_t> counts;
    for (const auto& r : reactors_) counts.push_back(r->io().connection_count());
    return counts;
  }
  // Threads in the pools now, and threads they could not start (the system refused).
  std::size_t thread_count() const { return pools().threads; }
  std::size_t thread_start_failures() const { return pools().start_failures; }

 private:
  pool_view pools() const {
    pool_view sum;
    for (const auto& r : reactors_) {
      const pool_view v = r->view();
      sum.threads += v.threads;
      sum.busy += v.busy;
      sum.start_failures += v.start_failures;
      sum.budget_refusals += v.budget_refusals;
    }
    return sum;
  }

  // The debug page's view of the pools (server_context::pool).
  static pool_view probe(const void* engine) {
    const auto& self = *static_cast<const threaded_server_engine*>(engine);
    pool_view v = self.pools();
    v.reactor_connections = self.reactor_connections();
    return v;
  }

  void begin_stop() {
    {
      std::lock_guard lock(listen_mutex_);
      if (!stopping_) {
        stopping_ = true;
        listen_.shutdown();  // refuses dials from now on; closed in stop() once no thread can accept
      }
    }
    for (auto& r : reactors_) r->begin_stop();
  }

  // Reactor 0's leader: the listener is ready.
  static void on_listener(void* engine) { static_cast<threaded_server_engine*>(engine)->accept_all(); }

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
      reactor& to = *reactors_[next_reactor_];
      next_reactor_ = (next_reactor_ + 1) % reactors_.size();
      std::shared_ptr<server_connection> connection;
      try {
        connection = std::make_shared<server_connection>(context_, std::move(accepted), &reactor_io::want_write,
                                                         to.io().poller());
        // Only this thread admits, and connections only leave meanwhile: the count cannot pass
        // the limit between this look and the admission.
        to.io().admit(connection, connection_count() >= context_.config.options().limits.max_connections);
      } catch (...) {
        // No memory for this connection's state (or its table entry, or its reason): it is closed
        // without a word and counted; the leader goes on serving the others.
        context_.refused.add();
        if (context_.config.stats()) context_.config.stats()->turned_away(limit_kind::resources);
        if (connection) connection->close();
      }
    }
  }

  // Out of descriptors (or kernel memory): stop watching the listener, which would report readiness
  // forever, and try again a little later. Only reactor 0's leader gets here, so one retry is armed
  // at a time.
  void pause_accepting() {
    // Should the watch not change, the leader finds the listener ready again and comes back here.
    (void)reactors_.front()->io().rewatch_listener(listen_.get(), 0);
    context_.config.scheduler()->cancel(accept_retry_);
    context_.config.scheduler()->schedule(accept_retry_,
                                          context_.config.scheduler()->now() + threaded_server_constants::accept_retry,
                                          &resume_accepting, this);
  }
  static void resume_accepting(void* context) {
    auto& self = *static_cast<threaded_server_engine*>(context);
    // After stop_accepting() the socket has left the poller, and this fails with ENOENT: done.
    // Another failure (no kernel memory) would leave the listener unwatched: try again later.
    const int failed = self.reactors_.front()->io().rewatch_listener(self.listen_.get(), EPOLLIN);
    if (failed == 0 || failed == ENOENT) return;
    try {
      self.context_.config.scheduler()->schedule(
          self.accept_retry_, self.context_.config.scheduler()->now() + threaded_server_constants::accept_retry,
          &resume_accepting, &self);
    } catch (...) {  // no memory for the timer either: the listener stays paused until stop
    }
  }

  server_context& context_;
  handler_budget budget_;  // threads.max_handlers, shared by the reactors: it outlives them
  std::vector<std::unique_ptr<reactor>> reactors_;
  net::listener listen_;
  std::size_t next_reactor_ = 0;  // the reactor the next accepted connection goes to (acceptor only)
  std::mutex listen_mutex_;       // guards the two flags below, and the listener's shutdown
  bool stopping_ = false;
  bool accepting_ = true;  // until stop_accepting()
  deadline_scheduler::timer accept_retry_;
  std::mutex join_mutex_;  // one stop() joins; a concurrent one waits for it
};

}  // namespace detail
GEERPC_END_NAMESPACE
