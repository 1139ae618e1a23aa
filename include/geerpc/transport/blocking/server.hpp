// geerpc: the server half of the `blocking` transport: an accept thread and one thread per
// connection that reads a request, runs its handler and answers, in order. Simple to reason about
// and cheap for a few long-lived peers; a slow request holds up the ones behind it on its
// connection (the `threaded` transport does not). Deadlines still hold: the shared scheduler answers
// a request that runs too long and fires its handler's stop_token.
#pragma once

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "../../config.hpp"
#include "../../detail/assert.hpp"
#include "../../detail/chrono.hpp"
#include "../../net/socket.hpp"
#include "../../net/stream.hpp"
#include "../../server/connection.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// The blocking server's own numbers (docs/transports.md, "Settings and constants").
struct blocking_server_constants {
  // Each connection thread's read buffer, on its stack: requests per recv against the stack pages
  // a connection touches (a page becomes resident only once a read reaches it).
  static constexpr std::size_t read_buffer = 32u << 10;
  // After accept() ran out of descriptors (or kernel memory), how long the accept thread waits
  // before it tries again: the listener stays readable, and retrying at once would spin.
  static constexpr std::chrono::milliseconds accept_retry{50};
};

class blocking_server_engine {
 public:
  explicit blocking_server_engine(server_context& context) : context_(context) { context.pool.attach(&probe, this); }
  ~blocking_server_engine() {
    stop();
    context_.pool.detach();
  }

  blocking_server_engine(const blocking_server_engine&) = delete;
  blocking_server_engine& operator=(const blocking_server_engine&) = delete;

  std::string listen(std::string_view address) {
    std::string bound;
    listen_ = net::listen_on(address, bound);
    acceptor_ = std::jthread([this] { accept_loop(); });
    return bound;
  }

  // As the threaded server's stop(): safe from several threads, and from a handler it only starts
  // the stop.
  void stop() {
    std::vector<std::shared_ptr<server_connection>> open;
    {
      std::lock_guard lock(mutex_);
      if (!stopping_) {
        stopping_ = true;
        listen_.shutdown();  // refuses dials from now on; closed once the acceptor is joined
        for (auto& p : peers_)
          if (p.connection) open.push_back(p.connection);
      }
    }
    for (auto& connection : open) connection->close();  // runs handlers' stop callbacks: no lock held
    stop_signal_.signal();
    if (on_own_thread()) return;
    std::lock_guard joining(join_mutex_);
    if (acceptor_.joinable()) acceptor_.join();
    listen_.close();  // frees the address for a new server at once
    // With the acceptor gone, no peer is added or reaped: the list keeps its nodes while they are
    // joined, so a handler's stop() meanwhile still finds its own thread in it.
    std::vector<std::thread*> threads;
    {
      std::lock_guard lock(mutex_);
      for (auto& p : peers_) threads.push_back(&p.thread);
    }
    for (std::thread* thread : threads)
      if (thread->joinable()) thread->join();
    // What is still in flight waits for a responder (responder.hpp), whose stop_token has fired:
    // its request holds its connection, and the context it refers to must outlive it.
    context_.wait_drained(std::chrono::steady_clock::time_point::max());
    std::lock_guard lock(mutex_);
    // A peer's thread marks it done as its last act, and every thread has been joined.
    GEERPC_ASSERT(std::all_of(peers_.begin(), peers_.end(), [](const peer& p) { return p.done; }),
                  "blocking server: a joined connection thread that never finished");
    peers_.clear();
  }

  // Graceful shutdown's first step: no more connections (dials are refused from now on; the
  // acceptor leaves). stop() closes the socket.
  // Returns false when a stop has begun already (nothing to drain then: stop() finishes it).
  bool stop_accepting() {
    // Under the lock that stop() sets stopping_ under before it ever closes the socket.
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    if (!accepting_) return true;
    accepting_ = false;
    listen_.shutdown();  // wakes the acceptor, whose accept then fails: it sees accepting_ and leaves
    return true;
  }

  // Calls f(server_connection&) for each open connection, with no lock held.
  template <class F>
  void for_each_connection(F&& f) {
    std::vector<std::shared_ptr<server_connection>> open;
    {
      std::lock_guard lock(mutex_);
      for (auto& p : peers_)
        if (p.connection) open.push_back(p.connection);
    }
    for (auto& connection : open) f(*connection);
  }

  // Whether the calling thread is one of this server's: stop() from a handler must not join it.
  bool on_own_thread() const {
    const auto me = std::this_thread::get_id();
    std::lock_guard lock(mutex_);  // handlers run on peer threads only
    return std::any_of(peers_.begin(), peers_.end(), [&](const peer& p) { return p.id == me; });
  }

  std::size_t connection_count() const {
    std::lock_guard lock(mutex_);
    std::size_t live = 0;
    for (const auto& p : peers_) live += p.done ? 0 : 1;
    return live;
  }

 private:
  // The debug page's view (server_context::pool): a thread per connection, busy while it runs
  // the requests it read.
  static pool_view probe(const void* engine) {
    const auto& self = *static_cast<const blocking_server_engine*>(engine);
    std::lock_guard lock(self.mutex_);
    return {self.peers_.size(), self.running_.load(std::memory_order_relaxed), 0, {}};
  }
  struct peer {
    std::shared_ptr<server_connection> connection;
    std::thread thread;
    std::thread::id id;  // set when it starts, cleared when done; compared by stop() from a handler
    bool done = false;   // the thread has returned and can be joined without waiting
  };

  void accept_loop() {
    for (;;) {
      if (net::wait_for(listen_.get(), POLLIN, std::nullopt, stop_signal_.get()) == net::wait_result::woken) return;
      const int fd = ::accept4(listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        {
          std::lock_guard lock(mutex_);
          // stop() or stop_accepting() shut the listener down: it stays readable, and accept fails.
          if (stopping_ || !accepting_) return;
        }
        // Out of descriptors or kernel memory: the listener stays readable, so pause instead of spinning.
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          const auto retry = net::clock::now() + blocking_server_constants::accept_retry;
          if (net::wait_for(stop_signal_.get(), POLLIN, retry) == net::wait_result::ready) return;
        }
        continue;
      }
      net::set_no_delay(fd);
      net::unique_fd accepted(fd);  // closes the socket if no connection takes it
      std::shared_ptr<server_connection> connection;
      try {
        connection = std::make_shared<server_connection>(context_, std::move(accepted), nullptr);
        if (!admit(connection)) return;
      } catch (...) {
        // No memory for this connection's state (or its list entry, or its reason): it is closed
        // without a word and counted; the server keeps serving the others.
        context_.refused.add();
        if (connection) connection->close();
      }
    }
  }

  // Gives an accepted connection its thread, or refuses it. Returns false when stopping.
  bool admit(const std::shared_ptr<server_connection>& connection) {
    std::lock_guard lock(mutex_);
    reap_finished();
    if (stopping_) return false;
    if (peers_.size() >= context_.config.options().limits.max_connections) {
      if (context_.config.stats()) context_.config.stats()->turned_away(limit_kind::connections);
      connection->reject("rpc server: too many connections (limit " +
                         std::to_string(context_.config.options().limits.max_connections) + ")");
      return true;
    }
    connection->arm_handshake_timer();
    // Accepted as a shutdown began: for_each_connection(), under the same lock, missed it.
    if (context_.drain.draining()) connection->go_away();
    peers_.push_back(peer{connection, {}, {}, false});
    auto self = std::prev(peers_.end());
    try {
      self->thread = std::thread([this, self] { serve(self); });
      self->id = self->thread.get_id();
    } catch (const std::system_error& e) {
      // No thread for it (a pids limit, as containers set, or no memory for a stack): this peer is
      // told why and closed; the server keeps serving the others, and may find a thread for the
      // next one once some connection has ended.
      peers_.erase(self);
      if (context_.config.stats()) context_.config.stats()->turned_away(limit_kind::threads);
      connection->reject("rpc server: cannot start a thread for this connection: " + e.code().message());
    } catch (...) {
      peers_.erase(self);  // no memory to start the thread: the caller closes and counts it
      throw;
    }
    return true;
  }

  // Joins the threads of connections that ended, so a long-running server does not accumulate them.
  void reap_finished() {
    for (auto it = peers_.begin(); it != peers_.end();) {
      if (it->done) {
        // done is set by the peer's own thread, which admit() started before the peer was visible.
        GEERPC_ASSERT(it->thread.joinable(), "blocking server: a finished peer without a thread");
        it->thread.join();
        it = peers_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void serve(std::list<peer>::iterator self) {
    server_connection& connection = *self->connection;
    // On this thread's stack: a page becomes resident only once a read reaches it, so an idle
    // connection costs its thread's few stack pages, not a buffer.
    std::byte buffer[blocking_server_constants::read_buffer];
    std::vector<server_request*> ready;
    net::stream& stream = connection.stream();
    for (;;) {
      // Bytes the stream's session holds are read without waiting: the socket may never become
      // readable for them (stream.hpp, rule 2). Otherwise wait for reading, writing while replies
      // wait, and what the session wants; then both are tried (rule 3).
      if (!stream.buffered()) {
        const short events =
            stream.readiness(static_cast<short>(POLLIN | (connection.writer().has_pending() ? POLLOUT : 0)));
        if (net::wait_for(stream.fd(), events, std::nullopt, stop_signal_.get()) == net::wait_result::woken) break;
      } else if (net::ready_now(stop_signal_.get(), POLLIN)) {
        break;
      }
      if (connection.writer().has_pending() && !connection.flush_output()) break;
      const net::io_result r = stream.read_some(std::span<std::byte>(buffer, sizeof buffer));
      if (r.status == net::io_status::closed) break;
      if (r.status == net::io_status::would_block) continue;
      const bool alive = connection.on_bytes(std::span<const std::byte>(buffer, r.bytes), ready);
      if (!ready.empty()) {
        running_.fetch_add(1, std::memory_order_relaxed);
        for (server_request* request : ready) server_connection::run(request);  // in order, on this thread
        running_.fetch_sub(1, std::memory_order_relaxed);
      }
      ready.clear();
      if (!alive || connection.closed()) break;
    }
    connection.close();
    std::lock_guard lock(mutex_);
    GEERPC_ASSERT(!self->done, "blocking server: a connection's thread finished twice");
    self->connection.reset();
    self->done = true;
    // Once joined, its id may be given to a new thread (glibc reuses the stack): stop() keeps the
    // node listed while it joins the others, and on_own_thread() must not take that thread for this.
    self->id = std::thread::id();
  }

  server_context& context_;
  net::listener listen_;
  net::event_fd stop_signal_;            // readable once stop() is called, for every waiting thread
  mutable std::mutex mutex_;             // guards peers_, stopping_ and accepting_
  std::atomic<std::size_t> running_{0};  // connection threads running requests now
  std::list<peer> peers_;
  bool stopping_ = false;
  bool accepting_ = true;  // until stop_accepting()
  std::mutex join_mutex_;  // one stop() joins; a concurrent one waits for it
  std::jthread acceptor_;
};

}  // namespace detail
GEERPC_END_NAMESPACE
