// geerpc: the requests in flight on one server connection, and the rule that each gets exactly one
// response. The connection's wire session (wire_session.hpp) reads frames and writes replies; this
// ledger decides which request may be registered (the in-flight and queued-bytes limits, a seq
// not in use, no shutdown begun), who may answer it (claim), when its deadline fires, and gives it
// back to a small pool once it is finished. It does no I/O.
//
// A request's life: admit() registers it (running); the handler's answer, its deadline, a cancel
// frame, a shutdown's abort or its connection's end race to claim() it (running -> answered), and
// only the winner writes its response; finish() (connection.hpp) then cancels its deadline and
// retire()s it here, once, whoever won.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../detail/assert.hpp"
#include "../detail/chrono.hpp"
#include "../detail/deadline.hpp"
#include "../detail/seq_map.hpp"
#include "../scheduler/deadline_scheduler.hpp"
#include "concurrency_limit.hpp"
#include "context.hpp"
#include "dispatcher.hpp"
#include "statistics.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

using clock = std::chrono::steady_clock;

class server_connection;

struct server_request {
  static constexpr std::uint8_t running = 0;
  static constexpr std::uint8_t answered = 1;

  std::shared_ptr<server_connection> connection;  // set while registered: finish() takes it
  const handler_entry* handler = nullptr;
  std::uint64_t seq = 0;
  std::vector<std::byte> argument;  // the metadata block (metadata_size bytes), then the arguments
  std::size_t metadata_size = 0;
  std::size_t queued_bytes = 0;  // what argument holds, counted while it waits for a handler
  // Made when the request is stored for handlers that take a std::stop_token (or a responder), and
  // for any other on its first ask (call_context::stop_token(), a call its handler makes:
  // request_ledger::stop_token_of). Since that may happen on the handler's thread at any moment,
  // everyone but the handler's own thread before it calls the handler reads it under the ledger's
  // lock; it is set (emplace, reset) only under that lock.
  std::optional<std::stop_source> stop;
  // The exactly-once rule: claim() moves it from running to answered with acq_rel, so that the
  // winner sees the request as it was registered and a loser's acquire load sees the claim.
  std::atomic<std::uint8_t> state{running};
  enum class limit : std::uint8_t { none, handle_timeout, caller_deadline };
  deadline_scheduler::timer timer;
  limit timer_limit = limit::none;                   // which limit the timer enforces; none: it was not set
  clock::time_point timer_deadline{};                // when the timer fires, if set: the handler's deadline
  std::optional<clock::time_point> caller_deadline;  // when the caller gives up, if it said
  // The same for the debug page, which reads it from another thread: its time since the runtime
  // clock's epoch (0: none). Relaxed: a gauge.
  std::atomic<clock::rep> caller_deadline_rep{0};
  // When its frame was read, by the runtime's clock, kept only when the check at its start needs it
  // (admission.hpp: it has a deadline, or the server sheds by queue time); time_point{} otherwise.
  clock::time_point read_at{};
  // Kept only while the server has an observer (observer.hpp): when the request arrived, and the
  // response it got (written by whoever claimed it; read by finish()).
  clock::time_point arrived{};
  // With statistics: when a handler thread took it (0: not yet). Atomic (relaxed: a gauge) because
  // the debug page reads it while the handler thread writes it.
  std::atomic<clock::rep> started_ns{0};
  clock::time_point answered_at{};
  std::size_t answered_bytes = 0;  // the response frame's size, where its claimer made it (0: not known)
  std::uint8_t answered_status = 0;
  // Its handler returned, leaving the answer to its responder (responder.hpp): for the debug page.
  std::atomic<bool> handed_on{false};
  // Set by the thread that runs it, once it passed the check at its start: the handler (or the interceptors'
  // `before`) was called. Read by finish(), on that thread or after the handler handed it on.
  bool handler_began = false;
  std::string answered_message;
  // Kept only with limits.adaptive_concurrency on: when it was admitted, and how many requests
  // were in flight then (itself included), for the latency sample its retirement gives; and
  // whether its handler's answer was a success (set by its claimer): a failure or a cancellation
  // says nothing of the service's latency, and is not sampled.
  clock::time_point admitted_at{};
  std::size_t admitted_inflight = 0;
  bool succeeded = false;

  std::span<const std::byte> metadata() const noexcept { return std::span(argument).first(metadata_size); }
  std::span<const std::byte> arguments() const noexcept { return std::span(argument).subspan(metadata_size); }
};

class request_ledger {
 public:
  static constexpr std::uint64_t max_budget_us = std::uint64_t{1} << 50;  // ~35 years: fits in nanoseconds

  // Finished requests kept for reuse, per connection: allocations saved per call against what an
  // idle connection keeps. Enough spares for a client with a few dozen calls in flight; the first
  // spare_big_kept keep an argument buffer of up to spare_big_capacity, the others up to
  // spare_small_capacity (a bigger one is freed with its request).
  static constexpr std::size_t spare_requests = 64;
  static constexpr std::size_t spare_big_kept = 16;
  static constexpr std::size_t spare_big_capacity = 64u << 10;
  static constexpr std::size_t spare_small_capacity = 4u << 10;

  explicit request_ledger(server_context& context) noexcept : context_(context) {}
  request_ledger(const request_ledger&) = delete;
  request_ledger& operator=(const request_ledger&) = delete;

  // Whoever moves the request from running to answered writes its one response; everyone else
  // must find it answered.
  static bool claim(server_request& request) noexcept {
    std::uint8_t expected = server_request::running;
    if (request.state.compare_exchange_strong(expected, server_request::answered, std::memory_order_acq_rel))
      return true;
    GEERPC_ASSERT(expected == server_request::answered, "server: a request's state is running or answered");
    return false;
  }

  // What admit() decided.
  struct admission {
    // no_memory: the request could not be stored (std::bad_alloc); nothing of it is kept.
    // expired: its deadline had passed when it was read (admission.hpp, budget_expired_on_arrival).
    enum class verdict : std::uint8_t { registered, going_away, duplicate_seq, expired, busy, no_memory };
    verdict outcome = verdict::registered;
    server_request* request = nullptr;     // registered: the request, running
    const char* busy_text = nullptr;       // busy: the caller's error text, unless the adaptive limit's
    std::size_t adaptive_limit = 0;        // busy at the adaptive limit: the limit then
    limit_kind limit = limit_kind::count;  // busy: which limit answered

    // busy: the caller's error text, made here, after admit() has released the ledger's lock.
    std::string busy_reason() const {
      if (limit == limit_kind::adaptive_concurrency) return concurrency_limit::refusal(adaptive_limit);
      GEERPC_ASSERT(busy_text != nullptr, "server: a busy text asked of an admission that was not busy");
      return busy_text;
    }
  };

  // Registers a request for `handler` whose metadata block and arguments are `kept` (the block
  // first, `metadata_size` bytes), unless a shutdown has begun (`going_away()`, asked under the
  // lock that go_away's exclusive() takes), its seq is in use, its deadline had passed when it was
  // read (`expired`: answered deadline_exceeded, never registered), or a limit is reached. `owner()`
  // gives the connection's reference the request holds until it is finished. With `keep_times`
  // (an observer is installed), its arrival is noted.
  template <class GoingAway, class Owner>
  admission admit(std::uint64_t seq, const handler_entry& handler, std::span<const std::byte> kept,
                  std::size_t metadata_size, bool expired, bool keep_times, GoingAway&& going_away, Owner&& owner) {
    admission out;
    std::lock_guard lock(mutex_);
    // What the argument will hold: a recycled buffer keeps its capacity, and assign() takes
    // exactly the body's size when that is more.
    const std::size_t bytes =
        std::max(kept.size(), spare_.empty() ? std::size_t{0} : spare_.back()->argument.capacity());
    if (going_away()) {
      out.outcome = admission::verdict::going_away;
    } else if (inflight_.find(seq) != nullptr) {  // first: a reused seq is a broken stream, whatever else it is
      out.outcome = admission::verdict::duplicate_seq;
    } else if (expired) {
      out.outcome = admission::verdict::expired;
    } else if (inflight_.size() >= context_.config.options().limits.max_inflight_per_connection) {
      out = busy("rpc server: too many requests in flight", limit_kind::inflight_per_connection);
    } else if (const std::size_t allowed = context_.inflight_limit();
               !context_.requests.try_acquire_inflight(allowed)) {
      out = allowed < context_.config.options().limits.max_inflight  // the adaptive limit is the lower
                ? refuse_adaptive(allowed)
                : busy("rpc server: too many requests in flight", limit_kind::inflight);
    } else if (limit_kind limit{}; !try_queue_bytes(bytes, limit)) {  // refused before the body is copied
      context_.finish_request();                                      // a draining shutdown hears of it at once
      out = busy("rpc server: too many request bytes waiting", limit);
    } else if (server_request* request = store_locked(seq, handler, kept, metadata_size, bytes, keep_times, owner)) {
      out.request = request;
      if (context_.adaptive.enabled()) note_admission(*request);
    } else {  // the counts taken above are given back
      release_bytes(bytes);
      context_.finish_request();
      out.outcome = admission::verdict::no_memory;
    }
    return out;
  }

  // One timer per request, at the earlier of the handle timeout and the caller's deadline
  // (`budget_us` from now; 0: none); `on_deadline(&request)` runs when it fires. With a timer, or
  // `timed_queue` (the server sheds by queue time), the time is kept for the check at its start.
  void schedule_deadline(server_request& request, std::uint64_t budget_us, std::chrono::nanoseconds handle_timeout,
                         bool timed_queue, void (*on_deadline)(void*)) {
    // A request comes with no timer and no caller deadline (made so, or recycled so).
    GEERPC_ASSERT(request.timer_limit == server_request::limit::none && !request.caller_deadline,
                  "server: a request scheduled twice, or recycled with its deadline");
    const bool timer = handle_timeout > std::chrono::nanoseconds::zero() || budget_us != 0;
    if (!timer && !timed_queue) return;                   // no clock read
    const auto now = context_.config.scheduler()->now();  // the runtime's clock, which the timer fires by
    request.read_at = now;
    if (!timer) return;
    std::optional<clock::time_point> handle_deadline, caller_deadline;
    if (handle_timeout > std::chrono::nanoseconds::zero()) handle_deadline = saturating_deadline(now, handle_timeout);
    if (budget_us > 0)
      caller_deadline = saturating_deadline(now, std::chrono::microseconds(std::min(budget_us, max_budget_us)));
    request.caller_deadline = caller_deadline;
    if (caller_deadline)
      request.caller_deadline_rep.store(std::max<clock::rep>(caller_deadline->time_since_epoch().count(), 1),
                                        std::memory_order_relaxed);
    const bool handle_first = handle_deadline && (!caller_deadline || *handle_deadline <= *caller_deadline);
    request.timer_limit = handle_first ? server_request::limit::handle_timeout : server_request::limit::caller_deadline;
    request.timer_deadline = handle_first ? *handle_deadline : *caller_deadline;
    context_.config.scheduler()->schedule(request.timer, request.timer_deadline, on_deadline, &request);
  }
  // Once this returns, no deadline callback of the request runs (finish() calls it first).
  void cancel_deadline(server_request& request) {
    if (request.timer_limit != server_request::limit::none) context_.config.scheduler()->cancel(request.timer);
  }

  // Claims the request registered under `seq`, if any and still unanswered, and calls
  // won(request) under the lock, which keeps it registered meanwhile. Returns whether it won.
  template <class Won>
  bool claim_seq(std::uint64_t seq, Won&& won) {
    std::lock_guard lock(mutex_);
    server_request* request = inflight_.find(seq);
    if (request == nullptr || !claim(*request)) return false;
    won(*request);
    return true;
  }

  // Claims every request still unanswered, calling won(request) for each under the lock; returns
  // their seqs and stop sources, for answering and stopping them once the lock is released.
  template <class Won>
  std::vector<std::pair<std::uint64_t, std::optional<std::stop_source>>> claim_all(Won&& won) {
    std::vector<std::pair<std::uint64_t, std::optional<std::stop_source>>> claimed;
    std::lock_guard lock(mutex_);
    claimed.reserve(inflight_.size());  // before any claim: a claimed request must be answered
    inflight_.for_each([&](std::uint64_t seq, server_request* request) {
      if (!claim(*request)) return;
      won(*request);
      claimed.emplace_back(seq, request->stop);
    });
    return claimed;
  }

  // Claims `request` for the connection's end if nobody answered it, calling won(request) under
  // the lock, so that no cancel frame answers it afterwards.
  template <class Won>
  void claim_for_end(server_request& request, Won&& won) {
    std::lock_guard lock(mutex_);
    if (claim(request)) won(request);
  }

  // The stop sources of every request registered now, for asking their handlers to stop with no
  // lock held (stop callbacks run inline in request_stop()). From then on a stop token asked for
  // (stop_token_of) is fired at once.
  std::vector<std::stop_source> stop_sources() {
    std::vector<std::stop_source> sources;
    std::lock_guard lock(mutex_);
    handlers_stopped_ = true;
    inflight_.for_each([&](std::uint64_t, server_request* request) {
      if (request->stop) sources.push_back(*request->stop);
    });
    return sources;
  }

  // The request's stop token, its source made if it has none yet. One made after the request was
  // answered (by its deadline, a cancel, an abort) or after its connection's handlers were told to
  // stop is fired at once, since whoever did that found no source to fire.
  std::stop_token stop_token_of(server_request& request) {
    std::optional<std::stop_source> late;
    std::stop_token token;
    {
      std::lock_guard lock(mutex_);
      if (!request.stop) {
        request.stop.emplace();
        if (handlers_stopped_ || request.state.load(std::memory_order_acquire) != server_request::running)
          late = request.stop;
      }
      token = request.stop->get_token();
    }
    if (late) late->request_stop();  // no lock held: its callbacks run here
    return token;
  }

  // The request's stop source, if it has one, for whoever claimed it (a copy: the request may be
  // finished once the lock is released).
  std::optional<std::stop_source> stop_source_of(const server_request& request) const {
    std::lock_guard lock(mutex_);
    return request.stop;
  }

  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return inflight_.size();
  }

  // Calls f(request) for each request registered now, under the lock (the debug page).
  template <class F>
  void for_each(F&& f) const {
    std::lock_guard lock(mutex_);
    inflight_.for_each([&](std::uint64_t, server_request* request) { f(*request); });
  }

  // Runs f() under the lock admit() holds: a request registered before it is seen by what f()
  // changes, one after it is not (go_away()).
  template <class F>
  void exclusive(F&& f) {
    std::lock_guard lock(mutex_);
    f();
  }

  // Its bytes no longer wait for a handler (it runs, or is finished without running).
  void release_queued(server_request& request) noexcept {
    release_bytes(request.queued_bytes);
    request.queued_bytes = 0;
  }

  // Takes a finished request out of the ledger (its deadline cancelled, its connection reference
  // taken) and keeps it for reuse.
  void retire(server_request* request) noexcept {
    release_queued(*request);  // if it never ran
    sample_latency(*request);
    std::lock_guard lock(mutex_);
    server_request* const registered = inflight_.erase(request->seq);
    GEERPC_ASSERT(registered == request, "server: a finished request was registered under its seq");
    recycle(request);
  }

 private:
  // A literal, which outlives the admission: its text is read after the lock is released.
  template <std::size_t N>
  static admission busy(const char (&reason)[N], limit_kind limit) {
    return {admission::verdict::busy, nullptr, reason, 0, limit};
  }
  // Refused over the adaptive limit: the refusal may end a probe held up by long requests.
  admission refuse_adaptive(std::size_t limit) {
    context_.adaptive.on_refusal(clock::now());
    return {admission::verdict::busy, nullptr, nullptr, limit, limit_kind::adaptive_concurrency};
  }

  // The adaptive concurrency limit's sample (concurrency_limit.hpp): a request's latency from its
  // admission to its retirement, queueing included, and the concurrency it was admitted at.
  void note_admission(server_request& request) const noexcept {
    request.admitted_at = clock::now();
    request.admitted_inflight = context_.requests.inflight(std::memory_order_relaxed);
  }
  void sample_latency(server_request& request) noexcept {
    if (request.admitted_at == clock::time_point{}) return;
    if (request.succeeded) {
      const clock::time_point now = clock::now();
      context_.adaptive.on_sample(now - request.admitted_at, request.admitted_inflight, now);
    }
    request.admitted_at = clock::time_point{};
    request.succeeded = false;
  }

  // Counts the bytes of a request about to wait for a handler, if this connection and the server
  // have room for them. Called with mutex_ held, which makes this the only place that adds to
  // queued_bytes_; release_queued() takes them off without it. On a refusal, `limit` says which
  // limit refused.
  bool try_queue_bytes(std::size_t bytes, limit_kind& limit) noexcept {
    if (bytes == 0) return true;
    const std::size_t mine = queued_bytes_.load(std::memory_order_relaxed);
    if (!request_counters::room_for(mine, bytes,
                                    context_.config.options().limits.max_queued_request_bytes_per_connection)) {
      limit = limit_kind::queued_bytes_per_connection;
      return false;
    }
    if (!context_.try_queue_bytes(bytes)) {
      limit = limit_kind::queued_bytes;
      return false;
    }
    queued_bytes_.fetch_add(bytes, std::memory_order_relaxed);
    return true;
  }

  // Requests are recycled per connection: once warm, a call allocates no request, and its argument
  // buffer keeps its capacity. Both called with mutex_ held.
  // A request made (or recycled) and registered under `seq`, or null when there was no memory for
  // it, having kept nothing. Called with mutex_ held.
  template <class Owner>
  server_request* store_locked(std::uint64_t seq, const handler_entry& handler, std::span<const std::byte> kept,
                               std::size_t metadata_size, std::size_t bytes, bool keep_times, Owner& owner) noexcept {
    server_request* request = nullptr;
    try {
      request = fresh_request();
      request->argument.assign(kept.begin(), kept.end());
      if (handler.takes_stop_token) request->stop.emplace();
      const bool inserted = inflight_.insert(seq, request);
      GEERPC_ASSERT(inserted, "server: a seq checked absent under the same lock");
    } catch (const std::bad_alloc&) {
      delete request;  // not recycled: keeping it could need memory too
      return nullptr;
    }
    request->connection = owner();
    request->handler = &handler;
    request->seq = seq;
    request->metadata_size = metadata_size;
    request->queued_bytes = bytes;
    if (keep_times) request->arrived = clock::now();
    return request;
  }

  // Gives back request bytes try_queue_bytes() counted.
  void release_bytes(std::size_t bytes) noexcept {
    if (bytes == 0) return;
    const std::size_t mine = queued_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    GEERPC_ASSERT(mine >= bytes, "server: more request bytes released than were counted");
    context_.requests.release_bytes(bytes);
  }

  server_request* fresh_request() {
    if (spare_.empty()) return new server_request;
    server_request* request = spare_.back().release();
    spare_.pop_back();
    GEERPC_ASSERT(
        request->connection == nullptr && request->state.load(std::memory_order_relaxed) == server_request::running,
        "server: a recycled request was reset");
    return request;
  }
  void recycle(server_request* request) noexcept {
    std::unique_ptr<server_request> owned(request);
    // Bounded (spare_requests above), and big argument buffers kept only by the first few.
    const std::size_t keep_capacity = spare_.size() < spare_big_kept ? spare_big_capacity : spare_small_capacity;
    if (spare_.size() >= spare_requests || request->argument.capacity() > keep_capacity) return;
    request->handler = nullptr;
    request->argument.clear();
    request->metadata_size = 0;
    request->answered_status = 0;
    request->answered_message.clear();
    request->stop.reset();
    request->state.store(server_request::running, std::memory_order_relaxed);
    request->timer_limit = server_request::limit::none;
    request->caller_deadline.reset();
    request->caller_deadline_rep.store(0, std::memory_order_relaxed);
    request->handed_on.store(false, std::memory_order_relaxed);
    request->read_at = clock::time_point{};
    request->admitted_at = clock::time_point{};
    request->handler_began = false;
    request->started_ns.store(0, std::memory_order_relaxed);
    try {
      spare_.push_back(std::move(owned));  // on failure `owned` still holds it, and deletes it
    } catch (const std::bad_alloc&) {
    }
  }

  server_context& context_;
  mutable std::mutex mutex_;  // guards inflight_ and spare_, and orders registrations with go_away()
  seq_map<server_request> inflight_;
  // This connection's bytes waiting for a handler: added under mutex_ (try_queue_bytes), taken off
  // without it (release_queued); relaxed, as a counter checked against a limit.
  std::atomic<std::size_t> queued_bytes_{0};
  std::vector<std::unique_ptr<server_request>> spare_;  // recycled requests
  bool handlers_stopped_ = false;                       // guarded by mutex_: stop_sources() ran
};

}  // namespace detail
GEERPC_END_NAMESPACE
