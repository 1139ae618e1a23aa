// geerpc: what a caller attaches to one call, the C++ form of Go's context.Context: an optional
// deadline on steady_clock, an optional std::stop_token, and metadata (string keys and values the
// server's handler and interceptors read through geerpc::call_context).
//
//   client.call<int>(geerpc::with_timeout(1s), "Foo.Sum", args);
//   client.call<int>(geerpc::with_timeout(1s).with_stop_token(token), "Foo.Sum", args);
//   client.call<int>(geerpc::with_metadata("authorization", "Bearer abc"), "Kv.Get", key);
#pragma once

#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config.hpp"
#include "detail/chrono.hpp"
#include "detail/deadline.hpp"

GEERPC_BEGIN_NAMESPACE

class context {
 public:
  using clock = std::chrono::steady_clock;

  context() = default;

  // The earlier of the current deadline and `tp`: a context can only get stricter.
  context with_deadline(clock::time_point tp) const {
    context copy = *this;
    if (!copy.deadline_ || tp < *copy.deadline_) copy.deadline_ = tp;
    return copy;
  }
  // `timeout` from now, as Go's context.WithTimeout: zero or negative has already expired (a call
  // fails at once with deadline_exceeded, sending nothing), and one too long for the clock
  // (nanoseconds::max(), hours::max()) is the farthest deadline, never an overflow.
  template <class Rep, class Period>
  context with_timeout(std::chrono::duration<Rep, Period> timeout) const {
    return with_deadline(detail::saturating_deadline(clock::now(), timeout));
  }
  context with_stop_token(std::stop_token token) const {
    context copy = *this;
    copy.stop_ = std::move(token);
    return copy;
  }

  // Adds `key` = `value` to the metadata sent with the call, replacing an earlier value of the same
  // key. A key is 1 to 255 bytes of printable ASCII other than space, compared exactly (no case
  // folding); a value is any bytes, at most 65,535 of them. A call whose metadata breaks these
  // fails with errc::invalid_argument before anything is sent; the server bounds the whole block
  // (server_options.limits.max_metadata_bytes, 8 KiB by default) and answers errc::bad_request beyond it.
  context with_metadata(std::string key, std::string value) const {
    context copy = *this;
    for (auto& entry : copy.metadata_)
      if (entry.first == key) {
        entry.second = std::move(value);
        return copy;
      }
    copy.metadata_.emplace_back(std::move(key), std::move(value));
    return copy;
  }

  const std::optional<clock::time_point>& deadline() const noexcept { return deadline_; }
  const std::stop_token& stop_token() const noexcept { return stop_; }
  // The metadata, in the order the keys were first added.
  const std::vector<std::pair<std::string, std::string>>& metadata() const noexcept { return metadata_; }

 private:
  std::optional<clock::time_point> deadline_;
  std::stop_token stop_;
  std::vector<std::pair<std::string, std::string>> metadata_;
};

inline context with_deadline(context::clock::time_point tp) { return context{}.with_deadline(tp); }
template <class Rep, class Period>
context with_timeout(std::chrono::duration<Rep, Period> timeout) {
  return context{}.with_timeout(timeout);
}
inline context with_stop_token(std::stop_token token) { return context{}.with_stop_token(std::move(token)); }
inline context with_metadata(std::string key, std::string value) {
  return context{}.with_metadata(std::move(key), std::move(value));
}

GEERPC_END_NAMESPACE
