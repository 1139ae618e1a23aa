// geerpc: a server's entry in etcd. A registration puts <prefix>/<service>/<address> (value: the
// address) for each of the server's services under one lease, keeps the lease alive from a thread
// of its own, puts the keys again under a new lease when etcd has lost the old one (a lease that
// expired while etcd was unreachable, an etcd restarted without its data), and revokes the lease
// on withdraw() or destruction, so that clients watching stop routing to the server at once.
//
//   geerpc::etcd::registration entry({"Kv"}, server.listen("127.0.0.1:0"), {.ttl = 10s});
//   ...
//   entry.withdraw();      // clients stop choosing this server
//   server.shutdown(5s);   // calls already on their way still finish (or get going_away)
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "gateway.hpp"

GEERPC_BEGIN_NAMESPACE
namespace etcd {

struct registration_options {
  options etcd{};
  // Keys are <prefix>/<service>/<address>; discovery must use the same prefix.
  std::string prefix = "/geerpc";
  // The lease's time to live: how long a server that died without a word stays listed. The lease
  // is kept alive every ttl / 3.
  std::chrono::seconds ttl{10};
};

inline std::string service_key_prefix(const std::string& prefix, const std::string& service) {
  return prefix + "/" + service + "/";
}

class registration {
 public:
  registration(std::vector<std::string> services, std::string address, registration_options opts = {})
      : services_(std::move(services)), address_(std::move(address)), opts_(std::move(opts)), gateway_(opts_.etcd) {
    if (services_.empty()) throw std::invalid_argument("geerpc::etcd::registration: no service");
    if (address_.empty()) throw std::invalid_argument("geerpc::etcd::registration: no address");
    if (opts_.ttl < std::chrono::seconds{1}) throw std::invalid_argument("geerpc::etcd::registration: ttl under 1 s");
    for (const auto& service : services_) {
      if (service.empty() || service.find('/') != std::string::npos)
        throw std::invalid_argument("geerpc::etcd::registration: bad service name '" + service + "'");
    }
    thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
  }
  registration(std::string service, std::string address, registration_options opts = {})
      : registration(std::vector<std::string>{std::move(service)}, std::move(address), std::move(opts)) {}

  registration(const registration&) = delete;
  registration& operator=(const registration&) = delete;
  ~registration() { withdraw(); }

  // Stops keeping the lease alive and revokes it, which deletes the keys: watching clients drop
  // this server at once. If etcd cannot be reached, the keys go when the lease expires (ttl).
  // Idempotent. The thread's request in flight (a keep-alive, or the grant and puts) is dropped at
  // once; then the revoke, when there is a lease, waits at most options::request_timeout.
  void withdraw() {
    if (thread_.joinable()) {
      thread_.request_stop();
      thread_.join();
    }
    std::int64_t lease = 0;
    {
      std::lock_guard lock(mutex_);
      lease = std::exchange(lease_, 0);
      // Stopped between the grant and the last put: some keys may be in etcd under it.
      if (lease == 0) lease = granted_;
      granted_ = 0;
    }
    if (lease == 0) return;
    try {
      gateway_.revoke(lease);
    } catch (const error&) {
      // Unreachable etcd: the lease expires on its own.
    }
    changed_.notify_all();
  }

  // Waits until the keys are in etcd (under a lease kept alive) or timeout passes.
  bool wait_registered(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return lease_ != 0; });
  }

  // Waits until the keys have been put under a lease at least `count` times (1 once registered;
  // one more each time etcd lost the lease and they were put again), or timeout passes.
  bool wait_registrations(std::uint64_t count, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return registrations_ >= count; });
  }

  std::uint64_t registrations() const {
    std::lock_guard lock(mutex_);
    return registrations_;
  }

  // The last failure to reach or use etcd, empty after a success.
  std::string last_error() const {
    std::lock_guard lock(mutex_);
    return last_error_;
  }

  const std::string& address() const noexcept { return address_; }

 private:
  void run(const std::stop_token& stop) {
    const auto interval = std::chrono::duration_cast<std::chrono::milliseconds>(opts_.ttl) / 3;
    const auto retry = std::min(interval, std::chrono::milliseconds{500});
    std::int64_t lease = 0;
    while (!stop.stop_requested()) {
      try {
        if (lease == 0) {
          lease = gateway_.grant(opts_.ttl, stop);
          {
            std::lock_guard lock(mutex_);
            granted_ = lease;
          }
          for (const auto& service : services_)
            gateway_.put(service_key_prefix(opts_.prefix, service) + address_, address_, lease, stop);
          std::lock_guard lock(mutex_);
          lease_ = lease;
          ++registrations_;
          last_error_.clear();
        } else if (gateway_.keep_alive(lease, stop) <= 0) {
          lease = 0;  // etcd lost it (expired, or etcd came back without its data): register again
          std::lock_guard lock(mutex_);
          lease_ = 0;
          last_error_ = "etcd: lease lost; registering again";
          continue;
        }
        changed_.notify_all();
        sleep(stop, interval);
      } catch (const std::exception& e) {
        // Unreachable etcd, or a put that failed after the grant: the next round tries again (a
        // lease granted without its keys expires by itself).
        {
          std::lock_guard lock(mutex_);
          // A request dropped by withdraw() is no failure of etcd's.
          if (!stop.stop_requested()) last_error_ = e.what();
          if (lease_ == 0) lease = 0;
        }
        sleep(stop, retry);
      }
    }
  }

  void sleep(const std::stop_token& stop, std::chrono::milliseconds how_long) {
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, stop, how_long, [] { return false; });
  }

  const std::vector<std::string> services_;
  const std::string address_;
  const registration_options opts_;
  gateway gateway_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;   // lease_ or registrations_ changed
  std::condition_variable_any wake_;  // only the stop wakes it early
  std::int64_t lease_ = 0;            // the lease the keys are under, 0 when none
  std::int64_t granted_ = 0;          // the last lease granted, its keys put or not: withdraw() revokes it
  std::uint64_t registrations_ = 0;
  std::string last_error_;
  std::jthread thread_;  // last: started once everything above exists, joined before it goes
};

}  // namespace etcd
GEERPC_END_NAMESPACE
