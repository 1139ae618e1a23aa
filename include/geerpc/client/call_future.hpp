// geerpc: the outcome of an asynchronous call (client.async_call): wait for it, get it, cancel it,
// hand it a callback, or co_await it; and the decoding of a reply body, which every call shares.
#pragma once

#include <concepts>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "../codec/binary.hpp"
#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../detail/deadline.hpp"
#include "../error.hpp"
#include "../transport/fwd.hpp"
#include "../transport/link.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// Decodes a reply body into `value`; returns why it could not, or nothing.
template <class Codec, class R>
std::optional<error> decode_reply_into(std::span<const std::byte> bytes, R& value) {
  try {
    if (auto status = Codec::decode(bytes, value); !status)
      return error{make_error_code(errc::bad_response), "rpc client: bad response body: " + status.message()};
    return std::nullopt;
  } catch (const std::exception& e) {  // bad_alloc from a hostile reply: fail the call, not the caller
    return error{make_error_code(errc::bad_response), std::string("rpc client: bad response body: ") + e.what()};
  }
}

template <class R, class Codec>
result<R> decode_reply(std::span<const std::byte> bytes) {
  if constexpr (std::is_void_v<R>) {
    if (!bytes.empty())
      return error{make_error_code(errc::bad_response),
                   "rpc client: bad response body: expected none, got " + std::to_string(bytes.size()) + " bytes"};
    return {};
  } else {
    R value{};
    if (auto failed = decode_reply_into<Codec>(bytes, value)) return std::move(*failed);
    return value;
  }
}
}  // namespace detail

template <class Transport, class Codec>
class basic_client;  // client.hpp
template <class Transport, class Codec>
class basic_balanced_client;  // balanced_client.hpp

// The outcome of an async_call: wait for it, get it, or cancel it; hand it a callback (then), or
// co_await it. Destroying a future whose call is still pending cancels the call (the server's
// handler sees its stop_token fire).

template <class R, class Codec = binary_codec, class Transport = threaded>
class call_future {
  template <bool AsResult, class Future>
  class awaiter;

 public:
  call_future() = default;
  call_future(call_future&&) noexcept = default;
  call_future& operator=(call_future&& other) noexcept {
    if (this != &other) {
      release();
      state_ = std::move(other.state_);
    }
    return *this;
  }
  ~call_future() { release(); }

  // An empty future (default-constructed, moved from, or already got) is never ready, does not wait
  // and cannot be cancelled; try_get() on it fails with invalid_argument.
  bool valid() const noexcept { return state_ != nullptr; }
  bool ready() const { return state_ && state_->done(); }
  void wait() const {
    if (state_) state_->wait();
  }
  template <class Clock, class Duration>
  bool wait_until(const std::chrono::time_point<Clock, Duration>& tp) const {
    if (!state_) return false;
    using seconds = std::chrono::duration<double>;  // where no time point's difference overflows
    if constexpr (std::is_same_v<std::chrono::time_point<Clock, Duration>, std::chrono::steady_clock::time_point>)
      return state_->wait_until(tp);
    else  // the same moment on the steady clock, saturated
      return wait_for(seconds(tp.time_since_epoch()) - seconds(Clock::now().time_since_epoch()));
  }
  template <class Rep, class Period>
  bool wait_for(const std::chrono::duration<Rep, Period>& d) const {
    return state_ && state_->wait_until(detail::saturating_deadline(std::chrono::steady_clock::now(), d));
  }

  // Completes the call with errc::canceled, if it has not completed, and tells the server.
  void cancel() {
    if (state_) state_->cancel();
  }

  // Waits, then yields the result (once: the future is empty afterwards).
  result<R> try_get() {
    if (!state_) return error{make_error_code(errc::invalid_argument), "geerpc: call_future has no call"};
    state_->wait();
    state_->settle();
    auto state = std::move(state_);
    if (!state->final_outcome().ok()) return state->final_outcome().to_error();
    result<R> out = detail::decode_reply<R, Codec>(state->body());
    return out;
  }
  R get() { return try_get().value(); }

  // Hands the call's result to `on_done(geerpc::result<R>)`, once, when the call completes, and
  // empties the future: the call then belongs to the callback (destroying the future no longer
  // cancels it; the context's stop_token still does, and tells the server). `on_done` runs on the
  // thread that completes the call: the client's receiving thread for a reply (or a caller
  // reading replies), the process's timer thread for a deadline, the thread that cancels, closes
  // or breaks the connection; or here, before then() returns, when the call is complete already.
  // It may start other calls with async_call (a chain, a fan-out), but must not block there: make
  // no synchronous call of the same client and wait for no future of it (the thread that would
  // complete it may be this one), and keep it short on the timer thread, which every deadline of
  // the process shares. Nor may it close or destroy the client (the last handle to it): the
  // receiving thread cannot end itself. An exception leaving `on_done` ends the program
  // (std::terminate), as does a failure to allocate its holder; then() on a call that is complete
  // already runs `on_done` here, so a callback that retries on a closed client recurses.
  template <class F>
  requires std::invocable < std::decay_t<F>
  &, result < R >> void then(F&& on_done) && {
    using callback_type = std::decay_t<F>;
    struct holder {
      call_future future;
      callback_type callback;
      static void run(void* self) noexcept {
        const std::unique_ptr<holder> owned(static_cast<holder*>(self));
        owned->callback(owned->future.try_get());
      }
    };
    if (!state_) {
      callback_type callback(std::forward<F>(on_done));
      callback(try_get());
      return;
    }
    auto owned = std::make_unique<holder>(holder{std::move(*this), callback_type(std::forward<F>(on_done))});
    holder* const raw = owned.get();
    const bool later = raw->future.state_->then({&holder::run, raw});
    static_cast<void>(owned.release());  // run() owns it now, or is about to
    if (!later) holder::run(raw);
  }

  // co_await: `R r = co_await client.async_call<R>(...)` (failure throws rpc_error, as get() does),
  // or `geerpc::result<R> r = co_await client.async_call<R>(...).as_result()`. Works in any
  // coroutine type. A coroutine whose call is still pending suspends, and resumes on the thread
  // that completes the call (as then()'s callback runs: the same rules hold until its next
  // suspension); a complete call does not suspend. A future awaited as an lvalue stays valid
  // until the result is taken, which empties it. A coroutine destroyed while suspended on a call
  // cancels it and is not resumed; destroy it only from a thread that cannot be completing that
  // call at the same moment (or cancel through the context's stop_token and let it resume).
  auto operator co_await() && noexcept { return awaiter<false, call_future>(std::move(*this)); }
  auto operator co_await() & noexcept { return awaiter<false, call_future&>(*this); }
  auto as_result() && noexcept {
    struct as_result_t {
      call_future future;
      auto operator co_await() && noexcept { return awaiter<true, call_future>(std::move(future)); }
    };
    return as_result_t{std::move(*this)};
  }

 private:
  template <bool AsResult, class Future>
  class awaiter {
   public:
    explicit awaiter(Future&& future) noexcept : future_(std::forward<Future>(future)) {}
    bool await_ready() const { return !future_.valid() || future_.ready(); }
    bool await_suspend(std::coroutine_handle<> coroutine) {
      return future_.state_->then({&resume, coroutine.address()});
    }
    auto await_resume() {
      if constexpr (AsResult)
        return future_.try_get();
      else
        return future_.get();
    }

   private:
    static void resume(void* address) noexcept { std::coroutine_handle<>::from_address(address).resume(); }
    Future future_;
  };

  template <class, class>
  friend class basic_client;
  template <class, class>
  friend class basic_balanced_client;
  explicit call_future(std::unique_ptr<detail::async_state> state) : state_(std::move(state)) {}

  void release() {
    if (!state_) return;
    state_->forget();  // a coroutine destroyed while suspended here must not be resumed by the cancel
    state_->cancel();
    state_->wait();
    state_->settle();
    state_.reset();
  }

  std::unique_ptr<detail::async_state> state_;
};

GEERPC_END_NAMESPACE
