// geerpc: basic_client, a connection to one server and the calls made on it (client.hpp, the entry
// header, has its use and includes the engines).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../codec/binary.hpp"
#include "../codec/fingerprint.hpp"
#include "../config.hpp"
#include "../context.hpp"
#include "../detail/assert.hpp"
#include "../detail/chrono.hpp"
#include "../detail/scratch.hpp"
#include "../error.hpp"
#include "../interceptor.hpp"
#include "../options.hpp"
#include "../service.hpp"
#include "../transport/fwd.hpp"
#include "../transport/link.hpp"
#include "../wire/frame.hpp"
#include "../wire/metadata.hpp"
#include "announced_types.hpp"
#include "call.hpp"
#include "call_future.hpp"
#include "call_surface.hpp"
#include "jsonrpc_dial.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {
struct client_request_tag {};
struct client_reply_tag {};

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

}  // namespace detail

template <class Transport, class Codec = binary_codec>
class basic_client : public call_surface<basic_client<Transport, Codec>, Transport, Codec> {
  using link = detail::client_link<Transport>;
  using engine_type = typename link::engine;

 public:
  using transport_type = Transport;
  using codec_type = Codec;

  basic_client() = default;  // not connected: every call fails with connection_closed
  // `one_argument_calls`: the server takes exactly one argument per call (a Go net/rpc server,
  // jsonrpc@): a call with another number fails before it is sent.
  explicit basic_client(std::shared_ptr<engine_type> engine, std::vector<client_interceptor> interceptors = {},
                        bool one_argument_calls = false)
      : engine_(std::move(engine)),
        announced_(std::make_shared<detail::announced_types>()),
        one_argument_calls_(one_argument_calls) {
    if (!interceptors.empty())
      interceptors_ = std::make_shared<const std::vector<client_interceptor>>(std::move(interceptors));
  }
  basic_client(basic_client&&) noexcept = default;
  basic_client& operator=(basic_client&& other) noexcept {
    if (this != &other) {
      close();
      engine_ = std::move(other.engine_);
      announced_ = std::move(other.announced_);
      interceptors_ = std::move(other.interceptors_);
      one_argument_calls_ = other.one_argument_calls_;
    }
    return *this;
  }
  // Destroying a client while other threads still call through it is a bug, as for any object.
  ~basic_client() { close(); }

  // The calls (call, try_call, async_call: client/call_surface.hpp) come from call_surface.

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
  friend class call_surface<basic_client, Transport, Codec>;
  template <class, class>
  friend class basic_balanced_client;  // calls invoke and start; its async calls pass a completion

  // The call surface's primitives: a call by name, with its context.
  template <class R, class... A>
  result<R> invoke(const context& ctx, std::string_view method, const A&... arguments) {
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
  template <class R, class... A>
  call_future<R, Codec, Transport> start(const context& ctx, std::string_view method, const A&... arguments) {
    return start_async<R>({}, ctx, method, arguments...);
  }

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
    // Two stop tokens joined (a call made in a handler, with one of its own) stay joined until the
    // call is done: the hook lives as long as the call.
    if (const std::shared_ptr<const void>& keep = detail::context_access::keep(ctx)) [[unlikely]] {
      detail::completion_hook keeping = [keep, report = std::move(hook)](const detail::call_outcome& outcome) {
        if (report) report(outcome);
      };
      hook = std::move(keeping);
    }
    const context& sent = intercepted ? intercepted->ctx : ctx;
    schema_plan plan = schema_to_send<R, A...>(method);
    auto& frame = detail::frame_scratch<detail::client_request_tag>();
    std::unique_ptr<detail::async_state> state;
    std::optional<detail::call_outcome> ended =
        build_request(frame, sent, method, fingerprint<R, A...>, plan.schema, detail::wire_argument(arguments)...);
    if (!ended && !engine_) ended = detail::connection_closed_outcome();
    if (ended) {
      if (hook) hook(*ended);
      state = std::make_unique<detail::finished_call>(std::move(*ended));
    } else {
      if (plan.schema != nullptr) [[unlikely]] {  // its success tells that the server has seen the schema
        detail::completion_hook remember = [announced = announced_, key = plan.key,
                                            report = std::move(hook)](const detail::call_outcome& outcome) {
          if (outcome.ok()) announced->insert(key);
          if (report) report(outcome);
        };
        hook = std::move(remember);
      }
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
    schema_plan plan = schema_to_send<R, A...>(method);
    auto refused =
        build_request(frame, ctx, method, fingerprint<R, A...>, plan.schema, detail::wire_argument(arguments)...);
    result<R> out = refused ? result<R>(refused->to_error()) : wait_for_reply<R>(ctx, frame);
    detail::trim_scratch(frame);
    if (plan.schema != nullptr && out.has_value()) [[unlikely]]
      announced_->insert(plan.key);
    return out;
  }

  // The call's schema while this connection's server has not taken a call of this method with
  // these types (then the request carries it, docs/protocol.md 4.1), and the key that remembers
  // it once one has succeeded; no schema after, and for a codec without schemas.
  struct schema_plan {
    const std::string* schema = nullptr;
    std::uint64_t key = 0;
  };
  template <class R, class... A>
  schema_plan schema_to_send(std::string_view method) const {
    if constexpr (fingerprint<R, A...> == 0) {
      return {};
    } else {
      if (!announced_) return {};
      const std::uint64_t key = detail::announced_types::key(method, fingerprint<R, A...>);
      if (announced_->contains(key)) [[likely]]
        return {};
      const std::string* schema = detail::schema_of<Codec, std::tuple<detail::wire_argument_t<A>...>, R>();
      if (schema == nullptr || schema->empty() || schema->size() > wire::max_schema_size) return {};
      return {schema, key};
    }
  }

  // The request frame for `method` with the context's metadata and these arguments encoded one
  // after another (as their tuple is), or why it cannot be sent. A schema that alone would take the
  // frame past the server's limit is left out (`schema` set to null): the server then judges the
  // call by its fingerprint alone.
  template <class... A>
  std::optional<detail::call_outcome> build_request(std::vector<std::byte>& frame, const context& ctx,
                                                    std::string_view method, std::uint32_t type_fingerprint,
                                                    const std::string*& schema, const A&... arguments) const {
    if (method.size() > wire::max_text_size)
      return detail::call_outcome::failure(errc::invalid_argument, "rpc client: method name too long");
    // Go's server reads `params` as one value, and would take [] or [a, b] for it without a word.
    if (one_argument_calls_ && sizeof...(A) != 1) [[unlikely]]
      return detail::call_outcome::failure(
          errc::invalid_argument,
          "rpc client: a jsonrpc@ server (Go's net/rpc) takes exactly one argument per call, not " +
              std::to_string(sizeof...(A)) + ": pass one struct");
    std::uint8_t flags = type_fingerprint != 0 ? wire::request_flag::fingerprint : 0;
    if (schema != nullptr) flags |= wire::request_flag::schema;
    if (!ctx.metadata().empty()) {
      if (auto bad = detail::check_metadata(ctx)) return bad;
      flags |= wire::request_flag::metadata;
    }
    const std::size_t start =
        wire::begin_frame(frame, {wire::frame_kind::request, flags, 0, 0}, method, type_fingerprint);
    if (schema != nullptr) wire::append_schema(frame, *schema);
    if (!ctx.metadata().empty()) wire::append_metadata(frame, ctx.metadata());
    // The arguments one after another (binary_codec), or as the codec writes a call's arguments
    // (json_codec: one array, which refuses values JSON cannot carry, such as NaN).
    if constexpr (requires { Codec::encode_arguments(frame, arguments...); }) {
      try {
        Codec::encode_arguments(frame, arguments...);
      } catch (const std::runtime_error& e) {  // not bad_alloc: that is no fault of the arguments
        return detail::call_outcome::failure(errc::invalid_argument,
                                             std::string("rpc client: cannot encode the arguments: ") + e.what());
      }
    } else {
      (Codec::encode(arguments, frame), ...);
    }
    wire::finish_frame(frame, start);
    const std::size_t length = frame.size() - wire::length_prefix_size;
    if (engine_ && length > link::server_max_frame_size(*engine_) && schema != nullptr) {
      frame.resize(start);
      schema = nullptr;
      return build_request(frame, ctx, method, type_fingerprint, schema, arguments...);
    }
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

  std::shared_ptr<engine_type> engine_;
  // The call types its server has taken (their schemas go no more); shared with the completions of
  // asynchronous calls that carried one, which may run after the client is gone.
  std::shared_ptr<detail::announced_types> announced_;
  std::shared_ptr<const std::vector<client_interceptor>> interceptors_;  // null: none (options::interceptors)
  bool one_argument_calls_ = false;  // a jsonrpc@ server's: exactly one argument per call
};

// The one way to connect: to `address`, with the handshake done within opts.timeouts.connect. The
// address's form chooses the way in (net/address.hpp):
//   "host:port", "tcp@host:port", "[v6]:port"   TCP
//   "unix@/path", "unix@@name"                  a Unix domain socket (a file, or Linux's abstract one)
//   "http@host:port"                            TCP, asking for the RPC protocol with an HTTP CONNECT
//                                               first (GeeRPC's DialHTTP; it counts in the timeout)
//   "jsonrpc@host:port"                         TCP to a Go net/rpc server served with
//                                               jsonrpc.ServeConn: Codec must be geerpc::json_codec,
//                                               and a call takes exactly one argument
//                                               (docs/protocol.md 9.6)
// A malformed address fails with errc::connect_failed, its message naming what is wrong and the
// forms accepted. try_dial returns the failure; dial throws it as rpc_error.
template <class Transport = threaded, class Codec = binary_codec>
result<basic_client<Transport, Codec>> try_dial(std::string_view address, const options& opts = {}) {
  if (detail::is_jsonrpc_address(address)) [[unlikely]] {
    options jsonrpc = opts;
    if (auto refused = detail::use_jsonrpc_session<Codec>(address, jsonrpc)) return std::move(*refused);
    auto engine = detail::client_link<Transport>::open(address, jsonrpc, Codec::id);
    if (!engine) return engine.error();
    return basic_client<Transport, Codec>(std::move(engine).value(), opts.interceptors, true);
  }
  auto engine = detail::client_link<Transport>::open(address, opts, Codec::id);
  if (!engine) return engine.error();
  return basic_client<Transport, Codec>(std::move(engine).value(), opts.interceptors);
}

template <class Transport = threaded, class Codec = binary_codec>
basic_client<Transport, Codec> dial(std::string_view address, const options& opts = {}) {
  return try_dial<Transport, Codec>(address, opts).value();
}

using client = basic_client<threaded>;

GEERPC_END_NAMESPACE
