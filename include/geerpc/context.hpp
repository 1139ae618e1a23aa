// geerpc: what a caller attaches to one call, the C++ form of Go's context.Context: an optional
// deadline on steady_clock and an optional std::stop_token.
//
//   client.call<int>(geerpc::with_timeout(1s), "Foo.Sum", args);
//   client.call<int>(geerpc::with_timeout(1s).with_stop_token(token), "Foo.Sum", args);
#pragma once

#include <chrono>
#include <optional>
#include <stop_token>

#include "config.hpp"
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

  const std::optional<clock::time_point>& deadline() const noexcept { return deadline_; }
  const std::stop_token& stop_token() const noexcept { return stop_; }

 private:
  std::optional<clock::time_point> deadline_;
  std::stop_token stop_;
};

inline context with_deadline(context::clock::time_point tp) { return context{}.with_deadline(tp); }
template <class Rep, class Period>
context with_timeout(std::chrono::duration<Rep, Period> timeout) {
  return context{}.with_timeout(timeout);
}
inline context with_stop_token(std::stop_token token) { return context{}.with_stop_token(std::move(token)); }

GEERPC_END_NAMESPACE
