// geerpc: the etcd auth token one gateway holds, shared by every thread that uses the gateway.
//
// Two locks, each with one job:
// - `mutex_` guards the token and its generation; it is held only to copy or replace them, never
//   across a request, so a thread reading the token never waits for the network.
// - `refresh_mutex_` lets one thread at a time authenticate. It is held across the authenticate
//   request (bounded by options::request_timeout) on purpose: the threads that found the same
//   token rejected wait for that one request and then use its token, instead of each
//   authenticating in turn. It is taken before `mutex_`, never the other way round.
// The token is never put in an error message.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace etcd::detail {

class auth_token {
 public:
  struct snapshot {
    std::string token;  // empty before the first authentication
    std::uint64_t generation = 0;
  };

  snapshot current() const {
    std::lock_guard lock(mutex_);
    return {token_, generation_};
  }

  // Replaces the token seen in `seen` by what authenticate() returns, unless another thread has
  // replaced it meanwhile (then that newer token is the answer). authenticate() runs with no
  // lock but refresh_mutex_ held; what it throws goes to the caller, and the token stays.
  template <class Authenticate>
  snapshot refresh(const snapshot& seen, Authenticate&& authenticate) {
    std::lock_guard one_at_a_time(refresh_mutex_);
    {
      std::lock_guard lock(mutex_);
      if (generation_ != seen.generation) return {token_, generation_};
    }
    std::string fresh = std::forward<Authenticate>(authenticate)();
    std::lock_guard lock(mutex_);
    token_ = std::move(fresh);
    ++generation_;
    ++authentications_;
    return {token_, generation_};
  }

  // How many tokens etcd gave (1 after the first request; one more at each refresh).
  std::uint64_t authentications() const {
    std::lock_guard lock(mutex_);
    return authentications_;
  }

 private:
  mutable std::mutex refresh_mutex_;
  mutable std::mutex mutex_;
  std::string token_;
  std::uint64_t generation_ = 0;
  std::uint64_t authentications_ = 0;
};

}  // namespace etcd::detail
GEERPC_END_NAMESPACE
