// geerpc: the I/O half of one reactor of the threaded server (reactor.hpp has its thread pool): an
// epoll set, the connections it watches, and one round of I/O as its leader runs it (lead()):
// wait for events, read every ready connection and turn complete frames into requests
// (server/connection.hpp registers each, with its deadline, and answers "busy" past the limits),
// flush what waits for writability. A connection stays on the reactor that admitted it for life.
//
// The listening socket is watched by the acceptor's reactor only (transport/threaded/server.hpp);
// its readiness is handed to the server, which admits each new connection to a reactor in turn.
//
// epoll_ctl can fail for want of kernel memory (ENOMEM) or of the user's watch quota
// (fs.epoll.max_user_watches, ENOSPC). Nothing is ignored: making the epoll set or watching the
// listener throws (listen() fails); a connection that cannot be watched is closed at once and
// counted with the refused ones; a connection whose watch cannot be changed (writability) is shut
// down, and the reactor drops it as it sees the end. Removing a watch needs no check: closing the
// descriptor removes it too.
#pragma once

#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "../../config.hpp"
#include "../../net/socket.hpp"
#include "../../net/stream.hpp"
#include "../../server/connection.hpp"
#include "server_constants.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class reactor_io {
 public:
  explicit reactor_io(server_context& context) : context_(context) {}
  reactor_io(const reactor_io&) = delete;
  reactor_io& operator=(const reactor_io&) = delete;

  // Makes the epoll set, watching the wake-up fd (stop).
  void open() {
    epoll_ = net::unique_fd(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_)
      throw std::system_error(errno, std::generic_category(), "rpc server: could not make a reactor's epoll set");
    if (!watch(wake_.get(), EPOLLIN, &wake_tag_))
      throw std::system_error(errno, std::generic_category(), "rpc server: could not watch a reactor's wake-up fd");
  }
  int poller() const noexcept { return epoll_.get(); }

  // This reactor's leader hands the readiness of `fd` (the listening socket) to on_ready(owner).
  void watch_listener(int fd, void (*on_ready)(void*), void* owner) {
    on_listener_ = on_ready;
    listener_owner_ = owner;
    if (!watch(fd, EPOLLIN, &listen_tag_))
      throw std::system_error(errno, std::generic_category(), "rpc server: could not watch the listening socket");
  }
  // Watches the listener again (events EPOLLIN), or not (0), as the acceptor pauses. Returns 0, or
  // the errno of a failure (ENOENT once stop_accepting() has taken it out of the set).
  int rewatch_listener(int fd, std::uint32_t events) {
    return watch(fd, events, &listen_tag_, EPOLL_CTL_MOD) ? 0 : errno;
  }

  // Stop's first step: wakes every leader for good, refuses connections from now on, and closes
  // those open (their handlers' stop callbacks run: no lock held).
  void begin_closing() {
    wake_.signal();
    std::vector<std::shared_ptr<server_connection>> open;
    {
      std::lock_guard lock(connections_mutex_);
      closing_ = true;
      for (auto& [raw, connection] : connections_) open.push_back(connection);
    }
    for (auto& connection : open) connection->close();
  }
  // Stop's last: lets go of the connections (requests still running keep theirs alive).
  void clear_connections() {
    std::lock_guard lock(connections_mutex_);
    connections_.clear();
  }

  // Watches a connection accepted for this reactor (its poller is this reactor's), refuses it when
  // `over_limit`, or closes it when the reactor is closing. One that cannot be watched is closed
  // and counted (refused_connections(), and turned away for want of resources in the statistics):
  // nothing would ever read it.
  void admit(const std::shared_ptr<server_connection>& connection, bool over_limit) {
    std::lock_guard lock(connections_mutex_);
    if (closing_) {
      connection->close();
      return;
    }
    if (over_limit) {
      if (context_.config.stats()) context_.config.stats()->turned_away(limit_kind::connections);
      connection->reject("rpc server: too many connections (limit " +
                         std::to_string(context_.config.options().limits.max_connections) + ")");
      return;
    }
    connection->arm_handshake_timer();
    connections_.emplace(connection.get(), connection);
    if (!watch(connection->fd(), EPOLLIN | EPOLLRDHUP, connection.get())) {
      connections_.erase(connection.get());
      context_.refused.add();
      if (context_.config.stats()) context_.config.stats()->turned_away(limit_kind::resources);
      connection->close();  // (with its timer)
      return;
    }
    // Accepted as a shutdown began: it missed for_each_connection(), which holds the same lock.
    if (context_.drain.draining()) connection->go_away();
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

  std::size_t connection_count() const {
    std::lock_guard lock(connections_mutex_);
    return connections_.size();
  }

  // One round of I/O: waits for events, reads, flushes. New requests go to `fresh`. Connections
  // whose stream session holds bytes after a round cut short (resume_) are read again without
  // waiting for their descriptor, which may never become readable for those bytes: while there
  // are any, epoll is only looked at (stream.hpp, rule 2). Only the leader calls it.
  void lead(std::vector<server_request*>& fresh, std::vector<std::byte>& buffer) {
    constexpr int max_events = threaded_server_constants::max_events;
    epoll_event events[max_events];
    resuming_.swap(resume_);
    const int count = ::epoll_wait(epoll_.get(), events, max_events, resuming_.empty() ? -1 : 0);
    if (service_events(events, count, fresh, buffer) && !resuming_.empty()) resume_reads(events, count, fresh, buffer);
    resuming_.clear();
  }

  // The frame_writer's hook: watch for writability while replies wait for the peer to read.
  static void want_write(void* context, bool want) {
    auto* connection = static_cast<server_connection*>(context);
    if (!connection->stream().plain()) return rewatch(*connection, &want, nullptr);
    epoll_event event{};
    event.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0u);
    event.data.ptr = connection;
    modify(*connection, event);
  }

 private:
  // Returns false when it finds the server stopping.
  bool service_events(const epoll_event* events, int count, std::vector<server_request*>& fresh,
                      std::vector<std::byte>& buffer) {
    for (int i = 0; i < count; ++i) {
      void* tag = events[i].data.ptr;
      if (tag == &wake_tag_) return false;  // stopping; the eventfd stays readable for every leader
      if (tag == &listen_tag_) {
        on_listener_(listener_owner_);
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
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, connection->fd(), nullptr);  // (its close() would remove it too)
    connection->close();
    std::lock_guard lock(connections_mutex_);
    connections_.erase(connection);  // requests still running keep it alive until they finish
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
    modify(connection, event);
  }

  // Changes a connection's watch. ENOENT once it was dropped: fine. Any other failure leaves the
  // old watch, which would never report the writability the replies wait for: the connection is
  // shut down instead, and the watch it has reports the end, on which the leader drops it (no
  // lock is taken here: the writer may hold its own).
  static void modify(server_connection& connection, epoll_event& event) {
    if (::epoll_ctl(connection.poller_fd(), EPOLL_CTL_MOD, connection.fd(), &event) == 0 || errno == ENOENT) return;
    ::shutdown(connection.fd(), SHUT_RDWR);
  }

  // Returns false, errno set, when epoll_ctl fails.
  bool watch(int fd, std::uint32_t events, void* tag, int op = EPOLL_CTL_ADD) {
    epoll_event event{};
    event.events = events;
    event.data.ptr = tag;
    return ::epoll_ctl(epoll_.get(), op, fd, &event) == 0;
  }

  server_context& context_;
  net::unique_fd epoll_;
  net::event_fd wake_;
  char listen_tag_ = 0;  // addresses that mark the listener and the wake-up fd in epoll events
  char wake_tag_ = 0;
  void (*on_listener_)(void*) = nullptr;
  void* listener_owner_ = nullptr;

  // Only the leader touches these: connections whose session holds bytes after a round cut short,
  // to read next round without waiting (resume_), and the round's own copy (resuming_).
  std::vector<server_connection*> resume_, resuming_;

  mutable std::mutex connections_mutex_;
  std::unordered_map<server_connection*, std::shared_ptr<server_connection>> connections_;
  bool closing_ = false;  // begin_closing() has run: admit() closes what comes
};

}  // namespace detail
GEERPC_END_NAMESPACE
