// geerpc: the servers of one service, as etcd lists them under <prefix>/<service>/, for a balanced
// client (balanced_client.hpp). A thread of its own reads the list once, then watches the prefix
// and applies each change as it comes; when etcd cannot be reached it keeps the last list it had
// and tries again with a growing back-off (reading the list afresh, then watching from there).
// servers() fails only while no list has ever been had; a balanced client's call waits for the
// first list no longer than its deadline (servers_for).
//
//   auto source = std::make_shared<geerpc::etcd::discovery>("Kv", geerpc::etcd::discovery_options{});
//   geerpc::balanced_client client(source, {.mode = geerpc::select_mode::round_robin});
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../context.hpp"
#include "../detail/chrono.hpp"
#include "../detail/deadline.hpp"
#include "../detail/duration_text.hpp"
#include "../discovery.hpp"
#include "../error.hpp"
#include "gateway.hpp"
#include "registration.hpp"

GEERPC_BEGIN_NAMESPACE
namespace etcd {

struct discovery_options {
  options etcd{};
  std::string prefix = "/geerpc";  // as the servers' registration_options::prefix
  // The longest wait between two attempts to reach etcd again.
  std::chrono::milliseconds max_backoff{2000};
};

class discovery final : public geerpc::discovery {
 public:
  explicit discovery(std::string service, discovery_options opts = {})
      : service_(std::move(service)),
        opts_(std::move(opts)),
        gateway_(opts_.etcd),
        prefix_(service_key_prefix(opts_.prefix, service_)) {
    if (service_.empty() || service_.find('/') != std::string::npos)
      throw std::invalid_argument("geerpc::etcd::discovery: bad service name '" + service_ + "'");
    thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
  }
  discovery(const discovery&) = delete;
  discovery& operator=(const discovery&) = delete;
  // Stops and joins the thread (declared last, so first to go): its request or watch in flight is
  // dropped at once, so this returns within milliseconds whatever etcd does.
  ~discovery() override = default;

  // The list etcd gave last. Before the first answer, waits for the first attempt (at most the
  // request timeout); fails only when no list has ever been had, naming etcd's error.
  result<server_list> servers() override { return servers_for(context{}); }
  // As servers(), the wait for the first attempt also ending at the call's deadline
  // (errc::deadline_exceeded) or when its stop_token fires (errc::canceled): a call never waits
  // on etcd longer than its caller allows, whatever etcd does.
  result<server_list> servers_for(const context& ctx) override {
    std::unique_lock lock(mutex_);
    if (list_) return list_;
    const auto start = std::chrono::steady_clock::now();
    auto until = geerpc::detail::saturating_deadline(start, opts_.etcd.request_timeout);
    const bool deadline_first = ctx.deadline() && *ctx.deadline() < until;
    if (deadline_first) until = *ctx.deadline();
    changed_.wait_until(lock, ctx.stop_token(), until, [&] { return list_ || attempts_ > 0; });
    if (list_) return list_;
    const std::string none_yet = "rpc client: etcd discovery of " + service_ + " has no list yet";
    if (attempts_ == 0 && ctx.stop_token().stop_requested())
      return geerpc::error{make_error_code(errc::canceled),
                           none_yet + ": the call was canceled while etcd had not answered"};
    if (attempts_ == 0 && deadline_first)
      return geerpc::error{make_error_code(errc::deadline_exceeded),
                           none_yet + ": the call's deadline passed after " +
                               geerpc::detail::duration_text(std::chrono::steady_clock::now() - start) +
                               " while etcd had not answered"};
    return geerpc::error{make_error_code(errc::no_servers),
                         none_yet + ": " + (last_error_.empty() ? std::string("etcd has not answered") : last_error_)};
  }

  std::uint64_t version() const noexcept override { return version_.load(std::memory_order_acquire); }

  // Waits until the list is a different snapshot than `seen` (or timeout passes); the list now,
  // null while there has never been one.
  server_list wait_for_change(const server_list& seen, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [&] { return list_ != seen; });
    return list_;
  }

  // Whether the watch is live now (false while etcd is unreachable and the last list is kept).
  bool watching() const {
    std::lock_guard lock(mutex_);
    return watching_;
  }

  // Waits until watching() is `live` (or timeout passes); whether it is.
  bool wait_watching(bool live, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return watching_ == live; });
  }

  std::string last_error() const {
    std::lock_guard lock(mutex_);
    return last_error_;
  }

 private:
  void run(const std::stop_token& stop) {
    auto backoff = std::chrono::milliseconds{100};
    while (!stop.stop_requested()) {
      try {
        auto listed = gateway_.range(prefix_, stop);
        std::map<std::string, std::string> keys;  // key -> address
        for (auto& kv : listed.kvs) keys[std::move(kv.key)] = std::move(kv.value);
        publish(keys);
        backoff = std::chrono::milliseconds{100};
        gateway_.watch(
            prefix_, listed.revision + 1,
            [&](const std::vector<watch_event>& events) {
              for (const auto& event : events) {
                if (event.deleted)
                  keys.erase(event.key);
                else
                  keys[event.key] = event.value;
              }
              publish(keys);
            },
            stop);
      } catch (const std::exception& e) {
        std::lock_guard lock(mutex_);
        last_error_ = e.what();
        watching_ = false;
        ++attempts_;
      }
      changed_.notify_all();
      if (stop.stop_requested()) break;
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, stop, backoff, [] { return false; });
      backoff = std::min(backoff * 2, opts_.max_backoff);
    }
  }

  // A new snapshot when the set of addresses changed (sorted, without duplicates or empty ones).
  void publish(const std::map<std::string, std::string>& keys) {
    std::vector<std::string> addresses;
    addresses.reserve(keys.size());
    for (const auto& [key, address] : keys) {
      if (!address.empty()) addresses.push_back(address);
    }
    std::sort(addresses.begin(), addresses.end());
    addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
    server_list next;
    {
      std::lock_guard lock(mutex_);
      watching_ = true;
      last_error_.clear();
      ++attempts_;
      if (!list_ || *list_ != addresses) {
        next = std::make_shared<const std::vector<std::string>>(std::move(addresses));
        list_.swap(next);
        version_.fetch_add(1, std::memory_order_release);
      }
    }  // the old snapshot goes here, outside the lock
    changed_.notify_all();
  }

  const std::string service_;
  const discovery_options opts_;
  gateway gateway_;
  const std::string prefix_;
  mutable std::mutex mutex_;
  std::condition_variable_any changed_;    // list_ or attempts_ changed (_any: a call's wait ends at its stop_token)
  std::condition_variable_any wake_;       // only the stop wakes it early
  server_list list_;                       // null until etcd first answered
  std::atomic<std::uint64_t> version_{0};  // 0 until then: servers() is asked at every call
  bool watching_ = false;
  std::uint64_t attempts_ = 0;
  std::string last_error_;
  std::jthread thread_;  // last: started once everything above exists, joined before it goes
};

}  // namespace etcd
GEERPC_END_NAMESPACE
