// geerpc: the settings of a client connection and of a server, as plain std::chrono values with
// defaults that suit most programs.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "config.hpp"
#include "interceptor.hpp"
#include "net/stream_session.hpp"
#include "tuning/settings.hpp"
#include "wire/frame.hpp"

GEERPC_BEGIN_NAMESPACE

class runtime;  // runtime.hpp

// For geerpc::dial(). A zero duration means "no limit", and so, in effect, does one too long for
// the clock (nanoseconds::max()): it saturates at the farthest deadline, never overflows.
struct options {
  // TCP connect plus the handshake; expiry fails dial() with errc::connect_timeout. A negative
  // timeout has expired before it starts (as a Go net.Dialer's): dial() fails at once with
  // errc::connect_timeout, connecting nothing.
  std::chrono::nanoseconds connect_timeout = std::chrono::seconds(10);
  // Sent to the server in the handshake: a request not answered this long after the server read it
  // (time spent waiting for a free handler thread included) is answered with errc::handle_timeout,
  // and its handler is asked to stop through its std::stop_token. Zero or negative: no limit.
  std::chrono::nanoseconds handle_timeout{0};
  // The largest reply frame this client reads. Sent in the handshake: the server answers a bigger
  // reply with an error (errc::remote_error) and cuts error texts to fit. At least
  // wire::header_size (20, a reply with no body): a smaller one fails dial() with
  // errc::invalid_argument before connecting.
  std::uint32_t max_frame_size = wire::default_max_frame_size;
  // The threaded transport's performance heuristics: spinning, batching, the CPUs to assume
  // (tuning/settings.hpp). The defaults suit most programs.
  tuning::settings tuning{};
  // The stream layer between the connection's bytes and its socket: null (the default) for a
  // plain TCP or Unix socket. The seam a TLS layer fills (net/stream_session.hpp,
  // docs/transports.md); its session is made right after the connect, before the handshake.
  std::shared_ptr<net::stream_session_factory> session{};
  // Code that sees every call of this client on its way out and its outcome (interceptor.hpp).
  std::vector<client_interceptor> interceptors{};
  // The runtime whose scheduler fires this client's deadlines and whose CPU budget its heuristics
  // plan for (runtime.hpp); null: the default runtime. The client holds it while it lives.
  std::shared_ptr<geerpc::runtime> runtime{};
};

// For geerpc::server. Its timeouts are the server's own limits on its peers: zero or negative means
// no limit (as in Go's http.Server), and one too long for the clock (nanoseconds::max()) never fires.
struct server_options {
  // Threads that run handlers and never retire (threaded transport; at least 1). One more thread
  // does the I/O, so a server with every handler busy still reads, answers "busy" and fires
  // timeouts.
  std::size_t handler_threads = 8;
  // While requests wait and every handler thread is busy, the pool grows, one thread at a time, up
  // to this many threads running handlers (threaded transport): handlers that wait on something
  // slow do not starve a quick call. Values below handler_threads mean handler_threads.
  std::size_t max_handler_threads = 1024;
  // A handler running one request for this long counts as stuck, blocked or not. The pool grows
  // above handler_threads only to keep handler_threads threads free of stuck handlers, and, once
  // handlers are found stuck, for every request waiting until a handler finishes (threaded
  // transport): a burst of quick requests, which is CPU work, keeps the threads it has, while
  // requests behind handlers that wait on something get threads. Handlers that compute for longer
  // than this grow the pool too. 0: grow as soon as requests wait and every thread is busy.
  std::chrono::nanoseconds pool_growth_delay = std::chrono::milliseconds(1);
  // A thread above handler_threads that has had nothing to do for this long ends.
  std::chrono::nanoseconds idle_thread_timeout = std::chrono::seconds(1);
  // The largest request frame accepted; it is checked on the length prefix, before allocating.
  std::uint32_t max_frame_size = wire::default_max_frame_size;
  // Requests received but not yet answered; beyond either limit a request gets errc::busy.
  std::size_t max_inflight_per_connection = 1024;
  std::size_t max_inflight = 65536;
  // Connections beyond this are refused in the handshake reply and closed (counted by
  // basic_server::refused_connections()).
  std::size_t max_connections = 10000;
  // A peer that has not completed the handshake after this long is disconnected (0: no limit).
  std::chrono::nanoseconds handshake_timeout = std::chrono::seconds(10);
  // A peer that starts a frame and has not finished it after this long is disconnected (0: no
  // limit): a stalled or trickling peer holds a connection, never a thread, and not for long.
  std::chrono::nanoseconds frame_timeout = std::chrono::seconds(30);
  // A peer whose replies wait for its socket to drain, the socket taking none of their bytes for
  // this long, is disconnected (0: no limit): a peer that reads nothing holds its connection and
  // its replies for this long at most. Any byte the socket takes starts the wait again.
  std::chrono::nanoseconds write_timeout = std::chrono::seconds(30);
  // The memory held for replies a peer has not read yet, per connection, counted by what the
  // buffers hold (their capacity), not by the bytes in them. A reply that would need more closes
  // the connection, so that one slow reader cannot hold the server's memory; a single reply larger
  // than this may still wait alone.
  std::size_t max_pending_output = 16u << 20;
  // The memory held by request arguments that wait for a handler thread, on one connection and on
  // the whole server. A request beyond either is answered errc::busy ("rpc server: too many request
  // bytes waiting") and its body is not kept. A request finding none waiting (on its connection,
  // or on the server) is admitted whatever its size, so one of max_frame_size always can be.
  // Requests whose handler runs are bounded by the handler threads, not by these.
  std::size_t max_queued_request_bytes_per_connection = 16u << 20;
  std::size_t max_queued_request_bytes = 256u << 20;
  // The largest metadata block a request may carry (context::with_metadata; its bytes on the wire,
  // docs/protocol.md 4.1): a request with more is answered errc::bad_request and not run. Its
  // bytes count among the request's waiting bytes, as its arguments' do.
  std::size_t max_metadata_bytes = 8u << 10;
  // Whether GET /debug/geerpc on the RPC port serves the debug page, and /debug/geerpc/stats.json
  // its data (docs/protocol.md, "HTTP on the RPC port"); off, both are 404. CONNECT is always served.
  bool debug_page = true;
  // Whether the server keeps statistics of its calls for the debug page: per method, outcomes by
  // error code and latency over the last minute; how long requests wait for a handler thread; the
  // last 100 slow or failed calls; how often each limit turned something away. Cheap (three relaxed
  // atomic adds and four clock reads per call; bench/HISTORY.md has the figure); off, the page
  // shows the methods, what the server holds now and its limits.
  bool statistics = true;
  // A call answered this long or more after it arrived is kept among the last slow calls (0: only
  // failed calls are kept).
  std::chrono::nanoseconds slow_call = std::chrono::milliseconds(100);
  // The threaded transport's performance heuristics (tuning/settings.hpp).
  tuning::settings tuning{};
  // The stream layer, as options::session: null for plain sockets; otherwise every accepted
  // connection gets a session from it (a connection it refuses, by throwing, is closed).
  std::shared_ptr<net::stream_session_factory> session{};
  // The runtime, as options::runtime; the server holds it from listen() until it stops.
  std::shared_ptr<geerpc::runtime> runtime{};
};

GEERPC_END_NAMESPACE
