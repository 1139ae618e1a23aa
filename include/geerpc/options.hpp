// geerpc: the settings of a client connection and of a server, grouped by concern (timeouts,
// limits, threads, observability, tuning, the runtime), as plain std::chrono values with defaults that suit
// most programs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config.hpp"
#include "debug_page_policy.hpp"
#include "detail/chrono.hpp"
#include "interceptor.hpp"
#include "net/stream_session.hpp"
#include "tuning/settings.hpp"
#include "wire/frame.hpp"

GEERPC_BEGIN_NAMESPACE

class runtime;  // runtime.hpp

// The settings come in groups by concern, each a struct of its own, so that a designated
// initializer names the group and then the setting:
//
//   geerpc::options{.timeouts = {.connect = 2s, .handle = 500ms}}
//   geerpc::server_options{.threads = {.handlers = 4}, .limits = {.max_inflight = 1000},
//                          .timeouts = {.frame = 5s}, .observability = {.debug_page = false}}
//
// Groups, and the settings within a group, are written in the order they are declared here.

// A client connection's timeouts. A zero duration means "no limit", and so, in effect, does one
// too long for the clock (nanoseconds::max()): it saturates at the farthest deadline, never
// overflows.
struct client_timeouts {
  // TCP connect plus the handshake; expiry fails dial() with errc::connect_timeout. A negative
  // timeout has expired before it starts (as a Go net.Dialer's): dial() fails at once with
  // errc::connect_timeout, connecting nothing.
  std::chrono::nanoseconds connect = std::chrono::seconds(10);
  // Sent to the server in the handshake: a request not answered this long after the server read it
  // (time spent waiting for a free handler thread included) is answered with errc::handle_timeout,
  // and its handler is asked to stop through its std::stop_token. Zero or negative: no limit.
  std::chrono::nanoseconds handle{0};
};

// What a client connection accepts from its server.
struct client_limits {
  // The largest reply frame this client reads. Sent in the handshake: the server answers a bigger
  // reply with an error (errc::remote_error) and cuts error texts to fit. At least
  // wire::header_size (20, a reply with no body): a smaller one fails dial() with
  // errc::invalid_argument before connecting.
  std::uint32_t max_frame_size = wire::default_max_frame_size;
};

// For geerpc::dial().
struct options {
  client_timeouts timeouts{};
  client_limits limits{};
  // The threaded transport's performance heuristics: spinning, batching (tuning/settings.hpp); the
  // blocking client's caller spins by `spin` too. The CPUs they plan for are the runtime's
  // (runtime_options::cpus). The defaults suit most programs.
  tuning::settings tuning{};
  // The stream layer between the connection's bytes and its socket: null (the default) for a
  // plain TCP or Unix socket. The seam a TLS layer fills (net/stream_session.hpp,
  // docs/transports.md); its session is made right after the connect, before the handshake.
  std::shared_ptr<net::stream_session_factory> session{};
  // Observability: code that sees every call of this client on its way out and its outcome
  // (interceptor.hpp).
  std::vector<client_interceptor> interceptors{};
  // The runtime whose scheduler fires this client's deadlines and whose CPU budget its heuristics
  // plan for (runtime.hpp); null: the default runtime. The client holds it while it lives.
  std::shared_ptr<geerpc::runtime> runtime{};
};

// A server's threads (threaded transport).
struct server_threads {
  // Reactors: epoll sets, each with its own leader thread and handler pool, over which the
  // connections are spread (round-robin, each staying on its reactor for life). 1 (the default):
  // one epoll set for the whole server; 0: one per two CPUs of the runtime's budget, at least 1 and
  // at most 8. `handlers` is split evenly between the reactors (at least one each: no more reactors
  // than handlers), `max_handlers` is one budget their pools share: one busy connection's blocked
  // handlers may take all of it but the other reactors' cores, while its quick requests run on its
  // reactor's core (docs/transports.md, "Several reactors"). The blocking transport has no reactor
  // and ignores this.
  std::size_t io_threads = 1;
  // Threads that run handlers and never retire (at least 1). One more thread does the I/O, so a
  // server with every handler busy still reads, answers "busy" and fires timeouts.
  std::size_t handlers = 8;
  // While requests wait and every handler thread is busy, the pool grows, one thread at a time, up
  // to this many threads running handlers, in the whole server (its reactors share it): handlers
  // that wait on something slow do not starve a quick call. Values below `handlers` mean `handlers`.
  std::size_t max_handlers = 1024;
  // A handler running one request for this long counts as stuck, blocked or not. The pool grows
  // above `handlers` only to keep `handlers` threads free of stuck handlers, and, once handlers are
  // found stuck, for every request waiting until a handler finishes: a burst of quick requests,
  // which is CPU work, keeps the threads it has, while requests behind handlers that wait on
  // something get threads. Handlers that compute for longer than this grow the pool too. 0: grow
  // as soon as requests wait and every thread is busy.
  std::chrono::nanoseconds growth_delay = std::chrono::milliseconds(1);
  // A thread above `handlers` that has had nothing to do for this long ends.
  std::chrono::nanoseconds idle_timeout = std::chrono::seconds(1);
};

// An adaptive limit on a server's requests in flight, learnt from their latency
// (server/concurrency_limit.hpp, docs/limits.md "Adaptive concurrency"). Off by default. On, a
// request beyond the limit is answered errc::busy at once ("rpc server: busy: over the adaptive
// concurrency limit (<n> calls in flight)"), as one beyond max_inflight is.
struct adaptive_concurrency_limit {
  bool enabled = false;
  // The limit stays within [min_limit, max_limit]; max_limit 0 means limits.max_inflight.
  std::size_t min_limit = 4;
  std::size_t max_limit = 0;
  // Where it starts, before any latency is known.
  std::size_t initial_limit = 32;
  // A window of samples, from which the limit is set again: at least this long, with at least
  // this many requests finished.
  std::chrono::nanoseconds window = std::chrono::milliseconds(100);
  std::size_t min_samples = 32;
  // How much slower than the no-load latency requests may get before the limit shrinks (1.5: half
  // as slow again). Below 1 means 1.
  double tolerance = 1.5;
  // Every this many windows, one (a probe) runs at probe_fraction of the limit to measure the
  // no-load latency again (demand above it is answered busy meanwhile); 0: never, and the no-load
  // latency only ever falls, so a server that turns slower for good keeps the limit at min_limit.
  // A probe lasts at most two window lengths: one that gathered fewer than min_samples by then (long
  // calls held the cut's room) gives the limit back unchanged.
  std::size_t probe_every = 50;
  // The probe's limit, as a fraction of the limit (at least min_limit); outside (0, 1]: 0.5.
  double probe_fraction = 0.5;
};

// What a server holds for its peers, at most.
struct server_limits {
  // The largest request frame accepted; it is checked on the length prefix, before allocating.
  std::uint32_t max_frame_size = wire::default_max_frame_size;
  // Requests received but not yet answered; beyond either limit a request gets errc::busy.
  std::size_t max_inflight_per_connection = 1024;
  std::size_t max_inflight = 65536;
  // Connections beyond this are refused in the handshake reply and closed (counted by
  // basic_server::refused_connections()).
  std::size_t max_connections = 10000;
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
  // Below max_inflight, a limit learnt from latency; off by default (adaptive_concurrency_limit above).
  adaptive_concurrency_limit adaptive_concurrency{};
};

// A server's own limits in time on its peers: zero or negative means no limit (as in Go's
// http.Server), and one too long for the clock (nanoseconds::max()) never fires.
struct server_timeouts {
  // A peer that has not completed the handshake after this long is disconnected; so is one that,
  // once the server's last words to it are out (an HTTP answer, a JSON-RPC stream's last error),
  // has not closed its end after this long (zero: the server closes at once).
  std::chrono::nanoseconds handshake = std::chrono::seconds(10);
  // A peer that starts a frame and has not finished it after this long is disconnected: a stalled
  // or trickling peer holds a connection, never a thread, and not for long.
  std::chrono::nanoseconds frame = std::chrono::seconds(30);
  // A peer whose replies wait for its socket to drain, the socket taking none of their bytes for
  // this long, is disconnected: a peer that reads nothing holds its connection and its replies for
  // this long at most. Any byte the socket takes starts the wait again.
  std::chrono::nanoseconds write = std::chrono::seconds(30);
  // Load shedding by queue time, off by default (zero or negative: no limit). A request that has
  // waited longer than this for a handler thread, from when its frame was read, is answered
  // errc::busy ("rpc server: busy: waited ... for a handler thread") and its handler is not run:
  // the caller may retry elsewhere. A request whose deadline passed while it waited is answered
  // errc::deadline_exceeded without running whatever this says (docs/limits.md, "Admission").
  std::chrono::nanoseconds max_queue_time{0};
  // A call a handler makes inherits the handler's deadline (call_context::handler_deadline()) less
  // a reserve, so that the handler still has time to answer once that call fails: this fraction of
  // the handler's budget (from when its request was read to its deadline), at most
  // downstream_reserve_max. With the defaults a hop of 100 ms or more keeps 1 ms, one of 10 ms keeps
  // 100 µs (docs/timeouts.md, "Across hops"). Zero: the call inherits the deadline itself.
  double downstream_reserve = 0.01;
  std::chrono::nanoseconds downstream_reserve_max = std::chrono::milliseconds(1);
};

// What a server shows of itself.
struct server_observability {
  // Who GET /debug/geerpc on the RPC port serves the debug page to, and /debug/geerpc/stats.json
  // its data (docs/protocol.md, "HTTP on the RPC port"; debug_page_policy.hpp): by default
  // loopback and Unix-socket peers only; debug_page_policy::any() opens it to every peer, off() (or
  // `false`) to none, allow_if(predicate) to those a predicate of one's own admits. A peer refused
  // gets 404, as for a path that does not exist. `true` means local(), not any(). CONNECT (RPC over
  // HTTP) is not the page: it is always served.
  debug_page_policy debug_page{};
  // Who may call the server's methods with JSON-RPC 2.0 over HTTP, POST /rpc on the RPC port
  // (docs/protocol.md section 11; a server whose codecs include json_codec): the same policy as
  // debug_page's, local peers by default; off() turns it off. A peer refused gets 404. Calls made
  // so pass the server's interceptors as any other call: this admits the door, not the caller.
  debug_page_policy http_rpc{};
  // Whether the server keeps statistics of its calls for the debug page: per method, outcomes by
  // error code and latency over the last minute; how long requests wait for a handler thread; the
  // last 100 slow or failed calls; how often each limit turned something away. Cheap (three relaxed
  // atomic adds and four clock reads per call; bench/HISTORY.md has the figure); off, the page
  // shows the methods, what the server holds now and its limits.
  bool statistics = true;
  // A call answered this long or more after it arrived is kept among the last slow calls (0: only
  // failed calls are kept).
  std::chrono::nanoseconds slow_call = std::chrono::milliseconds(100);
};

namespace detail {
// W3C trace context's two headers. (A function: GCC 12 fails on a braced list of strings as the
// member's default, in a template's noexcept check.)
inline std::vector<std::string> trace_context_keys() { return {"traceparent", "tracestate"}; }
}  // namespace detail

// For geerpc::server.
struct server_options {
  server_threads threads{};
  server_limits limits{};
  server_timeouts timeouts{};
  server_observability observability{};
  // The threaded transport's performance heuristics (tuning/settings.hpp).
  tuning::settings tuning{};
  // The stream layer, as options::session: null for plain sockets; otherwise every accepted
  // connection gets a session from it (a connection it refuses, by throwing, is closed).
  std::shared_ptr<net::stream_session_factory> session{};
  // The runtime, as options::runtime; the server holds it from listen() until it stops.
  std::shared_ptr<geerpc::runtime> runtime{};
  // The metadata keys a call a handler makes carries on from the handler's own call, where that call
  // does not set them itself: W3C trace context by default (docs/timeouts.md, "Across hops").
  std::vector<std::string> propagated_metadata = detail::trace_context_keys();
  // A propagated value longer than this many bytes is not carried on: a peer's value (up to the
  // metadata limit) copied into every call would push the next server over its own limit. W3C
  // trace context fits: a traceparent is 55 bytes, a tracestate 512 at most.
  std::size_t propagated_metadata_max = 512;
};

GEERPC_END_NAMESPACE
