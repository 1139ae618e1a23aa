// geerpc: where a balanced client (balanced_client.hpp) learns which servers to call. A static list
// is here; <geerpc/etcd.hpp> watches etcd; implement geerpc::discovery for any other registry.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "config.hpp"
#include "context.hpp"
#include "error.hpp"

GEERPC_BEGIN_NAMESPACE

// The servers to call, as addresses dial() takes ("host:port", "unix@/path", "http@host:port"): a
// snapshot that does not change once made.
using server_list = std::shared_ptr<const std::vector<std::string>>;

class discovery {
 public:
  virtual ~discovery() = default;
  // The servers to call now. Called before every call, from any thread at once: it must be cheap
  // and thread-safe, and return the same snapshot while the list has not changed (a balanced
  // client compares snapshots by pointer, and looks at a new one's addresses only). An error when
  // no list can be had, which the caller gets; an empty list fails calls with errc::no_servers.
  virtual result<server_list> servers() = 0;
  // servers() for one call, whose context bounds any wait: a discovery that may wait (for its first
  // list, as the etcd one does) waits no longer than the call's deadline, answering
  // errc::deadline_exceeded when it passes first, and stops waiting when the call's stop_token
  // fires (errc::canceled). A balanced client asks through this; the default calls servers(), for
  // a discovery that never waits.
  virtual result<server_list> servers_for(const context& /*ctx*/) { return servers(); }
  // A number that changes (and is never 0) whenever servers() will give a new snapshot, read by a
  // balanced client before every call: while it stays the same, servers() is not called. Raise it
  // after the new snapshot is in place. 0, the default, says nothing: servers() is then called
  // before every call.
  virtual std::uint64_t version() const noexcept { return 0; }
};

// A list the program gives, and may replace at any time.
class static_discovery final : public discovery {
 public:
  explicit static_discovery(std::vector<std::string> addresses)
      : list_(std::make_shared<const std::vector<std::string>>(std::move(addresses))) {}

  void update(std::vector<std::string> addresses) {
    auto next = std::make_shared<const std::vector<std::string>>(std::move(addresses));
    {
      std::lock_guard lock(mutex_);
      list_.swap(next);
    }
    version_.fetch_add(1, std::memory_order_release);
  }  // the old snapshot goes here, outside the lock

  result<server_list> servers() override {
    std::lock_guard lock(mutex_);
    return list_;
  }
  std::uint64_t version() const noexcept override { return version_.load(std::memory_order_acquire); }

 private:
  std::mutex mutex_;
  server_list list_;
  std::atomic<std::uint64_t> version_{1};
};

GEERPC_END_NAMESPACE
