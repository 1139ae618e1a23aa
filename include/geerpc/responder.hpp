// geerpc: deferred replies. A handler that takes a geerpc::responder<R> as its last parameter
// answers when it is ready, from any thread, instead of returning its result: it holds no handler
// thread while it waits (for another service, a timer, a queue).
//
//   void lookup(const std::string& key, geerpc::responder<std::string> reply) {
//     backend.async_call<std::string>("Store.Get", key).then([reply = std::move(reply)](auto r) mutable {
//       if (r) reply(std::move(*r)); else reply.fail(geerpc::errc::remote_error, r.message());
//     });
//   }                                                     // returns at once; the thread is free
//
// The method's result type is R (its handler returns void). Exactly one response goes out per
// call, as for any handler: the first of the responder's answer, the handle timeout, the caller's
// deadline, a cancel frame and a graceful shutdown's abort wins; the others are dropped. All of
// those but the answer fire the responder's stop_token(). A responder destroyed without answering
// (the last one, if it was moved) answers errc::remote_error, "rpc server: the handler dropped its
// responder without answering"; a handler that throws before answering answers remote_error with
// the exception's what().
//
// The call is released (its slot among server_options.limits.max_inflight, its bytes) once the handler
// has returned and the responder is destroyed; the call_context the handler got stays valid until
// the handler returns, even if the responder answered meanwhile. server.stop() fires the stop_token
// of every responder still held, and waits until each is destroyed.
//
// Do not answer or destroy a responder while holding a lock that a callback registered on its
// stop_token takes: the server's timer may be running that callback, and waits for it first. On
// the blocking transport, a deferred reply too large for the socket's buffer waits for the
// connection's thread to send the rest, at its next request (or for timeouts.write).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stop_token>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "config.hpp"
#include "error.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// Where a deferred reply goes: the server fills it in (server/connection.hpp). `respond` sends the
// response (status 0 with `value` encoded by `encode`, or an error) unless the call was answered
// already; it is called at most once. `release` lets the server finish the call (its slot, its
// bytes, the context the handler saw); it is called exactly once, after `respond` if at all, when
// both the responder and the handler are done with it.
struct deferred_target {
  using encode_fn = void (*)(const void* value, std::vector<std::byte>& out);
  void* request = nullptr;
  void (*respond)(void* request, std::uint8_t status, std::string_view message, const void* value,
                  encode_fn encode) noexcept = nullptr;
  void (*release)(void* request) noexcept = nullptr;
  std::stop_token stop;
  // Called, if set, when the handler has returned with the call still its responder's (the debug
  // page shows such a call as deferred), before the invoker lets go of it.
  void (*handed_on)(void* request) noexcept = nullptr;
};

// Shared by the responder and the invoker that made it (which answers with a handler's exception):
// the last of them to let go answers, if nobody has, and releases the call.
class deferred_state {
 public:
  deferred_state(deferred_target target, deferred_target::encode_fn encode) noexcept
      : target_(std::move(target)), encode_(encode) {}

  void retain() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    fail(static_cast<std::uint8_t>(errc::remote_error),
         "rpc server: the handler dropped its responder without answering");
    target_.release(target_.request);
    delete this;
  }
  // The first answer wins; later ones do nothing.
  void answer(const void* value) noexcept {
    if (!answered_.exchange(true, std::memory_order_acq_rel)) target_.respond(target_.request, 0, {}, value, encode_);
  }
  void fail(std::uint8_t status, std::string_view message) noexcept {
    if (!answered_.exchange(true, std::memory_order_acq_rel))
      target_.respond(target_.request, status, message, nullptr, nullptr);
  }
  bool answered() const noexcept { return answered_.load(std::memory_order_acquire); }
  const std::stop_token& stop_token() const noexcept { return target_.stop; }

 private:
  deferred_target target_;
  deferred_target::encode_fn encode_;
  std::atomic<int> refs_{1};
  std::atomic<bool> answered_{false};
};

}  // namespace detail

template <class R>
class responder {
 public:
  static_assert(std::is_void_v<R> || (std::is_object_v<R> && !std::is_const_v<R>),
                "geerpc::responder<R>: R is void or a value type");

  responder() = default;  // answers nothing: for a variable assigned later
  responder(responder&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
  responder& operator=(responder&& other) noexcept {
    if (this != &other) {
      reset();
      state_ = std::exchange(other.state_, nullptr);
    }
    return *this;
  }
  responder(const responder&) = delete;
  responder& operator=(const responder&) = delete;
  ~responder() { reset(); }

  // Answers with `value` (R not void) or with success (R void). Safe from any thread; only the
  // first answer of a call counts, and a call already answered (timed out, cancelled) drops it.
  // (V is R: an argument of another type converts to R first, so that what is encoded is an R.)
  template <class V = R>
  requires(!std::is_void_v<V>) void operator()(const std::type_identity_t<V>& value) {
    if (state_ != nullptr) state_->answer(&value);
  }
  template <class V = R>
  requires std::is_void_v<V>
  void operator()() {
    if (state_ != nullptr) state_->answer(nullptr);
  }
  // Answers with an error: `code` travels as itself (a geerpc::errc), with `message` as its text.
  void fail(errc code, std::string_view message) {
    if (state_ != nullptr) state_->fail(static_cast<std::uint8_t>(code), message);
  }
  void fail(const error& e) { fail(detail::wire_errc(e.code), e.message); }

  // Fires when the call no longer wants an answer: its handle timeout or deadline passed, it was
  // cancelled, its connection closed, or the server is stopping.
  std::stop_token stop_token() const { return state_ != nullptr ? state_->stop_token() : std::stop_token{}; }
  // Whether this call has been answered (by this responder or a copy of its state's owner).
  bool answered() const noexcept { return state_ == nullptr || state_->answered(); }
  explicit operator bool() const noexcept { return state_ != nullptr; }

  // Made by the server (detail::invoker), holding one reference to `state`.
  struct from_server {};
  responder(from_server, detail::deferred_state* state) noexcept : state_(state) {}

 private:
  void reset() noexcept {
    if (state_ != nullptr) std::exchange(state_, nullptr)->release();
  }
  detail::deferred_state* state_ = nullptr;
};

GEERPC_END_NAMESPACE
