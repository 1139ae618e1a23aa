// geerpc: every connection of one server alive, for the debug page and for a stopping server that
// waits until the last one is gone.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <span>
#include <vector>

#include "../config.hpp"
#include "../detail/assert.hpp"
#include "connection_view.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// Each connection adds itself when made and takes itself out when destroyed. Lock order: the
// registry's lock before a connection's own locks; nothing holding a connection's lock takes it.
class connection_registry {
 public:
  void add(listed_connection& connection) {
    std::lock_guard lock(mutex_);
    connection.registry_index_ = list_.size();
    list_.push_back(&connection);
  }

  // Notifies wait_empty() under the lock when it takes out the last: the server may go next.
  void remove(listed_connection& connection) noexcept {
    std::lock_guard lock(mutex_);
    const std::size_t at = connection.registry_index_;
    GEERPC_ASSERT(at < list_.size() && list_[at] == &connection, "server: a connection is listed where it says it is");
    list_[at] = list_.back();
    list_[at]->registry_index_ = at;
    list_.pop_back();
    if (list_.empty()) gone_.notify_all();
  }

  // Calls f(span of every connection listed) under the lock (the debug page's read).
  template <class F>
  void visit(F&& f) const {
    std::lock_guard lock(mutex_);
    f(std::span<const listed_connection* const>(list_.data(), list_.size()));
  }

  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return list_.size();
  }

  // Waits until every connection has been destroyed: the last reference to one may be dropped by
  // a thread that is not the engine's (a timer callback that closed it), after the engine stopped.
  void wait_empty() {
    std::unique_lock lock(mutex_);
    gone_.wait(lock, [&] { return list_.empty(); });
  }

 private:
  mutable std::mutex mutex_;
  std::vector<listed_connection*> list_;
  std::condition_variable gone_;
};

}  // namespace detail
GEERPC_END_NAMESPACE
