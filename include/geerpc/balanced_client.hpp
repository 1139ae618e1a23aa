// geerpc: a client over many servers, GeeRPC's XClient. Each call goes to one server its
// discovery lists (discovery.hpp), chosen by a select_mode; broadcast() goes to all of them.
//
//   auto servers = std::make_shared<geerpc::static_discovery>(std::vector<std::string>{"10.0.0.1:9999", ...});
//   geerpc::balanced_client fleet(servers, {.mode = geerpc::select_mode::least_inflight,
//                                           .idempotent = {"Kv.Get"}});
//   int sum = fleet.call<int>(geerpc::with_timeout(1s), "Math.Add", 1, 2);
//   auto all = fleet.broadcast<void>(geerpc::with_timeout(1s), "Cache.Flush");
//
// The servers, their connections and back-offs, and the choice of one: client/server_set.hpp
// (select_mode and balanced_options are there too).
//
// Failures: a failed dial or a broken connection leaves the server out for a back-off (growing,
// capped; balanced_options), and the call moves to another server within its deadline: always
// when the request was never sent (the dial failed, the server answered busy or going_away), and
// after a broken connection only for a method marked idempotent, which might have run. Other
// errors (the handler's own, a deadline) are the call's outcome. When every server is left out,
// the one whose back-off ends first is tried anyway.
//
// Every member is safe to call from several threads at once. Do not destroy a balanced client
// from a completion (then() callback, resumed coroutine) of one of its own calls.
#pragma once

#ifndef GEERPC_OUTERMOST_ENTRY
#define GEERPC_OUTERMOST_ENTRY 7  // this header ends the internal macros' scope
#endif

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "call_context.hpp"
#include "client.hpp"
#include "client/server_set.hpp"
#include "config.hpp"
#include "context.hpp"
#include "detail/current_call.hpp"
#include "discovery.hpp"
#include "error.hpp"
#include "options.hpp"

GEERPC_BEGIN_NAMESPACE

// What broadcast() got: success only if every server succeeded, else the first error; and each
// server's own outcome, in the discovery's order.
template <class R>
struct broadcast_result {
  struct reply {
    std::string address;
    result<R> value;
  };
  result<void> outcome;
  std::vector<reply> replies;
  explicit operator bool() const noexcept { return outcome.has_value(); }
};

template <class Transport = threaded, class Codec = binary_codec>
class basic_balanced_client : public call_surface<basic_balanced_client<Transport, Codec>, Transport, Codec> {
 public:
  using client_type = basic_client<Transport, Codec>;
  template <class R>
  using future = call_future<R, Codec, Transport>;

  explicit basic_balanced_client(std::shared_ptr<discovery> source, balanced_options opts = {})
      : idempotent_(opts.idempotent), servers_(std::move(source), std::move(opts)) {}
  // Closes every connection; calls on them still pending complete with connection_closed.
  ~basic_balanced_client() = default;
  basic_balanced_client(const basic_balanced_client&) = delete;
  basic_balanced_client& operator=(const basic_balanced_client&) = delete;

  // The calls (call, try_call, async_call: client/call_surface.hpp) come from call_surface, as
  // basic_client's. An asynchronous call's server is chosen (and dialled, moving past a failed
  // dial) before async_call returns; once the call is on the wire, its outcome is that server's.

  // ---- broadcast: the call goes to every server listed, at once. It succeeds only if every
  // server's does; the first failure cancels the others (their handlers see their stop_token
  // fire, through the cancel frame). No server listed: errc::no_servers.
  template <class R, class... A>
  broadcast_result<R> broadcast(const context& ctx, std::string_view method, const A&... arguments) {
    // Made in a handler, it inherits as a call does (call_surface.hpp); its calls, on threads of
    // their own, are given the merged context.
    if (const call_context* handler = detail::current_call; handler != nullptr) [[unlikely]]
      if (detail::context_access::inherits(ctx))
        return broadcast<R>(detail::context_access::merge(ctx, context::from(*handler)), method, arguments...);
    auto listed = servers_.current_entries();
    if (!listed) return {listed.error(), {}};
    const std::vector<std::shared_ptr<entry>>& targets = listed.value();
    if (targets.empty()) return {servers::no_servers_error("broadcast " + std::string(method)), {}};

    std::stop_source cancel_all;
    std::optional<std::stop_callback<stop_forwarder>> forward;
    if (ctx.stop_token().stop_possible()) forward.emplace(ctx.stop_token(), stop_forwarder{&cancel_all});
    const context each = ctx.with_stop_token(cancel_all.get_token());
    std::vector<std::optional<result<R>>> outcomes(targets.size());
    std::vector<std::exception_ptr> thrown(targets.size());
    std::mutex first_mutex;
    std::optional<error> first_error;
    const auto failed = [&](const error& e) {
      {
        std::lock_guard lock(first_mutex);
        if (first_error) return;
        first_error = e;
      }
      cancel_all.request_stop();  // outside the lock: the stop callbacks run here
    };
    {
      std::vector<std::jthread> workers;
      workers.reserve(targets.size());
      for (std::size_t i = 0; i < targets.size(); ++i) {
        workers.emplace_back([&, i] {
          try {  // an interceptor's refusal, a codec's throw: the caller gets it, as from a call
            auto connected = servers_.connect(targets[i], each);
            result<R> r = [&]() -> result<R> {
              if (!connected) return connected.error();
              const call_hold hold(connected.value());
              return hold.link->client.template try_call<R>(each, method, arguments...);
            }();
            if (!r) failed(r.error());
            outcomes[i].emplace(std::move(r));
          } catch (...) {
            thrown[i] = std::current_exception();
            failed(error{make_error_code(errc::canceled), "rpc client: broadcast: a call threw"});
          }
        });
      }
    }  // joined
    for (const auto& e : thrown)
      if (e) std::rethrow_exception(e);
    broadcast_result<R> out{first_error ? result<void>(*first_error) : result<void>{}, {}};
    out.replies.reserve(targets.size());
    for (std::size_t i = 0; i < targets.size(); ++i)
      out.replies.push_back({targets[i]->address, std::move(*outcomes[i])});
    return out;
  }
  template <class R, class... A>
  requires detail::not_context<A...> broadcast_result<R> broadcast(std::string_view method, const A&... arguments) {
    return broadcast<R>(context{}, method, arguments...);
  }

  // The servers of the discovery's list last looked at, and whether each has a connection open.
  std::size_t connection_count() const { return servers_.connection_count(); }

 private:
  using servers = detail::server_set<Transport, Codec>;
  using entry = typename servers::entry;
  using link_state = typename servers::link_state;
  using call_hold = typename servers::call_hold;
  using async_hold = typename servers::async_hold;
  using tried_list = typename servers::tried_list;

  friend class call_surface<basic_balanced_client, Transport, Codec>;

  // The call surface's primitives: a call by name on a server chosen, with its context.
  template <class R, class... A>
  result<R> invoke(const context& ctx, std::string_view method, const A&... arguments) {
    return with_failover(ctx, method, [&](client_type& c) { return c.template invoke<R>(ctx, method, arguments...); });
  }
  template <class R, class... A>
  future<R> start(const context& ctx, std::string_view method, const A&... arguments) {
    return async_on<R>(ctx, [&](client_type& c, detail::completion_hook done) {
      return c.template start_async<R>(std::move(done), ctx, method, arguments...);
    });
  }

  struct stop_forwarder {
    std::stop_source* target;
    void operator()() const noexcept { target->request_stop(); }
  };

  bool idempotent(std::string_view method) const {
    return std::find(idempotent_.begin(), idempotent_.end(), method) != idempotent_.end();
  }

  template <class F>
  auto with_failover(const context& ctx, std::string_view method, F&& attempt) {
    using out_type = decltype(attempt(std::declval<client_type&>()));
    tried_list tried;
    std::optional<error> last;
    for (;;) {
      auto picked = servers_.pick_connected(ctx, tried, last);
      if (!picked) return out_type(picked.error());
      const call_hold hold(picked.value());  // keeps the connection, and through it its server
      entry& server = *hold.link->server;
      out_type r = attempt(hold.link->client);
      if (r) {
        servers_.succeeded(server);
        return r;
      }
      const bool never_ran = r.code() == errc::going_away || r.code() == errc::busy;
      const bool broken = r.code() == errc::connection_closed;
      if (broken || r.code() == errc::going_away) servers_.eject(server, r.error());
      if (!(never_ran || (broken && idempotent(method)))) return r;
      tried.push_back(hold.link->server);
      last = r.error();
    }
  }

  template <class R, class F>
  future<R> async_on(const context& ctx, F&& start) {
    tried_list tried;
    std::optional<error> last;
    auto picked = servers_.pick_connected(ctx, tried, last);
    if (!picked) {
      const error& e = picked.error();
      const errc code = e.code.category() == category() ? static_cast<errc>(e.code.value()) : errc::connect_failed;
      return future<R>(std::make_unique<detail::finished_call>(detail::call_outcome::failure(code, e.message)));
    }
    link_state& link = *picked.value();
    std::shared_ptr<async_hold> held;
    try {
      held = std::make_shared<async_hold>(link.calls);
    } catch (...) {
      link.calls->fetch_sub(1, std::memory_order_release);  // the count pick_connected raised
      throw;
    }
    // The hook lowers the count when the call completes; if the call cannot start, the hook is
    // dropped unrun, and with it the hold.
    return start(link.client, [held](const detail::call_outcome&) { held->release(); });
  }

  const std::vector<std::string> idempotent_;
  servers servers_;
};

using balanced_client = basic_balanced_client<threaded>;

GEERPC_END_NAMESPACE

#if GEERPC_OUTERMOST_ENTRY == 7
#include "detail/macro_unscope.hpp"
#endif
