// geerpc: the client. dial() connects and handshakes within options.connect_timeout; then
//
//   int sum = client.call<int>("Foo.Sum", Args{1, 2});                          // by name
//   int sum = client.call<int>(geerpc::with_timeout(1s), "Foo.Sum", Args{1, 2}); // with a deadline
//   int sum = client.call<int>("Math.Add", 1, 2);                               // any number of arguments
//   int sum = client.call<FooApi::fn<"Sum">>({1, 2});                           // typed stub
//   int sum = client.call<MathApi::fn<"Add">>(1, 2);
//   geerpc::result<int> r = client.try_call<int>("Foo.Sum", Args{1, 2});        // no exceptions
//   auto f = client.async_call<int>("Foo.Sum", Args{1, 2}); ... f.get();        // threaded only
//   client.async_call<int>("Foo.Sum", Args{1, 2}).then([](geerpc::result<int> r) { ... });
//   int sum = co_await client.async_call<int>("Foo.Sum", Args{1, 2});           // in any coroutine
//   client.call<int>(geerpc::with_metadata("authorization", token), "Kv.Size");  // with metadata
//
// Many threads may call through one client at once. When the connection breaks, every pending
// call fails with errc::connection_closed, and so does every later one.
#pragma once

#include <chrono>
#include <concepts>
#include <coroutine>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "client/call.hpp"
#include "codec/binary.hpp"
#include "codec/fingerprint.hpp"
#include "config.hpp"
#include "context.hpp"
#include "detail/assert.hpp"
#include "detail/deadline.hpp"
#include "detail/scratch.hpp"
#include "error.hpp"
#include "interceptor.hpp"
#include "options.hpp"
#include "service.hpp"
#include "transport/fwd.hpp"
#include "transport/link.hpp"
#include "wire/frame.hpp"
#include "wire/metadata.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {
struct client_request_tag {};
struct client_reply_tag {};

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

// True when no argument is a context: a call whose first argument is one takes it as its context.
template <class... A>
inline constexpr bool not_context = (!std::is_same_v<std::remove_cvref_t<A>, context> && ...);

// A string literal or C string given to a call by name travels as a std::string (viewed, not copied).
template <class A>
decltype(auto) wire_argument(const A& argument) {
  if constexpr (std::is_array_v<A> || std::is_pointer_v<A>) {
    static_assert(std::is_convertible_v<const A&, std::string_view>,
                  "geerpc: a pointer cannot be a call's argument (a C string can: it travels as a std::string)");
    return std::string_view(argument);
  } else {
    return (argument);
  }
}

template <class A>
using wire_argument_t = std::remove_cvref_t<decltype(wire_argument(std::declval<const A&>()))>;

// Whether a typed stub of a method taking other than one argument is what these arguments call:
// the checks that say what is wrong are in check_stub_arguments.
template <class Fn, class... A>
inline constexpr bool stub_takes = Fn::arity != 1 || sizeof...(A) != 1;

// What an argument declared as D may be given as, besides a D: a std::string as anything that
// views as a std::string_view, a std::vector<T> as anything that views as a std::span<const T>.
// Those are encoded as the view, exactly as the D would be, without a copy.
template <class D>
struct argument_view {
  using type = void;
};
template <class Traits, class Alloc>
struct argument_view<std::basic_string<char, Traits, Alloc>> {
  using type = std::string_view;
};
template <class T, class Alloc>
struct argument_view<std::vector<T, Alloc>> {
  using type = std::conditional_t<std::is_same_v<T, bool>, void, std::span<const T>>;
};

template <class D, class A>
inline constexpr bool argument_fits = [] {
  using view = typename argument_view<D>::type;
  if constexpr (std::is_void_v<view>)
    return std::is_convertible_v<const A&, D>;
  else
    return std::is_convertible_v<const A&, D> || std::is_convertible_v<const A&, view>;
}();

template <class Declared, class... A>
struct arguments_convert : std::false_type {};
template <class... D, class... A>
requires(sizeof...(D) == sizeof...(A)) struct arguments_convert<std::tuple<D...>, A...>
    : std::bool_constant<(argument_fits<D, A> && ...)> {
};

template <class Fn, class... A>
constexpr void check_stub_arguments() {
  static_assert(sizeof...(A) == Fn::arity,
                "geerpc: a typed stub was called with the wrong number of arguments for its method");
  if constexpr (sizeof...(A) == Fn::arity)
    static_assert(arguments_convert<typename Fn::argument_types, A...>::value,
                  "geerpc: a typed stub was called with an argument that does not convert to the type its "
                  "method declares");
}

// An argument as what encodes as its declared type D: itself when it is a D, a view of it when it
// views as D's view, otherwise a D converted from it (a temporary that lives for the call).
template <class D, class A>
decltype(auto) as_declared(const A& argument) {
  using view = typename argument_view<D>::type;
  if constexpr (std::is_same_v<A, D>)
    return (argument);
  else if constexpr (!std::is_void_v<view> && std::is_convertible_v<const A&, view>)
    return view(argument);
  else
    return D(argument);
}

// Why a call's metadata cannot be sent, or nothing.
inline std::optional<call_outcome> check_metadata(const context& ctx) {
  for (const auto& [key, value] : ctx.metadata()) {
    if (!wire::valid_metadata_key(key))
      return call_outcome::failure(errc::invalid_argument,
                                   "rpc client: metadata key \"" + key + "\" is not 1 to 255 bytes of printable ASCII");
    if (value.size() > wire::max_metadata_value_size)
      return call_outcome::failure(errc::invalid_argument, "rpc client: metadata value of \"" + key + "\" has " +
                                                               std::to_string(value.size()) +
                                                               " bytes, more than 65535");
  }
  return std::nullopt;
}

// Calls each interceptor's `after` with how a call ended, dropping what they throw.
inline void report_after(const std::vector<client_interceptor>& interceptors, const client_call& call,
                         std::error_code code, std::string_view message, std::chrono::nanoseconds took) noexcept {
  const call_result result{code, code ? message : std::string_view{}, took};
  for (const client_interceptor& interceptor : interceptors) {
    if (!interceptor.after) continue;
    try {
      interceptor.after(call, result);
    } catch (...) {  // documented: dropped
    }
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

template <class Transport, class Codec = binary_codec>
class basic_client {
  using link = detail::client_link<Transport>;
  using engine_type = typename link::engine;

 public:
  using transport_type = Transport;
  using codec_type = Codec;

  basic_client() = default;  // not connected: every call fails with connection_closed
  explicit basic_client(std::shared_ptr<engine_type> engine, std::vector<client_interceptor> interceptors = {})
      : engine_(std::move(engine)) {
    if (!interceptors.empty())
      interceptors_ = std::make_shared<const std::vector<client_interceptor>>(std::move(interceptors));
  }
  basic_client(basic_client&&) noexcept = default;
  basic_client& operator=(basic_client&& other) noexcept {
    if (this != &other) {
      close();
      engine_ = std::move(other.engine_);
      interceptors_ = std::move(other.interceptors_);
    }
    return *this;
  }
  // Destroying a client while other threads still call through it is a bug, as for any object.
  ~basic_client() { close(); }

  // ---- calls by name: client.call<Reply>([ctx,] "Service.Method", arguments...)
  // The arguments are encoded as they are given: they must be the handler's types (a string
  // literal, C string or std::string_view travels as a std::string, a std::span as a std::vector).
  template <class R, class... A>
  requires(!is_method_ref_v<R> && detail::not_context<A...>) R call(std::string_view method, const A&... arguments) {
    return try_call<R>(context{}, method, arguments...).value();
  }
  template <class R, class... A>
  requires(!is_method_ref_v<R>) R call(const context& ctx, std::string_view method, const A&... arguments) {
    return try_call<R>(ctx, method, arguments...).value();
  }
  template <class R, class... A>
  requires(!is_method_ref_v<R> && detail::not_context<A...>) result<R> try_call(std::string_view method,
                                                                                const A&... arguments) {
    return try_call<R>(context{}, method, arguments...);
  }
  template <class R, class... A>
  requires(!is_method_ref_v<R>) result<R> try_call(const context& ctx, std::string_view method, const A&... arguments) {
    if (interceptors_) [[unlikely]] {
      client_call call{method, ctx};
      for (const client_interceptor& interceptor : *interceptors_)
        if (interceptor.before) interceptor.before(call);
      const auto started = std::chrono::steady_clock::now();
      result<R> out = plain_call<R>(call.ctx, method, arguments...);
      detail::report_after(*interceptors_, call, out.code(), out.message(), std::chrono::steady_clock::now() - started);
      return out;
    }
    return plain_call<R>(ctx, method, arguments...);
  }

  // ---- typed stubs: client.call<FooApi::fn<"Sum">>([ctx,] arguments...); types checked at compile
  // time. A one-argument method takes its argument as declared, so `{1, 2}` builds an aggregate.
  template <class Fn>
  requires(is_method_ref_v<Fn>&& Fn::arity == 1) typename Fn::result_type
      call(const typename Fn::argument_type& argument) {
    return try_call<Fn>(context{}, argument).value();
  }
  template <class Fn>
  requires(is_method_ref_v<Fn>&& Fn::arity == 1) typename Fn::result_type
      call(const context& ctx, const typename Fn::argument_type& argument) {
    return try_call<Fn>(ctx, argument).value();
  }
  template <class Fn>
  requires(is_method_ref_v<Fn>&& Fn::arity ==
           1) result<typename Fn::result_type> try_call(const typename Fn::argument_type& argument) {
    return try_call<Fn>(context{}, argument);
  }
  template <class Fn>
  requires(is_method_ref_v<Fn>&& Fn::arity ==
           1) result<typename Fn::result_type> try_call(const context& ctx,
                                                        const typename Fn::argument_type& argument) {
    return try_call<typename Fn::result_type>(ctx, Fn::name.view(), argument);
  }
  // Any other number of arguments, each converted to its declared type.
  template <class Fn, class... A>
  requires(is_method_ref_v<Fn>&& detail::stub_takes<Fn, A...>&& detail::not_context<A...>) typename Fn::result_type
      call(const A&... arguments) {
    return try_call<Fn>(context{}, arguments...).value();
  }
  template <class Fn, class... A>
  requires(is_method_ref_v<Fn>&& detail::stub_takes<Fn, A...>) typename Fn::result_type
      call(const context& ctx, const A&... arguments) {
    return try_call<Fn>(ctx, arguments...).value();
  }
  template <class Fn, class... A>
  requires(is_method_ref_v<Fn>&& detail::stub_takes<Fn, A...>&& detail::not_context<A...>)
      result<typename Fn::result_type> try_call(const A&... arguments) {
    return try_call<Fn>(context{}, arguments...);
  }
  template <class Fn, class... A>
  requires(is_method_ref_v<Fn>&& detail::stub_takes<Fn, A...>) result<typename Fn::result_type> try_call(
      const context& ctx, const A&... arguments) {
    detail::check_stub_arguments<Fn, A...>();
    return convert_arguments<typename Fn::argument_types>(
        [&](const auto&... converted) {
          return try_call<typename Fn::result_type>(ctx, Fn::name.view(), converted...);
        },
        arguments...);
  }

  // ---- asynchronous calls (threaded transport): the call is on the wire when this returns
  template <class R, class... A>
  requires(!is_method_ref_v<R>) call_future<R, Codec, Transport> async_call(const context& ctx, std::string_view method,
                                                                            const A&... arguments) {
    return start_async<R>({}, ctx, method, arguments...);
  }
  template <class R, class... A>
  requires(!is_method_ref_v<R> &&
           detail::not_context<A...>) call_future<R, Codec, Transport> async_call(std::string_view method,
                                                                                  const A&... arguments) {
    return async_call<R>(context{}, method, arguments...);
  }
  template <class Fn>
  requires(is_method_ref_v<Fn>&& Fn::arity == 1) call_future<typename Fn::result_type, Codec, Transport> async_call(
      const context& ctx, const typename Fn::argument_type& argument) {
    return async_call<typename Fn::result_type>(ctx, Fn::name.view(), argument);
  }
  template <class Fn>
  requires(is_method_ref_v<Fn>&& Fn::arity == 1)
      call_future<typename Fn::result_type, Codec, Transport> async_call(const typename Fn::argument_type& argument) {
    return async_call<typename Fn::result_type>(context{}, Fn::name.view(), argument);
  }
  template <class Fn, class... A>
  requires(is_method_ref_v<Fn>&& detail::stub_takes<Fn, A...>)
      call_future<typename Fn::result_type, Codec, Transport> async_call(const context& ctx, const A&... arguments) {
    detail::check_stub_arguments<Fn, A...>();
    return convert_arguments<typename Fn::argument_types>(
        [&](const auto&... converted) {
          return async_call<typename Fn::result_type>(ctx, Fn::name.view(), converted...);
        },
        arguments...);
  }
  template <class Fn, class... A>
  requires(is_method_ref_v<Fn>&& detail::stub_takes<Fn, A...>&& detail::not_context<A...>)
      call_future<typename Fn::result_type, Codec, Transport> async_call(const A&... arguments) {
    return async_call<Fn>(context{}, arguments...);
  }

  // Fails every pending call with connection_closed; later calls fail fast. Safe while other
  // threads are calling: the connection's memory is released only by the destructor.
  void close() {
    if (engine_) link::close(*engine_);
  }
  // Whether new calls may go out: connected, not closed, and the server has not sent goaway (a
  // graceful shutdown, docs/protocol.md 4.9; calls already made still get their replies).
  bool is_open() const { return engine_ && link::is_open(*engine_); }
  // Whether the calling thread is this client's receiving thread, where its completions (then()
  // callbacks, resumed coroutines) run: the one thread that may not close or destroy it.
  bool on_receiving_thread() const { return engine_ && link::on_own_thread(*engine_); }

 private:
  template <class, class>
  friend class basic_balanced_client;  // its async calls pass a completion of their own

  // An async_call by name; `done`, when given, runs once when the call completes, before the
  // interceptors' `after`, on whichever thread completes it (or never, if this throws first).
  template <class R, class... A>
  call_future<R, Codec, Transport> start_async(detail::completion_hook done, const context& ctx,
                                               std::string_view method, const A&... arguments) {
    static_assert(Transport::supports_async, "geerpc: async_call needs the threaded transport");
    std::optional<client_call> intercepted;
    detail::completion_hook hook;
    if (interceptors_) [[unlikely]] {
      intercepted.emplace(client_call{method, ctx});
      for (const client_interceptor& interceptor : *interceptors_)
        if (interceptor.before) interceptor.before(*intercepted);
      hook = [interceptors = interceptors_, name = std::string(method), sent = intercepted->ctx,
              started = std::chrono::steady_clock::now()](const detail::call_outcome& outcome) {
        const client_call call{name, sent};
        const error e = outcome.ok() ? error{} : outcome.to_error();
        detail::report_after(*interceptors, call, e.code, e.message, std::chrono::steady_clock::now() - started);
      };
    }
    if (done) {
      hook = hook ? detail::completion_hook(
                        [report = std::move(hook), done = std::move(done)](const detail::call_outcome& outcome) {
                          done(outcome);  // first: what the interceptors' report throws must not skip it
                          report(outcome);
                        })
                  : std::move(done);
    }
    const context& sent = intercepted ? intercepted->ctx : ctx;
    auto& frame = detail::frame_scratch<detail::client_request_tag>();
    std::unique_ptr<detail::async_state> state;
    std::optional<detail::call_outcome> ended =
        build_request(frame, sent, method, fingerprint<R, A...>, detail::wire_argument(arguments)...);
    if (!ended && !engine_) ended = detail::connection_closed_outcome();
    if (ended) {
      if (hook) hook(*ended);
      state = std::make_unique<detail::finished_call>(std::move(*ended));
    } else {
      state = link::start(engine_, sent, frame, std::move(hook));
    }
    detail::trim_scratch(frame);
    return call_future<R, Codec, Transport>(std::move(state));
  }

  // Whether a reply of type R is decoded by its receiver (Codec::cheap_to_decode; a codec without
  // that trait has its replies copied out).
  template <class R>
  static constexpr bool cheap_in_place = [] {
    if constexpr (std::is_void_v<R>)
      return true;
    else if constexpr (requires { Codec::template cheap_to_decode<R>; })
      return Codec::template cheap_to_decode<R>;
    else
      return false;
  }();

  template <class R, class... A>
  result<R> plain_call(const context& ctx, std::string_view method, const A&... arguments) {
    auto& frame = detail::frame_scratch<detail::client_request_tag>();
    auto refused = build_request(frame, ctx, method, fingerprint<R, A...>, detail::wire_argument(arguments)...);
    result<R> out = refused ? result<R>(refused->to_error()) : wait_for_reply<R>(ctx, frame);
    detail::trim_scratch(frame);
    return out;
  }

  // The request frame for `method` with the context's metadata and these arguments encoded one
  // after another (as their tuple is), or why it cannot be sent.
  template <class... A>
  std::optional<detail::call_outcome> build_request(std::vector<std::byte>& frame, const context& ctx,
                                                    std::string_view method, std::uint32_t type_fingerprint,
                                                    const A&... arguments) const {
    if (method.size() > wire::max_text_size)
      return detail::call_outcome::failure(errc::invalid_argument, "rpc client: method name too long");
    std::uint8_t flags = type_fingerprint != 0 ? wire::request_flag::fingerprint : 0;
    if (!ctx.metadata().empty()) {
      if (auto bad = detail::check_metadata(ctx)) return bad;
      flags |= wire::request_flag::metadata;
    }
    const std::size_t start =
        wire::begin_frame(frame, {wire::frame_kind::request, flags, 0, 0}, method, type_fingerprint);
    if (!ctx.metadata().empty()) wire::append_metadata(frame, ctx.metadata());
    (Codec::encode(arguments, frame), ...);
    wire::finish_frame(frame, start);
    const std::size_t length = frame.size() - wire::length_prefix_size;
    if (engine_ && length > link::server_max_frame_size(*engine_))
      return detail::call_outcome::failure(errc::invalid_argument,
                                           "rpc client: request of " + std::to_string(length) +
                                               " bytes exceeds the server's frame size limit of " +
                                               std::to_string(link::server_max_frame_size(*engine_)));
    return std::nullopt;
  }

  // The type fingerprint of a call with these arguments, expecting an R (0 if the codec has none).
  template <class R, class... A>
  static constexpr std::uint32_t fingerprint =
      detail::fingerprint_of<Codec, std::tuple<detail::wire_argument_t<A>...>, R>();

  // Sends the request in `frame` and waits for its reply, decoded as R.
  template <class R>
  result<R> wait_for_reply(const context& ctx, std::vector<std::byte>& frame) {
    if constexpr (cheap_in_place<R> && !std::is_void_v<R>) {
      // Decoded by whoever receives the reply, straight from its receive buffer, before the call
      // completes: the body is never copied out first. Into the value itself: no result to move.
      R value{};
      std::optional<error> failed;
      bool decoded = false;
      auto decode = [&](std::span<const std::byte> body) {
        decoded = true;
        if (auto out = detail::decode_reply_into<Codec>(body, value)) failed.emplace(std::move(*out));
      };
      detail::call_outcome outcome = send(ctx, frame, detail::reply_sink(decode));
      if (!outcome.ok()) return outcome.to_error();
      GEERPC_ASSERT(decoded, "a call succeeds only with a reply, whose body came here");
      if (failed) return std::move(*failed);
      return value;                            // moved (the return converts a local)
    } else if constexpr (cheap_in_place<R>) {  // void: only an empty body is right
      std::optional<result<R>> decoded;
      auto decode = [&](std::span<const std::byte> body) { decoded.emplace(detail::decode_reply<R, Codec>(body)); };
      detail::call_outcome outcome = send(ctx, frame, detail::reply_sink(decode));
      if (!outcome.ok()) return outcome.to_error();
      GEERPC_ASSERT(decoded.has_value(), "a call succeeds only with a reply, whose body came here");
      return std::move(*decoded);
    } else {
      // A reply that may take long to decode (a map, a list of strings) is copied out and decoded
      // here, so that the thread receiving every caller's replies never waits on one caller's.
      auto& reply = detail::frame_scratch<detail::client_reply_tag>();
      detail::call_outcome outcome = send(ctx, frame, detail::reply_sink::into(reply));
      if (!outcome.ok()) return outcome.to_error();
      result<R> out = detail::decode_reply<R, Codec>(reply);
      detail::trim_scratch(reply);
      return out;
    }
  }

  detail::call_outcome send(const context& ctx, std::vector<std::byte>& frame, const detail::reply_sink& reply) {
    return engine_ ? link::call(*engine_, ctx, frame, reply) : detail::connection_closed_outcome();
  }

  // Calls `f` with each argument as its declared type: as itself when it is that type, otherwise
  // converted (a temporary that lives until `f` returns).
  template <class Declared, class F, class... A>
  static decltype(auto) convert_arguments(F&& f, const A&... arguments) {
    return [&]<std::size_t... I>(std::index_sequence<I...>)->decltype(auto) {
      return f(detail::as_declared<std::tuple_element_t<I, Declared>>(arguments)...);
    }
    (std::index_sequence_for<A...>{});
  }

  std::shared_ptr<engine_type> engine_;
  std::shared_ptr<const std::vector<client_interceptor>> interceptors_;  // null: none (options::interceptors)
};

// Connects to `address` and completes the handshake within opts.connect_timeout. The address is
// "host:port", "tcp@host:port", "unix@/path" or "http@host:port" (net/address.hpp): the last asks
// for the RPC protocol with an HTTP CONNECT first, as GeeRPC's XDial does, and that counts in the
// connect timeout too.
template <class Transport = threaded, class Codec = binary_codec>
result<basic_client<Transport, Codec>> try_dial(std::string_view address, const options& opts = {}) {
  auto engine = detail::client_link<Transport>::open(address, opts, Codec::id);
  if (!engine) return engine.error();
  return basic_client<Transport, Codec>(std::move(engine).value(), opts.interceptors);
}

template <class Transport = threaded, class Codec = binary_codec>
basic_client<Transport, Codec> dial(std::string_view address, const options& opts = {}) {
  return try_dial<Transport, Codec>(address, opts).value();
}

// GeeRPC's XDial, by its name: dial() takes the same "transport@address" forms.
template <class Transport = threaded, class Codec = binary_codec>
basic_client<Transport, Codec> xdial(std::string_view address, const options& opts = {}) {
  return dial<Transport, Codec>(address, opts);
}

// GeeRPC's DialHTTP: dials a TCP address ("host:port" or "tcp@host:port") through an HTTP CONNECT.
template <class Transport = threaded, class Codec = binary_codec>
result<basic_client<Transport, Codec>> try_dial_http(std::string_view address, const options& opts = {}) {
  if (address.starts_with("unix@"))
    return error{make_error_code(errc::connect_failed),
                 "rpc client: dial_http \"" + std::string(address) + "\": HTTP CONNECT is for TCP addresses"};
  if (address.starts_with("tcp@")) address.remove_prefix(4);
  const std::string via_http = address.starts_with("http@") ? std::string(address) : "http@" + std::string(address);
  return try_dial<Transport, Codec>(via_http, opts);
}

template <class Transport = threaded, class Codec = binary_codec>
basic_client<Transport, Codec> dial_http(std::string_view address, const options& opts = {}) {
  return try_dial_http<Transport, Codec>(address, opts).value();
}

using client = basic_client<threaded>;

GEERPC_END_NAMESPACE

// The engines, unless this program compiles them once elsewhere (transport/link.hpp).
#if !defined(GEERPC_SEPARATE_COMPILATION) || defined(GEERPC_IMPLEMENTATION)
#include "transport/client_engines.hpp"
#endif
