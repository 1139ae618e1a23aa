// geerpc: interceptors, code that sees every call on its way in and its outcome on its way out:
// an auth check, logging, metrics, a trace id.
//
//   server.use({.before = [](const geerpc::call_context& ctx) -> std::optional<geerpc::error> {
//                 if (ctx.metadata("authorization") != "Bearer s3cret")
//                   return geerpc::error{geerpc::errc::unauthenticated, "missing or wrong token"};
//                 return std::nullopt;                                  // let the call through
//               },
//               .after = [](const geerpc::call_context& ctx, const geerpc::call_result& r) {
//                 log(ctx.method(), r.error, r.duration);
//               }});
//
//   auto client = geerpc::dial(address, {.interceptors = {{
//       .before = [](geerpc::client_call& call) { call.ctx = call.ctx.with_metadata("trace-id", next_id()); },
//       .after = [](const geerpc::client_call& call, const geerpc::call_result& r) { ... }}}});
//
// With none installed (the default), calls pay nothing for them: one empty-check.
#pragma once

#include <concepts>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "call_context.hpp"
#include "config.hpp"
#include "context.hpp"
#include "detail/chrono.hpp"
#include "error.hpp"
#include "net/peer_identity.hpp"

GEERPC_BEGIN_NAMESPACE

// How a call ended, as an interceptor's `after` sees it.
struct call_result {
  std::error_code error;     // empty: the call succeeded
  std::string_view message;  // the error's text; empty on success
  // Server: from reading the request to answering it (waiting for a handler thread included).
  // Client: from the call to its outcome.
  std::chrono::nanoseconds duration{0};
  bool ok() const noexcept { return !error; }
};

// On the server (basic_server::use, before listen). For every request that names a method:
//   - `before` runs on the handler's thread, just before the argument is decoded and the handler
//     runs. Returning an error refuses the call: the handler does not run, and the caller gets
//     that error (a code of geerpc's category travels as itself, e.g. errc::unauthenticated or
//     errc::permission_denied; any other code as errc::remote_error) with its message. An
//     exception thrown by `before` refuses the call with errc::remote_error and its what().
//     Interceptors run in the order they were added; the first refusal ends the round.
//   - `after` runs once per request, after it was answered and its handler (if one ran) returned,
//     with the outcome the caller was sent: also for calls refused before any handler (an unknown
//     method, a type mismatch, busy, bad metadata), for calls timed out or cancelled, and for
//     calls whose connection closed first (errc::connection_closed; nothing was sent). It runs on
//     a handler thread, or, for a call refused before any handler, on the thread that reads the
//     connection (the threaded server's one I/O thread: keep it short). The request still counts
//     in flight while it runs. An exception it throws is dropped. A call it makes on its thread
//     carries the call's propagated metadata (a trace id), not its deadline or cancellation: the
//     call is over (docs/timeouts.md, section 8). One `before` makes inherits all three.
// Both must be safe to call from several threads at once.
struct server_interceptor {
  std::function<std::optional<error>(const call_context&)> before{};
  std::function<void(const call_context&, const call_result&)> after{};
};

// The usual policy of a mutual-TLS server as one interceptor: a call goes through when
// `allow(ctx.identity(), ctx.method())` is true. Otherwise it is refused, the handler not run:
// with errc::unauthenticated when the peer proved no identity (no verified client certificate),
// with errc::permission_denied when it did, and this method is not for it. Both messages name the
// method; the second also names the certificate's subject (the caller's own).
//
//   server.use(geerpc::allow_identities([](const geerpc::net::peer_identity& who, std::string_view method) {
//     return method == "Billing.Charge" ? who.has_uri("spiffe://example.org/billing") : true;
//   }));
template <std::predicate<const net::peer_identity&, std::string_view> Allow>
server_interceptor allow_identities(Allow allow) {
  return {.before = [allow = std::move(allow)](const call_context& ctx) -> std::optional<error> {
    const net::peer_identity& who = ctx.identity();
    if (allow(who, ctx.method())) return std::nullopt;
    const std::string method(ctx.method());
    if (!who.verified)
      return error{errc::unauthenticated, "rpc server: " + method + " needs a verified client certificate"};
    return error{errc::permission_denied, "rpc server: " + method + " is not allowed for " + who.subject};
  }};
}

// One call as a client interceptor sees it. `before` may change `ctx` (add metadata, tighten the
// deadline); the call is sent with the result.
struct client_call {
  std::string_view method;
  context ctx;
};

// On the client (options::interceptors, at dial). `before` runs on the calling thread before the
// request is built; an exception it throws leaves the call (call/try_call/async_call) unsent.
// `after` runs once per call with its outcome: for call/try_call on the calling thread before the
// call returns; for async_call on the thread that completes the call (the receiving thread or a
// caller reading replies, a timer, a canceller, or the caller itself when the call ends before it
// is sent), before the future is ready. It must not block, and must not wait for or destroy a
// call_future of the same client: the thread that would complete it may be this one. It may
// start another call with async_call; on a closed connection that call completes at once, inline,
// so an `after` that retries every failure would recurse without end. Exceptions from `after` are
// dropped, and so is `after` itself for a call whose sending threw (out of memory). A reply that fails to decode
// is a bad_response for call/try_call; for async_call the reply is decoded when the future is read, after `after` saw a
// success.
struct client_interceptor {
  std::function<void(client_call&)> before{};
  std::function<void(const client_call&, const call_result&)> after{};
};

GEERPC_END_NAMESPACE
