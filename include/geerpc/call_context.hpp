// geerpc: what a handler (or a server interceptor) may learn about the call it serves.
//
//   int get(const std::string& key, const geerpc::call_context& ctx) {
//     auto token = ctx.metadata("authorization");   // std::optional<std::string_view>
//     log(ctx.peer(), ctx.method(), ctx.connection_id());
//     if (ctx.identity().verified) log(ctx.identity().subject);   // mutual TLS: who is calling
//   }
//
// A handler takes it as its last parameter, or just before or after a std::stop_token. Everything
// it returns views the request: valid while the handler (or interceptor hook) runs; copy what must
// outlive that.
//
// Across hops: a call the handler makes on its own thread inherits the handler's deadline (less a
// reserve for the reply), its stop_token and the propagated metadata, without being told
// (context.hpp); geerpc::context::from(ctx) carries the same to another thread, a responder or a
// coroutine. stop_token() gives any handler the token a handler taking one gets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include <stop_token>

#include "config.hpp"
#include "context.hpp"
#include "detail/chrono.hpp"
#include "detail/current_call.hpp"
#include "net/peer_identity.hpp"
#include "wire/metadata.hpp"

GEERPC_BEGIN_NAMESPACE

class call_context;
namespace detail {

// What a call_context asks its server for, only when a handler asks: the request's stop token (made
// on the first ask) and what a call made for it inherits (context::from).
struct call_origin {
  std::stop_token (*stop_token)(void* request);
  context (*downstream)(void* request, const call_context& handler);
};

}  // namespace detail

class call_context {
 public:
  using clock = std::chrono::steady_clock;

  // An empty context (no peer, no method, no metadata): for calling a handler directly in a test.
  call_context() = default;

  // The peer's address: "127.0.0.1:40312", "[::1]:40312", or "unix@" for a Unix socket's (unnamed)
  // peer. Worked out the first time a call of the connection asks for it.
  std::string_view peer() const { return peer_of_ != nullptr ? peer_of_(peer_owner_) : std::string_view{}; }
  // "Service.Method", as the caller named it.
  std::string_view method() const noexcept { return method_; }
  // When the caller gives up, if it sent a deadline (the server's handle timeout is not this).
  const std::optional<clock::time_point>& deadline() const noexcept { return deadline_; }
  // When the server stops wanting an answer: the earlier of the caller's deadline and the server's
  // handle timeout, if either applies. A call the handler makes inherits this less a reserve for
  // the reply (docs/timeouts.md, "Across hops"). By the runtime's clock: steady_clock's, or a
  // test's manual clock (scheduler()->manual()), whose time a client on the same runtime reads too.
  const std::optional<clock::time_point>& handler_deadline() const noexcept { return handler_deadline_; }
  // Fires when the call no longer wants an answer: its handle timeout or the caller's deadline
  // passed, the caller canceled, its connection closed, or the server is stopping; the token a
  // handler taking a std::stop_token gets. For any other handler it is made on the first ask (an
  // allocation), fired at once if one of those already happened. Ask while the handler runs; the
  // token stays valid after. A context made by hand has none. In an interceptor's `after` the call
  // is answered: a token first asked there is made fired, even for a call that succeeded, while
  // one the handler took fires only if one of those things happened; judge the call by its result.
  std::stop_token stop_token() const { return origin_ != nullptr ? origin_->stop_token(request_) : std::stop_token{}; }
  // Unique among the connections this server has accepted: calls sharing it share a connection.
  std::uint64_t connection_id() const noexcept { return connection_id_; }
  // What the connection's stream layer proved about the peer (net/peer_identity.hpp): with TLS,
  // encrypted, and, when the peer's certificate verified (mutual TLS), its subject and SANs; for a
  // plain connection, nothing. Taken once per connection, when its hello was accepted (after the
  // TLS handshake): valid while the handler runs, as everything here; copy what must outlive it.
  const net::peer_identity& identity() const noexcept {
    return identity_ != nullptr ? *identity_ : net::no_peer_identity();
  }
  // Whether the connection's bytes are encrypted (identity().encrypted).
  bool encrypted() const noexcept { return identity().encrypted; }
  // The value the caller attached under `key` (context::with_metadata), if any.
  std::optional<std::string_view> metadata(std::string_view key) const {
    return metadata_.empty() ? std::nullopt : wire::find_metadata(metadata_, key);
  }
  // Calls f(key, value) for every metadata entry, in the order the caller sent them.
  template <class F>
  void for_each_metadata(F&& f) const {
    if (!metadata_.empty())
      wire::for_each_metadata(metadata_, [&](std::string_view key, std::string_view value) {
        f(key, value);
        return true;
      });
  }

  // What the server fills in (detail): the peer comes from `peer_of(peer_owner)`; `metadata` is a
  // block wire::check_metadata accepted, or empty.
  struct parts {
    std::string_view method;
    std::optional<clock::time_point> deadline;
    std::uint64_t connection_id = 0;
    std::span<const std::byte> metadata;
    const void* peer_owner = nullptr;
    std::string_view (*peer_of)(const void*) = nullptr;
    const net::peer_identity* identity = nullptr;  // the connection's; null: none proved
    std::optional<clock::time_point> handler_deadline;
    void* request = nullptr;  // what `origin` is asked about
    const detail::call_origin* origin = nullptr;
  };
  explicit call_context(const parts& p) noexcept
      : method_(p.method),
        deadline_(p.deadline),
        connection_id_(p.connection_id),
        metadata_(p.metadata),
        peer_owner_(p.peer_owner),
        peer_of_(p.peer_of),
        identity_(p.identity),
        handler_deadline_(p.handler_deadline),
        request_(p.request),
        origin_(p.origin) {}

 private:
  friend class context;
  // context::from(*this): the handler's; a context made by hand passes its deadline() on, nothing more.
  context downstream() const {
    if (origin_ != nullptr) return origin_->downstream(request_, *this);
    return detail::context_access::settle(deadline_ ? context{}.with_deadline(*deadline_) : context{});
  }

  std::string_view method_;
  std::optional<clock::time_point> deadline_;
  std::uint64_t connection_id_ = 0;
  std::span<const std::byte> metadata_;
  const void* peer_owner_ = nullptr;
  std::string_view (*peer_of_)(const void*) = nullptr;
  const net::peer_identity* identity_ = nullptr;
  std::optional<clock::time_point> handler_deadline_;
  void* request_ = nullptr;
  const detail::call_origin* origin_ = nullptr;
};

inline context context::from(const call_context& handler) { return handler.downstream(); }

namespace detail {
// On a handler's thread: `ctx` with `handler`'s context merged in, unless `ctx` is settled (made by
// context::from, or merged already); in a server interceptor's `after` (current_call.answered),
// only the handler's propagated metadata: its deadline has passed or its stop has fired by then.
[[gnu::noinline, gnu::cold]] inline std::optional<context> merged_with(const context& ctx,
                                                                       const call_context& handler) {
  if (!context_access::inherits(ctx)) return std::nullopt;
  if (current_call.answered) return context_access::merge(ctx, context::from(handler).detached());
  return context_access::merge(ctx, context::from(handler));
}

// The inheritance rule, for every way a call is made (client/call_surface.hpp, a balanced
// client's broadcast): the context a call given `ctx` runs with, when that is not `ctx` itself.
// Outside a handler it is empty and costs one thread-local read: this part is always inlined, the
// merge is not.
[[gnu::always_inline]] inline std::optional<context> inherited_here(const context& ctx) {
  if (const call_context* handler = current_call.call; handler != nullptr) [[unlikely]]
    return merged_with(ctx, *handler);
  return std::nullopt;
}
}  // namespace detail

GEERPC_END_NAMESPACE
