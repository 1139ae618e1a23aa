// geerpc: one accepted connection, the part of the server both transport policies share. A
// transport decides which thread reads and which runs a request; a connection is three parts, each
// with one job:
//   - the wire session (wire_session.hpp): framing and writing; its bases: the stall and write
//     timers (session_timers.hpp), the last words (last_words.hpp) and a stream of another
//     protocol (translated_stream.hpp); and its opening (session_opening.hpp): the first bytes
//     (hello or HTTP door);
//   - the request ledger (request_ledger.hpp): exactly one response per request, deadlines,
//     cancel, the in-flight limits and the request pool;
//   - the observer (observer.hpp): the one hook statistics, interceptors and the debug page plug
//     into, a branch when none is installed.
// This file joins them: it registers what the session reads in the ledger, runs a request's
// handler, and sends the answer the ledger lets it send.
//
// Exactly one response: every request has one atomic state. Its handler finishing, its deadline
// (the handle timeout or the caller's budget) and a cancel frame race to move it from `running` to
// `answered` (request_ledger::claim); only the winner writes a response. A loser's work is dropped
// without blocking anyone.
#pragma once

#include <sys/socket.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../call_context.hpp"
#include "../config.hpp"
#include "../context.hpp"
#include "../debug_page_policy.hpp"
#include "../detail/assert.hpp"
#include "../detail/chrono.hpp"
#include "../detail/current_call.hpp"
#include "../detail/deadline.hpp"
#include "../detail/duration_text.hpp"
#include "../detail/scratch.hpp"
#include "../error.hpp"
#include "../net/frame_writer.hpp"
#include "../net/socket.hpp"
#include "../wire/frame.hpp"
#include "../wire/metadata.hpp"
#include "accepted_types.hpp"
#include "admission.hpp"
#include "connection_view.hpp"
#include "context.hpp"
#include "dispatcher.hpp"
#include "observer.hpp"
#include "request_ledger.hpp"
#include "wire_session.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class server_connection final : public wire_session<server_connection>,
                                public std::enable_shared_from_this<server_connection>,
                                public listed_connection {
 public:
  using clock = std::chrono::steady_clock;

  // See wire_session's constructor for `want_write` and `poller_fd`.
  server_connection(server_context& context, net::unique_fd socket, net::frame_writer::want_write_fn want_write,
                    int poller_fd = -1)
      : wire_session(context, std::move(socket), want_write, this, poller_fd),
        ledger_(context),
        observer_(context),
        id_(context.ids.next()),
        peer_(peer_text(fd())) {
    context_.connections.add(*this);
  }
  // The last thing it does with the server's context is to leave its list: once that list is
  // empty, a stopping server may go (connection_registry::wait_empty).
  ~server_connection() {
    writer().detach_gauge();
    context_.connections.remove(*this);
  }

  server_connection(const server_connection&) = delete;
  server_connection& operator=(const server_connection&) = delete;

  // Its peer's address (net::endpoint_text), as call_context::peer() gives it.
  std::string_view peer() const noexcept { return peer_; }

  // What the debug page shows of it (listed_connection). Called with the registry's lock held.
  connection_view describe() const override {
    connection_view v{peer_, opened(), last_activity(), 0, output_held()};
    v.inflight = inflight();
    v.identity = &identity();
    v.web = web();
    return v;
  }

  // Graceful shutdown, first step: tells the peer to send no more requests (a goaway frame, right
  // after the hello reply if that has not gone out yet) and refuses those it sends anyway with
  // errc::going_away. Calls in flight go on. Safe from any thread, repeatable.
  void go_away() {
    bool goaway_now = false;
    // Under the lock that registers requests: one registered before it counts in flight (the
    // drain waits for it), one after it is refused.
    ledger_.exclusive([&] { goaway_now = begin_going_away(); });
    if (goaway_now) send_goaway();
  }

  // Graceful shutdown, when its drain deadline has passed: answers every call still in flight with
  // errc::aborted and fires its handler's stop_token.
  void abort_inflight() {
    static constexpr std::string_view message = "rpc server: shut down before the call finished";
    auto aborted = ledger_.claim_all([&](server_request& request) {
      observer_.answered(request, static_cast<std::uint8_t>(errc::aborted), message);
    });
    for (auto& [seq, stop] : aborted) {
      if (stop) stop->request_stop();
      answer_now(seq, errc::aborted, message);
    }
  }

  // Stop callbacks run inline in request_stop(): they are called with no lock of ours held.
  void stop_handlers() {
    for (auto& source : ledger_.stop_sources()) source.request_stop();
  }

  std::size_t inflight() const { return ledger_.size(); }

  const request_observer& observer() const noexcept { return observer_; }

  // Runs a request's handler unless the request was already answered (timed out or canceled while
  // it waited), its peer is gone, or it may no longer start (admission.hpp: its deadline passed, or
  // it waited longer than max_queue_time), and answers it if it still can. Then finishes it.
  // With `hold`, the reply is queued for the next flush_replies() instead of sent (see
  // frame_writer::hold): the transport's tuning knows another request of this connection runs
  // next (tuning/reply_holds.hpp).
  static void run(server_request* request, bool hold = false) {
    GEERPC_ASSERT(request->connection != nullptr, "server: a request runs before it is finished, not after");
    server_connection& self = *request->connection;
    self.ledger_.release_queued(*request);  // it no longer waits
    // One clock read, for the statistics and the check at the start, only when either needs it.
    const bool checked = checked_at_start(*request);
    const clock::time_point now = checked || self.observer_.counting() ? clock::now() : clock::time_point{};
    self.observer_.started(*request, now);
    bool answered_here = false;  // this thread claimed the request, and wrote what the observer reads
    if (request->state.load(std::memory_order_acquire) == server_request::running && !self.closed()) {
      std::vector<std::byte>& frame = frame_scratch<server_reply_tag>();
      wire::begin_frame(frame, {wire::frame_kind::response, 0, request->seq, 0}, {});
      if (checked) {  // a deadline, or max_queue_time
        if (auto refusal = self.refuse_late_start(*request, now)) {
          answered_here =
              self.answer(*request, invoke_outcome::failure(refusal->code, std::move(refusal->message)), frame, hold);
          trim_scratch(frame);
          return finish(request, answered_here);
        }
      }
      request->handler_began = true;
      const std::stop_token token = request->stop ? request->stop->get_token() : std::stop_token{};
      const call_context context = self.context_of(*request);
      // The calls the handler (or an interceptor's `before`) makes on this thread inherit its context.
      const current_call_scope current(context);
      invoke_outcome outcome;
      if (!self.observer_.refused_before(context, outcome)) {
        const deferred_target later{request, &respond_deferred, &release_deferred, {}, &handed_on};
        const auto invoke = request->handler->invokes[self.codec_slot()];
        outcome = invoke(request->handler->impl, request->arguments(), token, context, later, frame);
        // A handler that took a responder: the responder answers and finishes the request, maybe
        // already (from inside the handler, which may have used this thread's frame too).
        if (outcome.deferred) return;
      }
      answered_here = self.answer(*request, std::move(outcome), frame, hold);
      trim_scratch(frame);
    }
    finish(request, answered_here);
  }

  // A responder's answer (responder.hpp): the response, unless the request was answered already
  // (its deadline, a cancel). At most once per deferred request; release_deferred() finishes it
  // later, once the responder and the handler are both done with it.
  static void respond_deferred(void* raw, std::uint8_t status, std::string_view message, const void* value,
                               deferred_target::encode_fn encode) noexcept {
    auto* request = static_cast<server_request*>(raw);
    GEERPC_ASSERT(request->connection != nullptr, "server: a deferred request answered after its release");
    server_connection& self = *request->connection;
    if (request->state.load(std::memory_order_acquire) != server_request::running || self.closed()) return;
    try {
      std::vector<std::byte>& frame = frame_scratch<server_frames_tag>();
      wire::begin_frame(frame, {wire::frame_kind::response, 0, request->seq, 0}, {});
      invoke_outcome outcome{status, false, std::string(message)};
      if (status == 0 && encode != nullptr) {
        try {
          encode(value, frame);
        } catch (const std::exception& e) {
          outcome = invoke_outcome::failure(errc::remote_error,
                                            std::string("rpc server: the reply did not encode: ") + e.what());
        } catch (...) {
          outcome = invoke_outcome::failure(errc::remote_error, "rpc server: the reply did not encode");
        }
      }
      self.answer(*request, std::move(outcome), frame, false);
      trim_scratch(frame);
    } catch (...) {  // no memory for the response: the caller's deadline, or the connection's end, ends the call
    }
  }
  static void release_deferred(void* raw) noexcept { finish(static_cast<server_request*>(raw)); }
  static void handed_on(void* raw) noexcept {
    static_cast<server_request*>(raw)->handed_on.store(true, std::memory_order_relaxed);
  }

  // Releases a request that has run, or will never run: its timer, its slot, its memory.
  // `answered_here`: the calling thread claimed it (answer() returned true), so nobody else can.
  static void finish(server_request* request, bool answered_here = false) {
    GEERPC_ASSERT(request->connection != nullptr, "server: a request is finished exactly once");
    // First the timer: once cancel() returns no deadline callback runs, and those read
    // request->connection.
    request->connection->ledger_.cancel_deadline(*request);
    // Then the statistics and the interceptors' `after`, which read what the answer's claimer
    // recorded: a timer's record is ours once cancel() returned, a cancel frame's is written under
    // the ledger's lock.
    if (request->connection->observer_.installed()) request->connection->report(*request, answered_here);
    // This may be the connection's last reference, and the request may go back into the
    // connection's pool.
    std::shared_ptr<server_connection> connection = std::move(request->connection);
    server_context& context = connection->context_;
    connection->ledger_.retire(request);
    connection.reset();        // before the count below: a stopping server waits for it, then goes
    context.finish_request();  // last: the context may go once it is counted out
  }

 private:
  friend class wire_session<server_connection>;

  void visit_requests(request_visitor visit, void* visitor) const override {
    ledger_.for_each([&](const server_request& request) {
      const auto at = [](clock::rep rep) { return clock::time_point(clock::duration(rep)); };
      visit(visitor, {request.handler, request.arrived, at(request.started_ns.load(std::memory_order_relaxed)),
                      at(request.caller_deadline_rep.load(std::memory_order_relaxed)),
                      request.handed_on.load(std::memory_order_relaxed),
                      request.state.load(std::memory_order_relaxed) == server_request::answered, request.metadata()});
    });
  }
  static bool claim(server_request& request) noexcept { return request_ledger::claim(request); }

  // admission.hpp's check for a request a handler thread took at `now` (steady_clock's), by the
  // runtime's clock: a test's manual clock is read again.
  std::optional<start_refusal> refuse_late_start(const server_request& request, clock::time_point now) const {
    if (const manual_clock* manual = context_.config.scheduler()->manual()) now = manual->now();
    return detail::refuse_late_start(request, now, handle_timeout(), max_queue_time());
  }
  std::chrono::nanoseconds max_queue_time() const noexcept { return context_.config.options().timeouts.max_queue_time; }

  // Sends the response `frame` holds (begun as a success, the reply encoded after it), or the
  // outcome's error instead, if this request is still unanswered: whether it was.
  bool answer(server_request& request, invoke_outcome&& outcome, std::vector<std::byte>& frame, bool hold) {
    const std::size_t length = frame.size() - wire::length_prefix_size;
    if (outcome.status == 0 && length > max_response_size())
      outcome = invoke_outcome::failure(errc::remote_error, "rpc server: reply of " + std::to_string(length) +
                                                                " bytes exceeds the frame size limit of " +
                                                                std::to_string(max_response_size()));
    if (outcome.status != 0) {
      frame.clear();
      wire::begin_frame(frame, {wire::frame_kind::response, outcome.status, request.seq, 0}, fitting(outcome.message));
    }
    wire::finish_frame(frame, 0);
    if (!claim(request)) return false;
    request.succeeded = outcome.status == 0;  // only a success is a latency sample
    observer_.answered(request, outcome.status, outcome.message, frame.size());
    // With interceptors, finish() runs their `after` next: a held reply would wait for it.
    send(frame, hold && !observer_.intercepted());
    return true;
  }

  // What a handler and the interceptors see of a registered request. Its handler's deadline is the
  // one its timer is set for: two loads, no clock read.
  call_context context_of(server_request& request) const noexcept {
    std::optional<clock::time_point> handler_deadline;
    if (request.timer_limit != server_request::limit::none) handler_deadline = request.timer_deadline;
    // What a call_context asks of its request, while its handler runs (so the request is
    // registered, and holds its connection).
    static constexpr call_origin origin{&stop_token_of, &downstream_of};
    return call_context({request.handler->name, request.caller_deadline, id_, request.metadata(), this, &peer_of,
                         &identity(), handler_deadline, &request, &origin});
  }
  static std::stop_token stop_token_of(void* raw) {
    auto& request = *static_cast<server_request*>(raw);
    GEERPC_ASSERT(request.connection != nullptr, "server: a call_context's stop_token() asked after its handler");
    return request.connection->ledger_.stop_token_of(request);
  }
  // context::from(): the handler's deadline less the reserve for its reply (a fraction of its
  // budget, capped: server_timeouts::downstream_reserve), its stop token, the metadata propagated.
  static context downstream_of(void* raw, const call_context& handler) {
    auto& request = *static_cast<server_request*>(raw);
    GEERPC_ASSERT(request.connection != nullptr, "server: context::from() of a call_context after its handler");
    server_connection& self = *request.connection;
    const server_options& options = self.context_.config.options();
    context out = context{}.with_stop_token(self.ledger_.stop_token_of(request));
    if (const auto& deadline = handler.handler_deadline())
      out = out.with_deadline(detail::downstream_deadline(
          *deadline, request.read_at, options.timeouts.downstream_reserve, options.timeouts.downstream_reserve_max));
    for (const std::string& key : options.propagated_metadata)
      if (auto value = handler.metadata(key); value && value->size() <= options.propagated_metadata_max)
        out = out.with_metadata(key, std::string(*value));
    return context_access::settle(std::move(out));
  }
  static std::string_view peer_of(const void* self) noexcept {
    return static_cast<const server_connection*>(self)->peer_;
  }
  // Worked out once, when the connection is made: once it is shut down, or reset by the peer, the
  // socket no longer says.
  static std::string peer_text(int fd) {
    sockaddr_storage address{};
    socklen_t size = sizeof address;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) return {};
    return net::endpoint_text(address, size);
  }

  // Tells the observer the request is finished. A request nobody answered is claimed here first
  // (its connection closed, or the server stopped): no cancel frame can answer it afterwards. The
  // ledger's lock also orders a cancel frame's record (written under it) before what is read here;
  // a request this thread answered itself needs neither, and the common call takes no lock here.
  void report(server_request& request, bool answered_here) {
    if (!answered_here)
      ledger_.claim_for_end(request, [&](server_request& claimed) {
        observer_.answered(claimed, static_cast<std::uint8_t>(errc::connection_closed),
                           "rpc server: the connection closed before the call was answered");
      });
    if (observer_.counting()) touch(request.answered_at);
    observer_.finished(request, peer_, [&] { return context_of(request); });
  }

  // Answers a request that is never registered (an unknown method, a type mismatch, bad metadata,
  // busy), and lets the observer see it.
  void refuse(const wire::frame_view& frame, bool metadata_valid, errc code, const std::string& message) {
    answer_now(frame.header.seq, code, message);
    observer_.refused(frame, code, message, peer_, [&] {
      std::optional<clock::time_point> deadline;
      if (frame.header.budget_us > 0)
        deadline = saturating_deadline(
            clock::now(), std::chrono::microseconds(std::min(frame.header.budget_us, request_ledger::max_budget_us)));
      call_context::parts parts;  // never registered: no handler's deadline, no stop token
      parts.method = frame.text;
      parts.deadline = deadline;
      parts.connection_id = id_;
      if (metadata_valid) parts.metadata = frame.metadata;
      parts.peer_owner = this;
      parts.peer_of = &peer_of;
      parts.identity = &identity();
      return call_context(parts);
    });
  }

  void on_request(const wire::frame_view& frame, std::vector<server_request*>& ready) {
    const std::uint64_t seq = frame.header.seq;
    if (going_away()) return refuse(frame, false, errc::going_away, going_away_message);
    errc code{};
    std::string message;
    const bool metadata_valid = !frame.has_metadata || (wire::metadata_size_field + frame.metadata.size() <=
                                                            context_.config.options().limits.max_metadata_bytes &&
                                                        wire::check_metadata(frame.metadata) == nullptr);
    const handler_entry* handler = context_.config.handlers()->find(frame.text, code, message);
    // A built-in method (geerpc.Describe) exists only for the peers the debug page's policy admits.
    if (handler != nullptr && handler->builtin && !debug_page_admits()) [[unlikely]] {
      context_.config.handlers()->explain_missing(frame.text, code, message);
      handler = nullptr;
    }
    if (handler == nullptr) return refuse(frame, metadata_valid, code, message);
    // A caller that sends its types' fingerprint learns of a mismatch before anything is decoded;
    // one whose types differ but agree (a struct with more or fewer trailing fields) goes on.
    if (frame.fingerprint != 0 && frame.fingerprint != handler->fingerprint && handler->fingerprinted[codec_slot()])
        [[unlikely]]
      if (auto refused = accepted_types_.refusal(*handler, frame.fingerprint, frame.schema))
        return refuse(frame, metadata_valid, errc::type_mismatch, *refused);
    if (!metadata_valid) {
      if (wire::metadata_size_field + frame.metadata.size() > context_.config.options().limits.max_metadata_bytes)
        observer_.turned_away(limit_kind::metadata_bytes);
      return refuse(frame, false, errc::bad_request, metadata_message(frame.metadata));
    }
    // The metadata block and the arguments follow each other in the frame: they are kept together.
    const std::span<const std::byte> kept(frame.has_metadata ? frame.metadata.data() : frame.body.data(),
                                          frame.metadata.size() + frame.body.size());

    using verdict = request_ledger::admission::verdict;
    const request_ledger::admission admitted = ledger_.admit(
        seq, *handler, kept, frame.metadata.size(), budget_expired_on_arrival(frame.header.budget_us),
        observer_.installed(), [this] { return going_away(); }, [this] { return shared_from_this(); });
    switch (admitted.outcome) {
      case verdict::registered:
        break;
      case verdict::duplicate_seq:
        // Two requests with one seq could never get one response each that the client can tell
        // apart: the client is broken, and so is the stream.
        return close();
      case verdict::expired:  // never registered: nothing of it is kept
        observer_.not_run(*handler, limit_kind::deadline_before_start);
        return refuse(frame, true, errc::deadline_exceeded, expired_on_arrival_message);
      case verdict::busy:
        observer_.turned_away(admitted.limit);
        return refuse(frame, true, errc::busy, admitted.busy_reason());
      case verdict::no_memory:
        return refuse(frame, true, errc::busy, "rpc server: no memory for the request");
      case verdict::going_away:  // go_away() sets it under the ledger's lock
        return refuse(frame, true, errc::going_away, going_away_message);
    }
    ledger_.schedule_deadline(*admitted.request, frame.header.budget_us, handle_timeout(),
                              max_queue_time() > std::chrono::nanoseconds::zero(), &on_request_deadline);
    ready.push_back(admitted.request);
  }

  static void on_request_deadline(void* context) {
    auto& request = *static_cast<server_request*>(context);
    // finish() cancels the timer before it releases the request: a deadline never outlives it.
    GEERPC_ASSERT(request.connection != nullptr && request.timer_limit != server_request::limit::none,
                  "server: a deadline fired for a request already finished");
    server_connection& self = *request.connection;
    if (request.timer_limit == server_request::limit::handle_timeout)
      self.answer_error(request, errc::handle_timeout,
                        "rpc server: request handle timeout: expect within " + duration_text(self.handle_timeout()));
    else
      self.answer_error(request, errc::deadline_exceeded, "rpc server: the caller's deadline passed");
  }

  void on_cancel(std::uint64_t seq) {
    bool won = false;
    std::optional<std::stop_source> stop;  // a copy: the request may finish once the lock is released
    // Under the ledger's lock, which keeps the request alive while we claim it.
    won = ledger_.claim_seq(seq, [&](server_request& request) {
      stop = request.stop;
      observer_.answered(request, static_cast<std::uint8_t>(errc::canceled), canceled_message);
    });
    // A cancel for a call that already finished (or never existed) is not an error: it crossed the reply.
    if (!won) return;
    if (stop) stop->request_stop();
    answer_now(seq, errc::canceled, canceled_message);
  }
  static constexpr std::string_view canceled_message = "rpc server: request canceled by the client";
  static constexpr const char* going_away_message = "rpc server: shutting down: the call was not run";

  // Answers instead of the handler, if the handler has not answered yet, and tells it to stop.
  // From a deadline callback. The stop callbacks request_stop() runs may release the request (a
  // responder dropped there finishes it): everything needed after them is copied first, and the
  // answer goes out before them.
  void answer_error(server_request& request, errc code, const std::string& message) {
    if (!claim(request)) return;
    observer_.answered(request, static_cast<std::uint8_t>(code), message);
    const std::shared_ptr<server_connection> keep = shared_from_this();
    // Under the lock: the handler may be making its stop source now (request_ledger::stop_token_of).
    std::optional<std::stop_source> stop = ledger_.stop_source_of(request);
    answer_now(request.seq, code, message);
    if (stop) stop->request_stop();
  }

  // Whether server_options.observability.debug_page admits this connection's peer: asked for each
  // call of a built-in method, as it is for each request for the debug page.
  bool debug_page_admits() const {
    return context_.config.options().observability.debug_page.allows(debug_peer_of(peer_, &identity()));
  }

  std::string metadata_message(std::span<const std::byte> block) const {
    const std::size_t size = wire::metadata_size_field + block.size();
    if (size > context_.config.options().limits.max_metadata_bytes)
      return "rpc server: request metadata of " + std::to_string(size) + " bytes exceeds the limit of " +
             std::to_string(context_.config.options().limits.max_metadata_bytes);
    return std::string("rpc server: ") + wire::check_metadata(block);
  }

  request_ledger ledger_;            // the requests in flight
  accepted_types accepted_types_;    // call types taken though their fingerprints differ
  const request_observer observer_;  // statistics, interceptors
  const std::uint64_t id_;           // call_context::connection_id()
  const std::string peer_;           // call_context::peer()
};

}  // namespace detail
GEERPC_END_NAMESPACE
