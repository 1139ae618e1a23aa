// geerpc: deadline-aware admission, the check a request passes at the moment a handler thread would
// start it. A request whose deadline (the caller's, or the connection's handle timeout) passed
// while it waited for a thread is answered as its deadline's timer would answer it, and one that
// waited longer than timeouts.max_queue_time is answered errc::busy; neither runs its handler. The
// timer may race with this check: whoever claims the request first (request_ledger::claim)
// answers it, the same way.
//
// A request carries what the check needs only when it has a deadline or the server sheds by
// queue time (server_request::read_at, set when its frame is read); otherwise the check is one
// comparison. Pure: the caller passes the time, read once by the runtime's clock.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../detail/deadline.hpp"
#include "../detail/duration_text.hpp"
#include "../error.hpp"
#include "request_ledger.hpp"
#include "statistics.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// Why a request may not start, and what it is answered.
struct start_refusal {
  errc code{};
  limit_kind limit = limit_kind::count;
  std::string message;
};

// Whether the request needs the check at its start at all: it has a deadline, or the server sheds
// by queue time (request_ledger::schedule_deadline noted when it was read).
inline bool checked_at_start(const server_request& request) noexcept { return request.read_at != clock::time_point{}; }

// The check itself, at `now` by the runtime's clock (the one its deadlines were set by), for a
// request with checked_at_start(): the refusal, or nothing when it may run. The earlier of its
// deadlines is the one its timer is set for; a deadline that passed wins over the queue time (its
// caller has given up: busy would invite a retry nobody waits for). Allocates only to refuse.
inline std::optional<start_refusal> refuse_late_start(const server_request& request, clock::time_point now,
                                                      std::chrono::nanoseconds handle_timeout,
                                                      std::chrono::nanoseconds max_queue_time) {
  using limit = server_request::limit;
  const bool handle_passed =
      request.timer_limit == limit::handle_timeout && now >= saturating_deadline(request.read_at, handle_timeout);
  const bool caller_passed =
      request.timer_limit == limit::caller_deadline && request.caller_deadline && now >= *request.caller_deadline;
  const auto waited = std::chrono::duration_cast<std::chrono::nanoseconds>(now - request.read_at);
  const bool queued_too_long = max_queue_time > std::chrono::nanoseconds::zero() && waited > max_queue_time;
  if (!handle_passed && !caller_passed && !queued_too_long) [[likely]]
    return std::nullopt;
  const std::string after = ", after " + duration_text(waited) + " waiting for a handler thread";
  if (handle_passed)
    return start_refusal{errc::handle_timeout, limit_kind::deadline_before_start,
                         "rpc server: request handle timeout: expect within " + duration_text(handle_timeout) +
                             "; it passed before the handler started" + after};
  if (caller_passed)
    return start_refusal{errc::deadline_exceeded, limit_kind::deadline_before_start,
                         "rpc server: the caller's deadline passed before the handler started" + after};
  return start_refusal{errc::busy, limit_kind::queue_time,
                       "rpc server: busy: waited " + duration_text(waited) + " for a handler thread, longer than " +
                           "max_queue_time (" + duration_text(max_queue_time) + "); the call was not run"};
}

// A budget this small (the caller's remaining time in µs, 0 being "none") has run out by the time
// the server reads it: the reference clients send 1 for a deadline that has passed or has less than
// a microsecond left, and no transport carries a frame faster. Such a request is answered
// deadline_exceeded at once, never registered.
inline constexpr std::uint64_t expired_budget_us = 1;
inline bool budget_expired_on_arrival(std::uint64_t budget_us) noexcept {
  return budget_us != 0 && budget_us <= expired_budget_us;
}
inline constexpr const char* expired_on_arrival_message =
    "rpc server: the caller's deadline passed before the request was read";

}  // namespace detail
GEERPC_END_NAMESPACE
