// geerpc: what a server watches of its calls besides answering them. The connection (connection.hpp)
// calls one hook, request_observer, at each point of a request's life: when it is registered
// (arrival), when a handler thread takes it (start), before its handler (the interceptors' say),
// when it is answered, when it is finished (end), and when a call or a connection is refused or
// turned away by a limit. Behind it plug the statistics (statistics.hpp), the interceptors
// (interceptor.hpp), and through both the debug page (debug_page.hpp), which reads the statistics
// and the times kept here.
//
// With neither statistics nor interceptors (the default), each hook is one branch on the server's
// context and nothing else: no clock read, no allocation, no virtual call.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include "../call_context.hpp"
#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../detail/current_call.hpp"
#include "../error.hpp"
#include "../interceptor.hpp"
#include "../wire/frame.hpp"
#include "context.hpp"
#include "dispatcher.hpp"
#include "request_ledger.hpp"
#include "statistics.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class request_observer {
 public:
  explicit request_observer(const server_context& context) noexcept : context_(context) {}

  // Whether requests keep their times and outcome: for the interceptors, or the statistics.
  bool installed() const noexcept { return intercepted() || counting(); }
  bool intercepted() const noexcept { return !context_.config.interceptors().empty(); }
  bool counting() const noexcept { return context_.config.stats() != nullptr; }

  // A limit turned something away (statistics.hpp's limit_kind).
  void turned_away(limit_kind kind) const noexcept {
    if (counting()) context_.config.stats()->turned_away(kind);
  }

  // Registered: when it arrived (only with an observer: no clock read otherwise).
  void arrived(server_request& request) const noexcept {
    if (installed()) request.arrived = clock::now();
  }

  // A handler thread took the request at `now` (steady_clock's; read by the caller when counting()):
  // how long it waited goes to the statistics.
  void started(server_request& request, clock::time_point now) const noexcept {
    if (!counting()) return;
    request.started_ns.store(now.time_since_epoch().count(), std::memory_order_relaxed);
    server_statistics& stats = *context_.config.stats();
    stats.queue_wait().add(now, now - request.arrived);
    stats.queue_wait_total().add(duration_bounds_ns, nanoseconds_of(now - request.arrived));
  }

  // A request of `handler` answered without running it, by the check of admission.hpp (`kind`:
  // deadline_before_start or queue_time): counted beside its status. Requests registered are
  // counted when finished (count()); this is for those refused as they are read.
  void not_run(const handler_entry& handler, limit_kind kind) const noexcept {
    if (counting()) count_not_run(*context_.config.stats(), method_index(handler), kind);
  }

  // The interceptors' `before`, in turn: true, with `outcome` set, when one refuses the call.
  bool refused_before(const call_context& context, invoke_outcome& outcome) const {
    if (!intercepted()) return false;
    for (const server_interceptor& interceptor : context_.config.interceptors()) {
      if (!interceptor.before) continue;
      std::optional<error> refusal;
      try {
        refusal = interceptor.before(context);
      } catch (const std::exception& e) {
        refusal = error{make_error_code(errc::remote_error), e.what()};
      } catch (...) {
        refusal =
            error{make_error_code(errc::remote_error), "rpc server: an interceptor threw a non-standard exception"};
      }
      if (!refusal) continue;
      const std::error_code& code = refusal->code;
      outcome = invoke_outcome::failure(wire_errc(code), !refusal->message.empty() ? std::move(refusal->message)
                                                         : code                    ? code.message()
                                                                : "rpc server: the call was refused");
      return true;
    }
    return false;
  }

  // Whoever claimed the request (request_ledger::claim) keeps the response it got, for finished():
  // its status, message, and the size of its frame where the claimer made it (`bytes`; 0 for an
  // answer a timer, a cancel or a shutdown sent). noexcept: it runs after a claim, which must
  // always lead to its response and to finish().
  void answered(server_request& request, std::uint8_t status, std::string_view message,
                std::size_t bytes = 0) const noexcept {
    if (!installed()) return;
    request.answered_at = clock::now();
    request.answered_status = status;
    request.answered_bytes = bytes;
    try {
      request.answered_message.assign(message);  // a success has none
    } catch (...) {                              // no memory for the text: the interceptors see the status alone
      request.answered_message.clear();
    }
  }

  // The request is finished, answered by whoever claimed it: its method's statistics, then every
  // interceptor's `after` with the call_context `context_of()` makes. `peer`: its connection's.
  template <class ContextOf>
  void finished(const server_request& request, std::string_view peer, ContextOf&& context_of) const {
    if (counting()) count(request, peer);
    if (!intercepted()) return;
    notify_after(context_of(), request.answered_status, request.answered_message,
                 request.answered_at - request.arrived);
  }

  // A request answered without being registered (an unknown method, a type mismatch, bad
  // metadata, busy, going away): counted, and seen by the interceptors' `after` through the
  // call_context `context_of()` makes.
  template <class ContextOf>
  void refused(const wire::frame_view& frame, errc code, const std::string& message, std::string_view peer,
               ContextOf&& context_of) const {
    if (counting()) count_refused(frame, code, message, peer);
    if (!intercepted()) return;
    notify_after(context_of(), static_cast<std::uint8_t>(code), message, clock::duration::zero());
  }

 private:
  static std::uint64_t nanoseconds_of(clock::duration d) noexcept {
    return static_cast<std::uint64_t>(
        std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(d).count()));
  }
  std::size_t method_index(const handler_entry& handler) const noexcept {
    return static_cast<std::size_t>(&handler - context_.config.handlers()->methods().data());
  }

  // Adds a finished request to its method's statistics, and keeps it among the last slow or
  // failed calls if it is one.
  void count(const server_request& request, std::string_view peer) const noexcept {
    server_statistics& stats = *context_.config.stats();
    const clock::time_point now = request.answered_at;  // no clock read of its own for the common case
    method_statistics& method = stats.method(method_index(*request.handler));
    const std::uint8_t status = request.answered_status;
    const auto latency = std::chrono::duration_cast<std::chrono::nanoseconds>(request.answered_at - request.arrived);
    const auto latency_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(0, latency.count()));
    if (status == 0) {
      method.successes.fetch_add(1, std::memory_order_relaxed);
      method.latency.add(now, latency);
      method.duration_ok.add(duration_bounds_ns, latency_ns);
    } else {
      method.add_error(status);
      method.failed_latency.add(now, latency);
      method.duration_failed.add(duration_bounds_ns, latency_ns);
    }
    method.request_bytes.add(size_bounds_bytes, request.argument.size());
    // The payload, as OpenTelemetry's rpc.server.response.size means: the frame less its prefix and header.
    if (request.answered_bytes >= wire::frame_overhead)
      method.response_bytes.add(size_bounds_bytes, request.answered_bytes - wire::frame_overhead);
    if (!request.handler_began) count_unstarted(stats, method_index(*request.handler), status);
    if (status == 0 && !stats.slow(latency)) return;
    const clock::time_point started(clock::duration(request.started_ns.load(std::memory_order_relaxed)));
    const bool ran = request.handler_began && started != clock::time_point{};  // a refusal at the start ran nothing
    try {
      stats.keep({std::chrono::system_clock::now(), request.handler->name, std::string(peer),
                  std::chrono::duration_cast<std::chrono::nanoseconds>((ran ? started : request.answered_at) -
                                                                       request.arrived),
                  ran ? std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - started)
                      : std::chrono::nanoseconds{},
                  latency, status, request.answered_message});
    } catch (...) {  // no memory for the record: the call is counted all the same
    }
  }

  // A registered request finished without its handler: by the check at its start or by its
  // deadline's timer while it waited (deadline_exceeded, handle_timeout), or by max_queue_time
  // (busy: nothing else answers a registered request so). Cancels, aborts and closed connections
  // are not admission's and are not counted here.
  static void count_unstarted(server_statistics& stats, std::size_t method, std::uint8_t status) noexcept {
    if (status == static_cast<std::uint8_t>(errc::deadline_exceeded) ||
        status == static_cast<std::uint8_t>(errc::handle_timeout))
      count_not_run(stats, method, limit_kind::deadline_before_start);
    else if (status == static_cast<std::uint8_t>(errc::busy))
      count_not_run(stats, method, limit_kind::queue_time);
  }
  static void count_not_run(server_statistics& stats, std::size_t method, limit_kind kind) noexcept {
    stats.turned_away(kind);
    method_statistics& m = stats.method(method);
    (kind == limit_kind::queue_time ? m.shed_by_queue_time : m.expired_before_start)
        .fetch_add(1, std::memory_order_relaxed);
  }

  // Counts a request answered without being registered (refused()).
  void count_refused(const wire::frame_view& frame, errc code, const std::string& message,
                     std::string_view peer) const noexcept {
    server_statistics& stats = *context_.config.stats();
    const auto status = static_cast<std::uint8_t>(code);
    try {
      // A name refused as unknown is nobody's, also a built-in one a peer was not admitted to.
      const bool unknown = code == errc::unknown_service || code == errc::unknown_method;
      const handler_entry* handler = unknown ? nullptr : context_.config.handlers()->served(frame.text);
      (handler != nullptr ? stats.method(method_index(*handler)) : stats.unrouted()).add_error(status);
      // A name the server does not serve is the peer's: a bounded, printable part of it is kept.
      std::string name;
      append_printable(name, frame.text);
      stats.keep({std::chrono::system_clock::now(), std::move(name), std::string(peer), {}, {}, {}, status, message});
    } catch (...) {
    }
  }

  void notify_after(const call_context& context, std::uint8_t status, std::string_view message,
                    clock::duration took) const noexcept {
    call_result result;
    if (status != 0) result.error = make_error_code(static_cast<errc>(status));
    result.message = message;
    result.duration = took;
    // A call an `after` makes on this thread carries the answered call's propagated metadata.
    const current_call_scope answered(context, true);
    for (const server_interceptor& interceptor : context_.config.interceptors()) {
      if (!interceptor.after) continue;
      try {
        interceptor.after(context, result);
      } catch (...) {  // documented: dropped
      }
    }
  }

  const server_context& context_;
};

}  // namespace detail
GEERPC_END_NAMESPACE
