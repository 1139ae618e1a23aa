// geerpc: what a caller attaches to one call, the C++ form of Go's context.Context: an optional
// deadline on steady_clock, an optional std::stop_token, and metadata (string keys and values the
// server's handler and interceptors read through geerpc::call_context).
//
//   client.call<int>(geerpc::with_timeout(1s), "Foo.Sum", args);
//   client.call<int>(geerpc::with_timeout(1s).with_stop_token(token), "Foo.Sum", args);
//   client.call<int>(geerpc::with_metadata("authorization", "Bearer abc"), "Kv.Get", key);
//
// Across hops (docs/timeouts.md): a call made on a handler's thread, while the handler runs,
// inherits that handler's deadline (less a reserve for its reply), its stop_token and the metadata
// the server propagates (traceparent, tracestate): its own deadline may be shorter, never longer.
// context::from(call_context) is the same inheritance as a value to hand to another thread, a
// responder or a coroutine; detached() opts a call out of the deadline and the cancellation.
//
//   client.call<int>("Store.Get", key);                           // in a handler: inherits
//   client.call<int>(geerpc::with_timeout(10ms), "Store.Get", key);   // the earlier of the two
//   client.call<int>(geerpc::detached().with_timeout(5s), "Audit.Log", entry);   // outlives it
//   std::thread([c = geerpc::context::from(ctx)] { client.call<int>(c, "Store.Get", key); });
#pragma once

#include <cstdint>
#include <memory>
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

class call_context;
namespace detail {
struct context_access;
}

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

  // What a call made for the handler that `handler` describes inherits, as a value that outlives
  // the handler (as gRPC's FromServerContext): the handler's deadline less the reserve for its
  // reply, its stop_token, and the metadata its server propagates (server_options::
  // propagated_metadata). Made while the handler runs; valid after it. Used as given: a call made
  // with it on a handler's thread inherits nothing more. Defined in call_context.hpp.
  static context from(const call_context& handler);

  // This context without its deadline and stop token, and not inheriting those of the handler it
  // is used in (as Go's context.WithoutCancel): the call outlives the handler, a caller that gives
  // up does not cancel it. Metadata is kept, and the handler's propagated metadata still added.
  // Give it a deadline of its own after: detached().with_timeout(5s).
  context detached() const {
    context copy;
    copy.metadata_ = metadata_;
    copy.lineage_ = lineage::detached;
    return copy;
  }

  const std::optional<clock::time_point>& deadline() const noexcept { return deadline_; }
  const std::stop_token& stop_token() const noexcept { return stop_; }
  // The metadata, in the order the keys were first added.
  const std::vector<std::pair<std::string, std::string>>& metadata() const noexcept { return metadata_; }

 private:
  friend struct detail::context_access;
  // How a call made on a handler's thread treats the handler's context: open (merged with it),
  // detached (takes only its propagated metadata) or settled (used as given: from(), or merged).
  enum class lineage : std::uint8_t { open, detached, settled };

  std::optional<clock::time_point> deadline_;
  std::stop_token stop_;
  std::vector<std::pair<std::string, std::string>> metadata_;
  // What stop_ needs alive while a call uses it: two stop tokens joined (detail::joined_stop).
  std::shared_ptr<const void> keep_;
  lineage lineage_ = lineage::open;
};

namespace detail {

// Fires its source when either of two stop tokens fires: a call given a stop_token of its own on
// a handler's thread is canceled by it or by the handler's. Lives as long as the call (the context,
// or an async call's completion hook, holds it).
struct joined_stop {
  struct forward {
    std::stop_source* to;
    void operator()() const noexcept { to->request_stop(); }
  };
  joined_stop(const std::stop_token& a, const std::stop_token& b)
      : first(a, forward{&source}), second(b, forward{&source}) {}
  std::stop_source source;  // first: the callbacks below may fire it as they are made
  std::stop_callback<forward> first;
  std::stop_callback<forward> second;
};

// What the call surface and the server need of a context beyond its public face.
struct context_access {
  // Whether a call with `ctx` made on a handler's thread merges the handler's context in.
  static bool inherits(const context& ctx) noexcept { return ctx.lineage_ != context::lineage::settled; }
  // What must live as long as a call made with `ctx` (null when nothing).
  static const std::shared_ptr<const void>& keep(const context& ctx) noexcept { return ctx.keep_; }
  // `ctx`, used as given from now on.
  static context settle(context ctx) noexcept {
    ctx.lineage_ = context::lineage::settled;
    return ctx;
  }
  // `given` with `inherited` (a handler's, context::from) merged in: the earlier deadline; the
  // handler's stop token, joined with the given one if there is one; the handler's metadata under
  // keys `given` did not set. A detached `given` takes only the metadata.
  static context merge(const context& given, const context& inherited) {
    context out = given;
    if (given.lineage_ != context::lineage::detached) {
      if (inherited.deadline_) out = out.with_deadline(*inherited.deadline_);
      if (!given.stop_.stop_possible()) {
        out.stop_ = inherited.stop_;
      } else if (inherited.stop_.stop_possible()) {
        auto joined = std::make_shared<joined_stop>(given.stop_, inherited.stop_);
        out.stop_ = joined->source.get_token();
        out.keep_ = std::move(joined);
      }
    }
    for (const auto& entry : inherited.metadata_) {
      bool set = false;
      for (const auto& mine : given.metadata_) set = set || mine.first == entry.first;
      if (!set) out.metadata_.push_back(entry);
    }
    out.lineage_ = context::lineage::settled;
    return out;
  }
};

}  // namespace detail

inline context with_deadline(context::clock::time_point tp) { return context{}.with_deadline(tp); }
template <class Rep, class Period>
context with_timeout(std::chrono::duration<Rep, Period> timeout) {
  return context{}.with_timeout(timeout);
}
inline context with_stop_token(std::stop_token token) { return context{}.with_stop_token(std::move(token)); }
inline context with_metadata(std::string key, std::string value) {
  return context{}.with_metadata(std::move(key), std::move(value));
}
// A context that inherits nothing of the handler it is used in but its propagated metadata
// (context::detached()).
inline context detached() { return context{}.detached(); }

GEERPC_END_NAMESPACE
