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
// the one whose back-off ends first is tried anyway. Each such move past busy or a broken
// connection spends from the retry budget (client/retry_budget.hpp, gRPC's retry throttling): when
// it is spent, the call fails with its last error instead of moving on, so that retries never
// multiply an overload; nor does a call move on once its deadline has passed. A move past
// going_away (a server draining, the request never ran) spends nothing.
//
// Hedging (balanced_options::hedging, off by default; threaded transport): a synchronous call of an
// idempotent method that has not answered after a delay (fixed, or the method's recent p95) gets a
// second attempt on another server whose connection is open (a hedge never dials); the first
// answer wins and the other attempt is cancelled (its handler sees its stop_token fire). Asynchronous
// calls are not hedged.
//
// Every member is safe to call from several threads at once. Do not destroy a balanced client
// from a completion (then() callback, resumed coroutine) of one of its own calls.
#pragma once

#ifndef GEERPC_OUTERMOST_ENTRY
#define GEERPC_OUTERMOST_ENTRY 7  // this header ends the internal macros' scope
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
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
#include "client/hedging.hpp"
#include "client/retry_budget.hpp"
#include "client/server_set.hpp"
#include "config.hpp"
#include "context.hpp"
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
      : idempotent_(opts.idempotent),
        hedging_(opts.hedging),
        budget_(std::make_shared<detail::retry_budget>(opts.retry_budget)),
        servers_(std::move(source), std::move(opts)) {}
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
    if (const std::optional<context> merged = detail::inherited_here(ctx)) [[unlikely]]
      return broadcast<R>(*merged, method, arguments...);
    auto listed = servers_.current_entries(ctx);
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
    if constexpr (Transport::supports_async) {
      if (hedging_.enabled && hedging_.max_attempts > 1 && idempotent(method)) [[unlikely]]
        return hedged<R>(ctx, method, arguments...);
    }
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
        budget_->succeeded();
        return r;
      }
      const std::optional<bool> may_move = after_failure(r.error(), server, idempotent(method));
      if (!may_move) return r;
      tried.push_back(hold.link->server);
      if (!*may_move) {
        if (!servers_.lists_untried(tried)) return r;  // nothing to retry on: the budget stopped nothing
        return out_type(budget_spent(r.error()));
      }
      if (past_deadline(ctx)) return r;
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
    // The hook lowers the count when the call completes, and its outcome reaches the budget as a
    // synchronous call's does: a success refills it, a busy answer (the overload the budget guards
    // against) takes a token, though an asynchronous call is not retried. The hook holds the budget:
    // a failure may complete on the timer thread, which this client's destruction does not join.
    // If the call cannot start, the hook is dropped unrun, and with it the hold.
    return start(link.client, [held, budget = budget_](const detail::call_outcome& outcome) {
      held->release();
      if (outcome.ok())
        budget->succeeded();
      else if (outcome.status == static_cast<std::uint8_t>(errc::busy))
        budget->failed();
    });
  }

  // A hedged call (hedging_ on, an idempotent method): attempts on distinct servers, the next one
  // started when those running have not answered within the delay (a hedge: only to a server whose
  // connection is open, so that the caller never waits on a dial meanwhile), or at once when the
  // last one running was answered busy or going_away or broke (a retry, within the budget). The
  // first success, or any other failure, is the call's outcome; the attempts still running are
  // cancelled as their futures are destroyed on return.
  template <class R, class... A>
  result<R> hedged(const context& ctx, std::string_view method, const A&... arguments) {
    using clock = std::chrono::steady_clock;
    const clock::time_point started = clock::now();
    const std::size_t most = std::min<std::size_t>(hedging_.max_attempts, detail::most_hedged_attempts);
    const std::optional<std::chrono::nanoseconds> delay = hedge_delay(method);
    const auto race = std::make_shared<detail::hedge_race>(most);
    tried_list tried;                 // the attempts' servers, and those whose dial failed
    tried_list attempted;             // each attempt's server, in order
    std::vector<future<R>> attempts;  // after these: destroyed first, cancelling those still running
    tried.reserve(most);
    attempted.reserve(most);
    attempts.reserve(most);
    std::optional<error> last;
    // Starts an attempt on `link` (its count raised by the pick).
    const auto launch = [&](link_state& link) {
      std::shared_ptr<async_hold> held;
      try {
        held = std::make_shared<async_hold>(link.calls);
        tried.push_back(link.server);
        attempted.push_back(link.server);
      } catch (...) {
        if (!held) link.calls->fetch_sub(1, std::memory_order_release);  // the count the pick raised
        throw;
      }
      const std::size_t index = attempts.size();
      attempts.push_back(link.client.template start_async<R>(
          [held, race, index](const detail::call_outcome&) {
            held->release();
            race->finish(index);
          },
          ctx, method, arguments...));
    };
    // The first attempt and the retries: on a server not tried yet, dialled if need be.
    const auto launch_dialled = [&]() -> std::optional<error> {
      auto picked = servers_.pick_connected(ctx, tried, last);
      if (!picked) return picked.error();
      launch(*picked.value());
      return std::nullopt;
    };
    const auto next_hedge = [&]() -> std::optional<clock::time_point> {
      if (!delay || attempts.size() >= most) return std::nullopt;
      return detail::saturating_deadline(clock::now(), *delay);
    };

    if (auto not_started = launch_dialled()) return std::move(*not_started);
    std::optional<clock::time_point> hedge_at = next_hedge();
    for (std::size_t seen = 0;;) {
      const std::optional<std::size_t> finished = race->next(seen, hedge_at);
      if (!finished) {  // the delay passed unanswered: a hedge, if the deadline, budget and servers allow
        hedge_at.reset();
        if (past_deadline(ctx) || !budget_->allows_hedge()) continue;
        if (link_state* open = servers_.pick_open(tried)) {
          launch(*open);
          hedge_at = next_hedge();
        }
        continue;
      }
      ++seen;
      result<R> r = attempts[*finished].try_get();
      entry& server = *attempted[*finished];
      if (r) {
        servers_.succeeded(server);
        budget_->succeeded();
        // The call's time, not the winner's own: a slow attempt that got hedged counts as slow.
        if (hedging_.delay <= std::chrono::nanoseconds::zero()) latencies_.record(method, clock::now() - started);
        return r;
      }
      const std::optional<bool> may_retry = after_failure(r.error(), server, true);
      if (!may_retry) return r;
      last = r.error();
      if (seen < attempts.size()) continue;  // another attempt still runs, and may yet win
      if (past_deadline(ctx) || attempts.size() >= most) return r;
      if (!*may_retry) {
        if (!servers_.lists_untried(tried)) return r;  // nothing to retry on: the budget stopped nothing
        return budget_spent(r.error());
      }
      if (auto not_started = launch_dialled()) return std::move(*not_started);
      hedge_at = next_hedge();
    }
  }

  // An attempt on `server` failed: whether the call may move to another server, false when only
  // the retry budget stops it; none when the failure is the call's outcome. A request that never
  // ran (busy, going_away) may always move; one on a broken connection only if `idempotent`. A
  // server going away (a drain, not an overload: the request never ran) costs no budget.
  std::optional<bool> after_failure(const error& why, entry& server, bool idempotent) {
    const bool broken = why.code == errc::connection_closed;
    const bool going_away = why.code == errc::going_away;
    if (broken || going_away) servers_.eject(server, why);
    if (!(going_away || why.code == errc::busy || (broken && idempotent))) return std::nullopt;
    return going_away || budget_->failed();
  }

  // How long a hedged call of `method` waits before its next attempt; none: it is not hedged yet.
  std::optional<std::chrono::nanoseconds> hedge_delay(std::string_view method) const {
    if (hedging_.delay > std::chrono::nanoseconds::zero()) return hedging_.delay;
    const auto p95 = latencies_.p95(method);
    if (!p95) return std::nullopt;
    return std::max(*p95, hedging_.min_delay);
  }

  static error budget_spent(const error& last) {
    return {last.code, last.message + " (not retried: the balanced client's retry budget is spent)"};
  }
  static bool past_deadline(const context& ctx) {
    return ctx.deadline() && std::chrono::steady_clock::now() >= *ctx.deadline();
  }

  const std::vector<std::string> idempotent_;
  const hedging_options hedging_;
  // Shared with the completion hooks of asynchronous calls, which may outlive the client.
  const std::shared_ptr<detail::retry_budget> budget_;
  detail::latency_windows latencies_;  // of the methods hedged after their p95
  servers servers_;
};

using balanced_client = basic_balanced_client<threaded>;

GEERPC_END_NAMESPACE

#if GEERPC_OUTERMOST_ENTRY == 7
#include "detail/macro_unscope.hpp"
#endif
