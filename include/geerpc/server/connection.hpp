// geerpc: one accepted connection, the part of the server both transport policies share. A
// transport decides which thread reads and which runs a request; this file is the wire session:
// what reading means (the first bytes: the hello, or the HTTP door; then frames), how replies are
// written, and the stall and write timers. The requests in flight are the request ledger's
// (request_ledger.hpp: exactly one response, deadlines, cancel, limits, the request pool); this
// file runs them and sends what the ledger lets it send. What the server watches of its calls
// (statistics, interceptors, the debug page) it learns through one hook, request_observer
// (observer.hpp), which costs a branch where none is installed.
//
// Exactly one response: every request has one atomic state. Its handler finishing, its deadline
// (the handle timeout or the caller's budget) and a cancel frame race to move it from `running` to
// `answered` (request_ledger::claim); only the winner writes a response. A loser's work is dropped
// without blocking anyone.
#pragma once

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
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
#include "../detail/assert.hpp"
#include "../detail/deadline.hpp"
#include "../detail/duration_text.hpp"
#include "../detail/scratch.hpp"
#include "../error.hpp"
#include "../net/frame_reader.hpp"
#include "../net/frame_writer.hpp"
#include "../net/socket.hpp"
#include "../net/stream.hpp"
#include "../options.hpp"
#include "../scheduler/deadline_scheduler.hpp"
#include "../wire/frame.hpp"
#include "../wire/handshake.hpp"
#include "../wire/metadata.hpp"
#include "connection_view.hpp"
#include "context.hpp"
#include "dispatcher.hpp"
#include "http_door.hpp"
#include "observer.hpp"
#include "request_ledger.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

struct server_frames_tag {};
// The reply run() builds while the handler runs: a tag of its own, since the handler may meanwhile
// answer a responder, shut down a server or cancel a call, which build frames with the other.
struct server_reply_tag {};

class server_connection final : public std::enable_shared_from_this<server_connection>, public listed_connection {
 public:
  // `want_write` is how the transport learns that replies wait for the socket to drain (it then
  // watches for writability and calls writer().flush()); `poller_fd` is the transport's epoll set,
  // or -1 for a transport that polls per connection. The stream gets its session, if the server
  // has a stream layer (server_options::session), here: a factory's refusal throws.
  server_connection(server_context& context, net::unique_fd fd, net::frame_writer::want_write_fn want_write,
                    int poller_fd = -1)
      : context_(context),
        stream_(
            net::make_stream(std::move(fd), context.options.session.get(), net::stream_session_factory::role::server)),
        poller_fd_(poller_fd),
        writer_(stream_, context.options.max_pending_output, want_write, this, &context.output),
        reader_(context.options.max_frame_size),
        ledger_(context),
        observer_(context),
        id_(context.last_connection_id.fetch_add(1, std::memory_order_relaxed) + 1),
        peer_(peer_text(stream_.fd())) {
    std::lock_guard lock(context_.connections_mutex);
    registry_index = context_.connections.size();
    context_.connections.push_back(this);
  }
  // The last thing it does with the server's context is to leave its list: once that list is
  // empty, a stopping server may go (server_context::wait_connections_gone).
  ~server_connection() {
    writer_.detach_gauge();
    std::lock_guard lock(context_.connections_mutex);
    auto& all = context_.connections;
    GEERPC_ASSERT(registry_index < all.size() && all[registry_index] == this,
                  "server: a connection is listed where it says it is");
    all[registry_index] = all.back();
    all[registry_index]->registry_index = registry_index;
    all.pop_back();
    if (all.empty()) context_.connections_gone.notify_all();  // under the lock: the server may go next
  }

  // What the debug page shows of it (listed_connection). Called with context().connections_mutex held.
  connection_view describe() const override {
    connection_view v{peer_, opened_,
                      clock::time_point(clock::duration(last_activity_ns_.load(std::memory_order_relaxed))), 0,
                      writer_.held()};
    v.inflight = inflight();
    return v;
  }

  server_connection(const server_connection&) = delete;
  server_connection& operator=(const server_connection&) = delete;

  int fd() const noexcept { return stream_.fd(); }
  // All of the connection's reads go through it (the transport's), and its writes through writer().
  net::stream& stream() noexcept { return stream_; }
  int poller_fd() const noexcept { return poller_fd_; }

  // What a transport with one poller for many connections (the threaded server) asked it to watch
  // this connection for beyond reading: writability, for the writer (replies wait for the socket)
  // or for the stream's session (a read that must write first). Both change it, from different
  // threads, under this lock, so that the poller is never left with a stale set. Plain sockets'
  // reads never want writability: only the writer's hook touches it then.
  struct poller_wishes {
    std::mutex mutex;
    bool writer = false;
    bool reader = false;
  };
  poller_wishes& wishes() noexcept { return wishes_; }
  net::frame_writer& writer() noexcept { return writer_; }
  bool closed() const noexcept { return closed_.load(std::memory_order_acquire); }
  bool handshake_done() const noexcept { return hello_size_ == wire::hello_size; }

  // Disconnects a peer that has not completed the handshake in time. Called when the connection is
  // accepted; frame_timeout then guards every frame the peer starts in the same way.
  void arm_handshake_timer() { arm_stall_timer(context_.options.handshake_timeout); }

  // Feeds bytes received from the peer: the hello first, then frames. Requests ready to run are
  // appended to `ready`. Returns false when the connection must be closed.
  bool on_bytes(std::span<const std::byte> data, std::vector<server_request*>& ready) {
    if (closed()) return false;
    if (observer_.counting()) touch(clock::now());
    if (!handshake_done()) {  // an HTTP peer never completes the hello: only it pays for the door
      if (!past_http_door(data)) return !closed();
      const std::size_t take = std::min(wire::hello_size - hello_size_, data.size());
      std::copy_n(data.begin(), take, hello_.begin() + static_cast<std::ptrdiff_t>(hello_size_));
      hello_size_ += take;
      data = data.subspan(take);
      if (!handshake_done()) return true;
      if (!accept_hello()) return false;
    }
    bool keep = true;
    bool completed = false;
    const char* broken = reader_.feed(data, [&](std::span<const std::byte> frame) {
      completed = true;
      keep = on_frame(frame, ready);
      return keep;
    });
    // A frame begun and not finished starts its clock, which later bytes of the same frame do not
    // reset (a trickling peer gains nothing); a new frame starts a new clock. The timer is armed
    // once and re-arms itself while the frame it finds pending is younger than the limit, so this
    // path costs a clock read, not a timer per read.
    if (broken != nullptr && std::string_view(broken) == net::frame_reader::too_large)
      observer_.turned_away(limit_kind::frame_size);
    if (reader_.buffered() != 0) {
      if (completed || partial_since_ns_.load(std::memory_order_relaxed) == 0)
        partial_since_ns_.store(clock::now().time_since_epoch().count(), std::memory_order_relaxed);
      arm_stall_timer(context_.options.frame_timeout);
    } else {
      partial_since_ns_.store(0, std::memory_order_relaxed);
      if (stall_armed_.load(std::memory_order_relaxed)) disarm_stall_timer();
    }
    return keep && broken == nullptr;
  }

  // Sends `bytes`, then closes the connection once the socket has taken them all (or the peer is
  // dropped for not reading them: write_timeout, or the handshake timer still armed). What the peer
  // sends meanwhile is ignored.
  void send_and_close(std::span<const std::byte> bytes) {
    closing_after_output_.store(true, std::memory_order_relaxed);
    const auto status = writer_.write(bytes);
    if (status == net::frame_writer::status::pending)
      arm_write_timer();
    else if (status == net::frame_writer::status::broken)
      close();
    else
      answer_sent();
  }
  // The HTTP answer is all out: the writing side ends, and the transport closes the connection at
  // the peer's EOF (on_bytes drops what comes before it). Without a handshake timer to bound that
  // wait, it closes now.
  void answer_sent() {
    if (context_.options.handshake_timeout <= std::chrono::nanoseconds::zero())
      close();
    else
      stream_.shutdown_write();
  }

  // Refuses the connection in the handshake reply (a bad hello, too many connections, no thread to
  // serve it): the reason goes out, then the connection closes. Counted before the reply is sent.
  void reject(const std::string& reason) {
    context_.refused.fetch_add(1, std::memory_order_relaxed);
    std::vector<std::byte> reply;
    wire::encode_hello_reply({false, 0, reason}, reply);
    writer_.write(reply);
    close();
  }

  // Sends one whole frame; a connection whose peer stopped reading past the limit is closed. Never
  // call it inside the ledger's lock: closing takes that lock.
  void send(std::span<const std::byte> frame, bool hold = false) {
    after_write(hold ? writer_.hold(frame) : writer_.write(frame));
  }

  // Sends the replies run() held.
  void flush_replies() { after_write(writer_.flush()); }

  // Graceful shutdown, first step: tells the peer to send no more requests (a goaway frame, right
  // after the hello reply if that has not gone out yet) and refuses those it sends anyway with
  // errc::going_away. Calls in flight go on. Safe from any thread, repeatable.
  void go_away() {
    std::uint8_t before = 0;
    // Under the lock that registers requests: one registered before it counts in flight (the
    // drain waits for it), one after it is refused.
    ledger_.exclusive([&] { before = shutdown_state_.fetch_or(draining); });
    if ((before & (draining | hello_replied)) == hello_replied) send_goaway();
  }
  bool going_away() const noexcept { return (shutdown_state_.load(std::memory_order_relaxed) & draining) != 0; }

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

  // Sends what the socket did not take before; the transport calls it when the socket is writable
  // again. Returns false when the connection is closed.
  bool flush_output() {
    after_write(writer_.flush());
    // The connection's one writer is send_and_close(), on the thread that reads it (or leads
    // its I/O), as this is: nothing is mid-send here when has_pending() says none wait.
    if (closing_after_output_.load(std::memory_order_relaxed) && !writer_.has_pending()) answer_sent();
    return !closed();
  }

  // Stops reading and writing and asks every handler still running for this peer to stop. The
  // transport notices (EOF on the socket) and drops the connection. Safe from any thread, repeatable.
  void close() {
    const bool already = closed_.exchange(true, std::memory_order_acq_rel);
    // After closed_ is set, so that no timer is armed again behind these disarms. Releases the
    // timers' hold on the connection (a callback running now keeps its own).
    disarm_stall_timer();
    disarm_write_timer();
    if (already) return;
    // Replies held for a batch (reply_holds.hpp) belong to handlers that finished: send them first.
    writer_.flush();
    stream_.shutdown();
    stop_handlers();
  }

  // Stop callbacks run inline in request_stop(): they are called with no lock of ours held.
  void stop_handlers() {
    for (auto& source : ledger_.stop_sources()) source.request_stop();
  }

  std::size_t inflight() const { return ledger_.size(); }

  // Runs a request's handler unless the request was already answered (timed out or canceled while
  // it waited) or its peer is gone, and answers it if it still can. Then finishes it.
  // With `hold`, the reply is queued for the next flush_replies() instead of sent (see
  // frame_writer::hold): the transport's tuning knows another request of this connection runs
  // next (tuning/reply_holds.hpp).
  static void run(server_request* request, bool hold = false) {
    GEERPC_ASSERT(request->connection != nullptr, "server: a request runs before it is finished, not after");
    server_connection& self = *request->connection;
    self.ledger_.release_queued(*request);  // it no longer waits
    self.observer_.started(*request);
    if (request->state.load(std::memory_order_acquire) == server_request::running && !self.closed()) {
      std::vector<std::byte>& frame = frame_scratch<server_reply_tag>();
      wire::begin_frame(frame, {wire::frame_kind::response, 0, request->seq, 0}, {});
      const std::stop_token token = request->stop ? request->stop->get_token() : std::stop_token{};
      const call_context context = self.context_of(*request);
      invoke_outcome outcome;
      if (!self.observer_.refused_before(context, outcome)) {
        const deferred_target later{request, &respond_deferred, &release_deferred, {}};
        outcome = request->handler->invoke(request->handler->impl, request->arguments(), token, context, later, frame);
        // A handler that took a responder: the responder answers and finishes the request, maybe
        // already (from inside the handler, which may have used this thread's frame too).
        if (outcome.deferred) return;
      }
      self.answer(*request, std::move(outcome), frame, hold);
      trim_scratch(frame);
    }
    finish(request);
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

  // Releases a request that has run, or will never run: its timer, its slot, its memory.
  static void finish(server_request* request) {
    GEERPC_ASSERT(request->connection != nullptr, "server: a request is finished exactly once");
    // First the timer: once cancel() returns no deadline callback runs, and those read
    // request->connection.
    request->connection->ledger_.cancel_deadline(*request);
    // Then the statistics and the interceptors' `after`, which read what the answer's claimer
    // recorded: a timer's record is ours once cancel() returned, a cancel frame's is written under
    // the ledger's lock.
    if (request->connection->observer_.installed()) request->connection->report(*request);
    // This may be the connection's last reference, and the request may go back into the
    // connection's pool.
    std::shared_ptr<server_connection> connection = std::move(request->connection);
    server_context& context = connection->context_;
    connection->ledger_.retire(request);
    connection.reset();              // before the count below: a stopping server waits for it, then goes
    request_ledger::leave(context);  // last: the context may go once it is counted out
  }

 private:
  void visit_requests(request_visitor visit, void* visitor) const override {
    ledger_.for_each([&](const server_request& request) {
      visit(visitor, *request.handler, request.arrived,
            clock::time_point(clock::duration(request.started_ns.load(std::memory_order_relaxed))));
    });
  }
  static bool claim(server_request& request) noexcept { return request_ledger::claim(request); }

  // Sends the response `frame` holds (begun as a success, the reply encoded after it), or the
  // outcome's error instead, if this request is still unanswered.
  void answer(server_request& request, invoke_outcome outcome, std::vector<std::byte>& frame, bool hold) {
    const std::size_t length = frame.size() - wire::length_prefix_size;
    if (outcome.status == 0 && length > max_response_size_)
      outcome = invoke_outcome::failure(errc::remote_error, "rpc server: reply of " + std::to_string(length) +
                                                                " bytes exceeds the frame size limit of " +
                                                                std::to_string(max_response_size_));
    if (outcome.status != 0) {
      frame.clear();
      wire::begin_frame(frame, {wire::frame_kind::response, outcome.status, request.seq, 0}, fitting(outcome.message));
    }
    wire::finish_frame(frame, 0);
    if (claim(request)) {
      observer_.answered(request, outcome.status, outcome.message);
      // With interceptors, finish() runs their `after` next: a held reply would wait for it.
      send(frame, hold && !observer_.intercepted());
    }
  }

  void touch(clock::time_point now) noexcept {
    last_activity_ns_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
  }

  // What a handler and the interceptors see of a registered request.
  call_context context_of(const server_request& request) const noexcept {
    return call_context({request.handler->name, request.caller_deadline, id_, request.metadata(), this, &peer_of});
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
  // (its connection closed, or the server stopped): no cancel frame can answer it afterwards.
  void report(server_request& request) {
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
      return call_context(
          {frame.text, deadline, id_, metadata_valid ? frame.metadata : std::span<const std::byte>{}, this, &peer_of});
    });
  }

  // Before the hello: a connection whose first byte begins an HTTP request goes through the HTTP
  // door (http_door.hpp) first. Returns true when what is left of `data` is for the hello: a
  // connection that never spoke HTTP, or one whose CONNECT was answered; false while the head is
  // incomplete, or when the door answered and the connection is closing.
  bool past_http_door(std::span<const std::byte>& data) {
    if (closing_after_output_.load(std::memory_order_relaxed)) {
      // An HTTP answer is going out, or has: what the peer still sends is dropped unread until
      // its EOF (closing before would reset the connection and could lose the answer), up to a
      // bound; the handshake timer, still armed, bounds the wait.
      discarded_ += data.size();
      if (discarded_ > max_discarded) close();
      return false;
    }
    if (!door_checked_ && !data.empty()) {
      door_checked_ = true;
      if (wire::http::starts_request(static_cast<char>(data[0]))) http_ = std::make_unique<http_door>();
    }
    if (!http_) return true;
    std::size_t used = 0;
    std::string reply;
    const http_door::verdict verdict = http_->feed(data, used, reply, context_);
    data = data.subspan(used);
    if (verdict == http_door::verdict::pending) return false;
    http_.reset();
    const auto bytes = std::as_bytes(std::span(reply));
    if (verdict == http_door::verdict::connected) {
      send(bytes);
      return !closed();
    }
    send_and_close(bytes);
    return false;
  }

  bool accept_hello() {
    wire::hello hello;
    std::string refusal;
    if (const char* bad = wire::parse_hello(hello_, hello))
      refusal = std::string("rpc server: ") + bad;
    else if (hello.version != wire::protocol_version)
      refusal = "rpc server: unsupported protocol version " + std::to_string(hello.version);
    else if (hello.codec_id != context_.codec_id)
      refusal = "rpc server: unsupported codec " + std::to_string(hello.codec_id);
    disarm_stall_timer();
    if (!refusal.empty()) {
      reject(refusal);
      return false;
    }
    constexpr std::uint64_t max_us = std::uint64_t{1} << 50;  // ~35 years: fits in nanoseconds
    handle_timeout_ = std::chrono::microseconds(std::min(hello.handle_timeout_us, max_us));
    greeted_.store(true, std::memory_order_relaxed);
    // The smaller of what the client reads (0: it set no limit) and what this server sends.
    max_response_size_ = hello.max_response_size == 0
                             ? context_.options.max_frame_size
                             : std::min(hello.max_response_size, context_.options.max_frame_size);
    std::vector<std::byte>& reply = frame_scratch<server_frames_tag>();
    wire::encode_hello_reply({true, context_.options.max_frame_size, {}}, reply);
    send(reply);
    // A shutdown that began before the reply went out sends its goaway now, after it.
    if ((shutdown_state_.fetch_or(hello_replied) & draining) != 0) send_goaway();
    return !closed();
  }

  bool on_frame(std::span<const std::byte> bytes, std::vector<server_request*>& ready) {
    wire::frame_view frame;
    if (wire::parse_frame(bytes, frame) != nullptr) return false;  // broken framing: drop the peer
    switch (frame.header.kind) {
      case wire::frame_kind::request:
        on_request(frame, ready);
        return !closed();
      case wire::frame_kind::cancel:
        on_cancel(frame.header.seq);
        return !closed();
      case wire::frame_kind::response:
      case wire::frame_kind::goaway:
        return false;  // clients send neither
    }
    return false;
  }

  void on_request(const wire::frame_view& frame, std::vector<server_request*>& ready) {
    const std::uint64_t seq = frame.header.seq;
    if (going_away()) return refuse(frame, false, errc::going_away, going_away_message);
    errc code{};
    std::string message;
    const bool metadata_valid = !frame.has_metadata || (wire::metadata_size_field + frame.metadata.size() <=
                                                            context_.options.max_metadata_bytes &&
                                                        wire::check_metadata(frame.metadata) == nullptr);
    const handler_entry* handler = context_.handlers->find(frame.text, code, message);
    if (handler == nullptr) return refuse(frame, metadata_valid, code, message);
    // A caller that sends its types' fingerprint learns of a mismatch before anything is decoded.
    if (frame.fingerprint != 0 && handler->fingerprint != 0 && frame.fingerprint != handler->fingerprint)
      return refuse(frame, metadata_valid, errc::type_mismatch, type_mismatch_message(frame.text));
    if (!metadata_valid) {
      if (wire::metadata_size_field + frame.metadata.size() > context_.options.max_metadata_bytes)
        observer_.turned_away(limit_kind::metadata_bytes);
      return refuse(frame, false, errc::bad_request, metadata_message(frame.metadata));
    }
    // The metadata block and the arguments follow each other in the frame: they are kept together.
    const std::span<const std::byte> kept(frame.has_metadata ? frame.metadata.data() : frame.body.data(),
                                          frame.metadata.size() + frame.body.size());

    using verdict = request_ledger::admission::verdict;
    const request_ledger::admission admitted = ledger_.admit(
        seq, *handler, kept, frame.metadata.size(), observer_.installed(), [this] { return going_away(); },
        [this] { return shared_from_this(); });
    switch (admitted.outcome) {
      case verdict::registered:
        break;
      case verdict::duplicate_seq:
        // Two requests with one seq could never get one response each that the client can tell
        // apart: the client is broken, and so is the stream.
        return close();
      case verdict::busy:
        observer_.turned_away(admitted.limit);
        return refuse(frame, true, errc::busy, admitted.busy_reason);
      case verdict::going_away:  // go_away() sets it under the ledger's lock
        return refuse(frame, true, errc::going_away, going_away_message);
    }
    ledger_.schedule_deadline(*admitted.request, frame.header.budget_us, handle_timeout_, &on_request_deadline);
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
                        "rpc server: request handle timeout: expect within " + duration_text(self.handle_timeout_));
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
    std::optional<std::stop_source> stop = request.stop;
    answer_now(request.seq, code, message);
    if (stop) stop->request_stop();
  }

  // An error text cut to what the client reads, so that an error response (a long exception message,
  // a long unknown method name echoed back) never costs the client its connection.
  std::string_view fitting(std::string_view message) const noexcept {
    const std::size_t room = max_response_size_ > wire::header_size ? max_response_size_ - wire::header_size : 0;
    return message.substr(0, std::min(room, wire::max_text_size));
  }

  std::string metadata_message(std::span<const std::byte> block) const {
    const std::size_t size = wire::metadata_size_field + block.size();
    if (size > context_.options.max_metadata_bytes)
      return "rpc server: request metadata of " + std::to_string(size) + " bytes exceeds the limit of " +
             std::to_string(context_.options.max_metadata_bytes);
    return std::string("rpc server: ") + wire::check_metadata(block);
  }

  void send_goaway() {
    std::vector<std::byte> frame;  // not the scratch: this may run inside a handler, building its reply
    wire::finish_frame(frame,
                       wire::begin_frame(frame, {wire::frame_kind::goaway, 0, 0, 0}, "rpc server: shutting down"));
    send(frame);
  }

  static std::string type_mismatch_message(std::string_view method) {
    return "rpc server: type mismatch calling " + std::string(method) +
           ": the call's argument or result types are not the method's";
  }

  void answer_now(std::uint64_t seq, errc code, std::string_view message) {
    std::vector<std::byte>& frame = frame_scratch<server_frames_tag>();
    wire::begin_frame(frame, {wire::frame_kind::response, static_cast<std::uint8_t>(code), seq, 0}, fitting(message));
    wire::finish_frame(frame, 0);
    send(frame);
  }

  // The stall timer: armed while the peer owes us the rest of a hello or of a frame. While armed it
  // holds a reference to the connection (stall_guard_), so that its callback never outlives the
  // connection whichever thread drops the last other reference. Whoever takes the guard decides:
  // the callback closes the connection; a disarm (the frame completed, or a close) keeps the
  // guard, and so the connection, until cancel() has waited out a callback already running.
  // cancel() is never called with stall_mutex_ held: the callback needs that lock.
  void arm_stall_timer(std::chrono::nanoseconds limit) {
    if (limit <= std::chrono::nanoseconds::zero()) return;  // 0 or negative: no limit (options.hpp)
    std::lock_guard lock(stall_mutex_);
    if (stall_guard_ || closed()) return;  // closed: a closer has disarmed, and must stay the last
    // Scheduled first: if that throws, no guard is left behind to keep the connection alive. The
    // callback cannot run before the guard is set: it needs stall_mutex_.
    context_.scheduler->schedule(stall_timer_, saturating_deadline(clock::now(), limit), &on_stall, this);
    stall_guard_ = shared_from_this();
    stall_armed_.store(true, std::memory_order_relaxed);
  }
  void disarm_stall_timer() {
    std::shared_ptr<server_connection> guard;
    {
      std::lock_guard lock(stall_mutex_);
      guard.swap(stall_guard_);
      stall_armed_.store(false, std::memory_order_relaxed);
    }
    // Whoever took the guard cancels: that also takes off a deadline that a running callback set
    // again before it saw the guard gone. Cancelling after the lock is released is safe because
    // only the connection's reader arms the timer, and a closer sets closed_ before disarming, so
    // nobody arms it again in between.
    if (guard) context_.scheduler->cancel(stall_timer_);
  }  // `guard` goes here, after any running callback has returned
  static void on_stall(void* context) {
    auto& self = *static_cast<server_connection*>(context);
    std::shared_ptr<server_connection> guard;
    {
      std::lock_guard lock(self.stall_mutex_);
      if (!self.stall_guard_) return;  // a disarm won the race and is waiting for us to return
      // Past the handshake the timer watches frames: if the frame pending now began after this
      // timer was armed, it has time left; wait for it instead of closing.
      const auto since = self.partial_since_ns_.load(std::memory_order_relaxed);
      if (self.greeted_.load(std::memory_order_relaxed) && since != 0 && !self.closed()) {
        const auto due =
            saturating_deadline(clock::time_point(clock::duration(since)), self.context_.options.frame_timeout);
        if (due > clock::now()) {
          self.context_.scheduler->schedule(self.stall_timer_, due, &on_stall, &self);
          return;  // the guard stays with the new timer
        }
      }
      guard.swap(self.stall_guard_);
      self.stall_armed_.store(false, std::memory_order_relaxed);
    }
    if (!guard) return;
    if (!self.closed())
      self.observer_.turned_away(self.greeted_.load(std::memory_order_relaxed) ? limit_kind::frame_timeout
                                                                               : limit_kind::handshake_timeout);
    self.close();
  }

  // The write timer: armed when replies start waiting for the socket to drain (whoever wrote
  // last learns it from the writer: status::pending), it closes a connection whose socket took
  // none of their bytes for write_timeout. One timer per stall, not per write: when it fires it
  // looks at the writer, and waits again if bytes went out since, or lets go if all of them did.
  // It holds the connection as the stall timer does (write_guard_, under stall_mutex_), and is
  // disarmed the same way, by close().
  void after_write(net::frame_writer::status status) {
    if (status == net::frame_writer::status::broken) {
      if (!closed() && writer_.overflowed()) observer_.turned_away(limit_kind::pending_output);
      close();
    } else if (status == net::frame_writer::status::pending)
      arm_write_timer();
  }
  void arm_write_timer() {
    const std::chrono::nanoseconds limit = context_.options.write_timeout;
    if (limit <= std::chrono::nanoseconds::zero()) return;
    std::lock_guard lock(stall_mutex_);
    if (write_guard_ || closed()) return;
    context_.scheduler->schedule(write_timer_, saturating_deadline(clock::now(), limit), &on_write_stall, this);
    write_guard_ = shared_from_this();
  }
  void disarm_write_timer() {
    std::shared_ptr<server_connection> guard;
    {
      std::lock_guard lock(stall_mutex_);
      guard.swap(write_guard_);
    }
    // As in disarm_stall_timer(): a closer set closed_ first, so nobody arms it again meanwhile.
    if (guard) context_.scheduler->cancel(write_timer_);
  }
  static void on_write_stall(void* context) {
    auto& self = *static_cast<server_connection*>(context);
    std::shared_ptr<server_connection> guard;
    bool expired = false;
    {
      std::lock_guard lock(self.stall_mutex_);
      if (!self.write_guard_) return;  // a disarm won the race and is waiting for us to return
      if (!self.closed()) {
        // The writer's clock restarts whenever the socket takes bytes: until it has run for the
        // whole limit, wait again. Nothing waiting for the socket: the next stall arms anew.
        if (const auto since = self.writer_.stalled_since()) {
          const auto due = saturating_deadline(*since, self.context_.options.write_timeout);
          if (due > clock::now()) {
            self.context_.scheduler->schedule(self.write_timer_, due, &on_write_stall, &self);
            return;  // the guard stays with the new timer
          }
          expired = true;
        }
      }
      guard.swap(self.write_guard_);
    }
    if (!expired) return;
    self.observer_.turned_away(limit_kind::write_timeout);
    self.close();
  }  // `guard` goes here: it may be the connection's last reference

  server_context& context_;
  net::stream stream_;
  const int poller_fd_;
  poller_wishes wishes_;
  net::frame_writer writer_;
  net::frame_reader reader_;
  std::array<std::byte, wire::hello_size> hello_{};
  std::size_t hello_size_ = 0;
  static constexpr std::size_t max_discarded = 64u << 10;  // bytes dropped after an HTTP answer
  std::size_t discarded_ = 0;
  bool door_checked_ = false;                      // the first byte was looked at (the reader's alone)
  std::unique_ptr<http_door> http_;                // while an HTTP request's head arrives
  std::atomic<bool> closing_after_output_{false};  // send_and_close() was called
  std::chrono::nanoseconds handle_timeout_{0};
  std::uint32_t max_response_size_ = 0;  // set by the hello, before any request
  std::atomic<bool> closed_{false};
  std::mutex stall_mutex_;
  deadline_scheduler::timer stall_timer_;
  std::shared_ptr<server_connection> stall_guard_;  // set while the stall timer is armed
  deadline_scheduler::timer write_timer_;
  std::shared_ptr<server_connection> write_guard_;  // set while the write timer is armed (stall_mutex_)
  std::atomic<bool> stall_armed_{false};
  std::atomic<bool> greeted_{false};  // the hello was accepted
  // Whoever sets the second of these two bits sends the goaway frame: after the hello reply, once.
  static constexpr std::uint8_t draining = 1, hello_replied = 2;
  std::atomic<std::uint8_t> shutdown_state_{0};
  std::atomic<clock::rep> partial_since_ns_{
      0};  // when the pending frame began; 0: none            // a hint that lets the common case skip the lock
  request_ledger ledger_;            // the requests in flight
  const request_observer observer_;  // statistics, interceptors
  const std::uint64_t id_;           // call_context::connection_id()
  const std::string peer_;           // call_context::peer()
  const clock::time_point opened_ = clock::now();
  std::atomic<clock::rep> last_activity_ns_{opened_.time_since_epoch().count()};  // with statistics
};

}  // namespace detail
GEERPC_END_NAMESPACE
