// geerpc: the wire session of a server connection (connection.hpp): framing, once its opening
// (session_opening.hpp: the HTTP door and the geerpc hello) has taken the first bytes, and writing
// replies. Its bases each do one more part: the two timers that drop a peer which stalls
// (session_timers.hpp), the last words before a close (last_words.hpp), and a stream of another
// protocol, which passes through its translator both ways (translated_stream.hpp). What a frame
// asks for is the connection's: it hands each whole request or cancel frame to
// Connection::on_request() or on_cancel() (a template parameter, so that no call is virtual), and
// asks it to stop its handlers when it closes.
//
// `Connection` derives from wire_session<Connection> and from
// std::enable_shared_from_this<Connection>, and gives it: on_request(frame, ready),
// on_cancel(seq), stop_handlers(), observer() (observer.hpp), for the limits that turn a peer
// away, and peer() (its address text), for the debug page's policy.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../detail/chrono.hpp"
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
#include "context.hpp"
#include "frame_translator.hpp"
#include "last_words.hpp"
#include "scratch_tags.hpp"
#include "session_opening.hpp"
#include "session_timers.hpp"
#include "statistics.hpp"
#include "translated_stream.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

template <class Connection>
class wire_session : public session_timers<Connection>,
                     public last_words<Connection>,
                     public translated_stream<Connection> {
 public:
  using clock = std::chrono::steady_clock;

  wire_session(const wire_session&) = delete;
  wire_session& operator=(const wire_session&) = delete;

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
  std::size_t output_held() const noexcept { return writer_.held(); }  // memory held for replies not sent yet
  bool closed() const noexcept { return closed_.load(std::memory_order_acquire); }
  bool handshake_done() const noexcept { return opening_.done(); }
  // An HTTP request for a page, not RPC (session_opening::web()).
  bool web() const noexcept { return opening_.web(); }
  // What the stream layer proved about the peer (call_context::identity(); session_opening.hpp).
  const net::peer_identity& identity() const noexcept { return opening_.identity(); }
  // Whether a graceful shutdown has begun (the connection's go_away()).
  bool going_away() const noexcept { return (shutdown_state_.load(std::memory_order_relaxed) & draining) != 0; }

  // Disconnects a peer that has not completed the handshake in time. Called when the connection is
  // accepted; timeouts.frame then guards every frame the peer starts in the same way.
  void arm_handshake_timer() { arm_stall_timer(context_.config.options().timeouts.handshake); }

  // Feeds bytes received from the peer: the hello first, then frames. Requests ready to run are
  // appended to `ready` (the connection's on_request()). Returns false when the connection must be closed.
  template <class Ready>
  bool on_bytes(std::span<const std::byte> data, Ready& ready) {
    if (closed()) return false;
    if (owner().observer().counting()) touch(clock::now());
    if (!handshake_done()) {  // an HTTP peer never completes the hello: only it pays for the door
      if (!opening_.past_http_door(*this, data)) return !closed();
      if (!opening_.begin_translated(*this)) {
        if (!opening_.take_hello(data)) return true;
        if (!opening_.accept_hello(*this)) return false;
      }
    }
    if (translator_ != nullptr) [[unlikely]]
      return on_translated(data, ready);
    bool completed = false;
    const bool keep = on_frames(data, ready, completed);
    watch_partial(completed, reader_.buffered());
    return keep;
  }

  // Refuses the connection in the handshake reply (a bad hello, too many connections, no thread to
  // serve it): the reason goes out, then the connection closes. Counted before the reply is sent.
  void reject(const std::string& reason) {
    context_.refused.add();
    std::vector<std::byte> reply;
    wire::encode_hello_reply({false, 0, reason}, reply);
    writer_.write(reply);
    close();
  }

  // Sends one whole frame; a connection whose peer stopped reading past the limit is closed. Never
  // call it inside the request ledger's lock: closing takes that lock.
  void send(std::span<const std::byte> frame, bool hold = false) {
    if (translator_ != nullptr) [[unlikely]]
      return send_translated(frame, hold);
    after_write(hold ? writer_.hold(frame) : writer_.write(frame));
  }

  // Sends the replies run() held. After the last words that flush may be what sends their end.
  void flush_replies() {
    after_write(writer_.flush());
    if (closing_after_output_.load(std::memory_order_relaxed) && !closed() && writer_.last_sent()) answer_sent();
  }

  // Sends what the socket did not take before; the transport calls it when the socket is writable
  // again. Returns false when the connection is closed.
  bool flush_output() {
    after_write(writer_.flush());
    // Past the last words nothing is written, but another thread may be queueing them still, or
    // flushing: the writer knows when they are out.
    if (closing_after_output_.load(std::memory_order_relaxed) && !closed() && writer_.last_sent()) answer_sent();
    return !closed();
  }

  // Stops reading and writing and asks every handler still running for this peer to stop. The
  // transport notices (EOF on the socket) and drops the connection. Repeatable, and safe from any
  // thread but from inside the writer (its want_write hook): it waits for a send in progress.
  void close() {
    const bool already = closed_.exchange(true, std::memory_order_acq_rel);
    // After closed_ is set, so that no timer is armed again behind these disarms. Releases the
    // timers' hold on the connection (a callback running now keeps its own).
    disarm_stall_timer();
    disarm_write_timer();
    if (already) return;
    // Replies held for a batch (reply_holds.hpp), and those queued behind another thread's send,
    // belong to handlers that finished: they go out first, after that send, as far as the socket
    // takes them now.
    writer_.close();
    stream_.shutdown();
    owner().stop_handlers();
  }

 protected:
  using session_timers<Connection>::touch;  // the connection's, too (a reply sent)

 private:
  // The bases' parts the session's own code uses (names of dependent bases, made visible here),
  // private to it as they were when they were its own members.
  using last_words<Connection>::answer_sent;
  using last_words<Connection>::closing_after_output_;
  using session_timers<Connection>::arm_stall_timer;
  using session_timers<Connection>::arm_write_timer;
  using session_timers<Connection>::disarm_stall_timer;
  using session_timers<Connection>::disarm_write_timer;
  using session_timers<Connection>::watch_partial;
  using translated_stream<Connection>::on_translated;
  using translated_stream<Connection>::send_translated;
  using translated_stream<Connection>::translator_;

 protected:
  // `want_write` is how the transport learns that replies wait for the socket to drain (it then
  // watches for writability and calls writer().flush()), with `writer_context` (the connection);
  // `poller_fd` is the transport's epoll set, or -1 for a transport that polls per connection. The
  // stream gets its session, if the server has a stream layer (server_options::session), here: a
  // factory's refusal throws.
  wire_session(server_context& context, net::unique_fd fd, net::frame_writer::want_write_fn want_write,
               void* writer_context, int poller_fd)
      : context_(context),
        stream_(net::make_stream(std::move(fd), context.config.options().session.get(),
                                 net::stream_session_factory::role::server)),
        poller_fd_(poller_fd),
        writer_(stream_, context.config.options().limits.max_pending_output, want_write, writer_context,
                &context.output, &context.config.runtime()->chunk_pool(), context.config.scheduler()->manual()),
        reader_(context.config.options().limits.max_frame_size) {}
  ~wire_session() = default;

  // Graceful shutdown begins (the connection calls it under its ledger's lock): true when the
  // goaway frame is to go out now, the hello reply being out already; otherwise hello_reply_sent()
  // sends it after that reply.
  bool begin_going_away() noexcept {
    const std::uint8_t before = shutdown_state_.fetch_or(draining);
    return (before & (draining | hello_replied)) == hello_replied;
  }

  void send_goaway() {
    std::vector<std::byte> frame;  // not the scratch: this may run inside a handler, building its reply
    wire::finish_frame(frame,
                       wire::begin_frame(frame, {wire::frame_kind::goaway, 0, 0, 0}, "rpc server: shutting down"));
    send(frame);
  }

  void answer_now(std::uint64_t seq, errc code, std::string_view message) {
    std::vector<std::byte>& frame = frame_scratch<server_frames_tag>();
    wire::begin_frame(frame, {wire::frame_kind::response, static_cast<std::uint8_t>(code), seq, 0}, fitting(message));
    wire::finish_frame(frame, 0);
    send(frame);
  }

  // An error text cut to what the client reads, so that an error response (a long exception message,
  // a long unknown method name echoed back) never costs the client its connection.
  std::string_view fitting(std::string_view message) const noexcept {
    const std::uint32_t size = opening_.max_response_size();
    const std::size_t room = size > wire::header_size ? size - wire::header_size : 0;
    return message.substr(0, std::min(room, wire::max_text_size));
  }

  // What the hello asked for: the handle timeout (0: none), and the largest response it reads.
  std::chrono::nanoseconds handle_timeout() const noexcept { return opening_.handle_timeout(); }
  std::uint32_t max_response_size() const noexcept { return opening_.max_response_size(); }
  std::size_t codec_slot() const noexcept { return opening_.codec_slot(); }

  server_context& context_;

 private:
  Connection& owner() noexcept { return static_cast<Connection&>(*this); }

  // The opening reads the first bytes through the session, answers through its writer and
  // disarms its stall timer once the hello is whole. The bases reach the session's parts through
  // the connection.
  friend class session_opening;
  friend class session_timers<Connection>;
  friend class last_words<Connection>;
  friend class translated_stream<Connection>;

  // A shutdown that began before the hello reply went out sends its goaway now, after it.
  void hello_reply_sent() {
    if ((shutdown_state_.fetch_or(hello_replied) & draining) != 0) send_goaway();
  }

  // Feeds frames to the reader, which hands each whole one to on_frame(); `completed`: one was.
  // Returns false when the connection must be closed.
  template <class Ready>
  bool on_frames(std::span<const std::byte> data, Ready& ready, bool& completed) {
    bool keep = true;
    const char* broken = reader_.feed(data, [&](std::span<const std::byte> frame) {
      completed = true;
      keep = on_frame(frame, ready);
      return keep;
    });
    if (broken != nullptr && std::string_view(broken) == net::frame_reader::too_large)
      owner().observer().turned_away(limit_kind::frame_size);
    return keep && broken == nullptr;
  }

  // A whole frame: a request or a cancel goes to the connection; a client sends nothing else.
  template <class Ready>
  bool on_frame(std::span<const std::byte> bytes, Ready& ready) {
    wire::frame_view frame;
    if (wire::parse_frame(bytes, frame) != nullptr) return false;  // broken framing: drop the peer
    switch (frame.header.kind) {
      case wire::frame_kind::request:
        owner().on_request(frame, ready);
        return !closed();
      case wire::frame_kind::cancel:
        owner().on_cancel(frame.header.seq);
        return !closed();
      case wire::frame_kind::response:
      case wire::frame_kind::goaway:
        return false;  // clients send neither
    }
    return false;
  }

  // Whoever wrote learns from the writer whether the peer is reading: replies that wait for the
  // socket arm the write timer (session_timers.hpp); a peer past the limit is dropped.
  void after_write(net::frame_writer::status status) {
    if (status == net::frame_writer::status::broken) {
      if (!closed() && writer_.overflowed()) owner().observer().turned_away(limit_kind::pending_output);
      close();
    } else if (status == net::frame_writer::status::pending)
      arm_write_timer();
  }

  net::stream stream_;
  const int poller_fd_;
  poller_wishes wishes_;
  net::frame_writer writer_;
  net::frame_reader reader_;
  session_opening opening_;  // the first bytes: the HTTP door, the hello
  // Set once, by close(); acquire/release, so that whoever sees it closed sees the close's work.
  std::atomic<bool> closed_{false};
  // Whoever sets the second of these two bits sends the goaway frame: after the hello reply, once.
  static constexpr std::uint8_t draining = 1, hello_replied = 2;
  std::atomic<std::uint8_t> shutdown_state_{0};
};

}  // namespace detail
GEERPC_END_NAMESPACE
