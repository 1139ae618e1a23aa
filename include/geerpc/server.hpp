// geerpc: the server.
//
//   geerpc::server server;                       // or geerpc::server server({.threads = {.handlers = 4}});
//   server.add<FooApi>(foo);                     // every method of FooApi, bound to `foo`
//   std::string address = server.listen("127.0.0.1:0");  // serves in the background
//   ...
//   server.shutdown(5s);                         // graceful: calls in flight get 5 s to finish
//   server.stop();                               // at once; also done by the destructor
#pragma once

#ifndef GEERPC_OUTERMOST_ENTRY
#define GEERPC_OUTERMOST_ENTRY 6  // this header ends the internal macros' scope
#endif

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "codec/binary.hpp"
#include "config.hpp"
#include "detail/chrono.hpp"
#include "detail/deadline.hpp"
#include "error.hpp"
#include "interceptor.hpp"
#include "options.hpp"
#include "server/context.hpp"
#include "server/describe.hpp"
#include "server/dispatcher.hpp"
#include "server/frame_translator.hpp"
#include "transport/fwd.hpp"
#include "transport/link.hpp"
#include "wire/frame.hpp"

GEERPC_BEGIN_NAMESPACE

template <class Transport, class Codec = binary_codec>
class basic_server {
  using link = detail::server_link<Transport>;

 public:
  using transport_type = Transport;
  using codec_type = Codec;

  explicit basic_server(server_options opts = {}) {
    // Every frame has a header: a smaller limit would close every connection at its first request.
    if (opts.limits.max_frame_size < wire::header_size)
      throw rpc_error(errc::invalid_argument, "rpc server: options.limits.max_frame_size must be at least " +
                                                  std::to_string(wire::header_size) + " bytes (a frame header), not " +
                                                  std::to_string(opts.limits.max_frame_size));
    context_.config.set_options(std::move(opts));
    context_.config.set_handlers(&handlers_, detail::codec_ids::of(detail::codec_list_t<Codec>{}));
    context_.config.set_translation(detail::translation_of(detail::codec_list_t<Codec>{}));
    // geerpc.Describe (server/describe.hpp), for the peers the debug page's policy admits.
    handlers_.template add_builtin<detail::codec_list_t<Codec>, detail::builtin_service>(&describer_);
  }
  ~basic_server() { stop(); }

  basic_server(const basic_server&) = delete;
  basic_server& operator=(const basic_server&) = delete;

  // Registers every method of Service, bound to `impl`, which must outlive the server. Before listen().
  template <class Service>
  requires(!std::is_void_v<typename Service::impl_type>) void add(typename Service::impl_type& impl) {
    check_not_listening();
    handlers_.template add<detail::codec_list_t<Codec>, Service>(&impl);
  }
  // For a service whose handlers are all free functions or lambdas.
  template <class Service>
  requires std::is_void_v<typename Service::impl_type>
  void add() {
    check_not_listening();
    handlers_.template add<detail::codec_list_t<Codec>, Service, void>(nullptr);
  }

  // Adds an interceptor (interceptor.hpp): its `before` sees every call before its handler runs and
  // may refuse it, its `after` every call's outcome. In the order added; before listen().
  void use(server_interceptor interceptor) {
    check_not_listening();
    context_.config.add_interceptor(std::move(interceptor));
  }

  // Binds `address` ("host:port", "[v6]:port", "tcp@..." or "unix@/path/to.sock"; port 0 picks a
  // free one), starts serving in the background and returns the address to dial: the bound
  // "host:port", or a Unix socket's address as given. A stale socket file (its server died) is
  // replaced; a live server's is not (std::errc::address_in_use). stop() removes the file.
  // A server that was stopped (stop() or shutdown() returned) may listen again, with its services.
  std::string listen(std::string_view address) {
    check_not_listening();
    engine_.reset();  // a stopped engine, whose threads are joined
    // Statistics for the services registered now; kept, and added to, when it listens again.
    context_.config.keep_statistics(handlers_.methods().size());
    std::string bound;
    engine_ = link::listen(context_, address, bound);
    stopped_.store(false);
    address_ = std::move(bound);
    return address_;
  }

  // Stops accepting, closes every connection (pending calls on its clients fail with
  // connection_closed), asks running handlers to stop through their std::stop_token and joins every
  // thread the server started. A handler that ignores its stop_token delays this until it returns.
  void stop() {
    if (!engine_) return;
    link::stop(*engine_);
    if (link::on_own_thread(*engine_)) return;  // from a handler it has only begun
    context_.connections.wait_empty();
    context_.config.set_serving(false);
    stopped_.store(true);
  }

  // Stops gracefully: the listening socket closes at once (new dials are refused); every client is
  // sent a goaway frame (docs/protocol.md 4.9), after which its new calls fail at once with
  // errc::going_away, and requests that still arrive are answered errc::going_away without
  // running (safe to send elsewhere). Calls in flight run to completion, and their replies reach
  // their sockets, until `drain` has passed; then those left are answered errc::aborted and their
  // handlers' stop_tokens fire, and the connections close (what their sockets have not taken of a
  // reply is lost then: a peer that stops reading holds the shutdown to `drain`). Returns when
  // every thread the server started has ended, as stop() does. Called from a handler, it waits for
  // that handler too, until `drain`; then it only begins the stop (see stop()).
  template <class Rep, class Period>
  void shutdown(std::chrono::duration<Rep, Period> drain) {
    if (!engine_) return;
    link::shutdown(*engine_, context_, detail::saturating_deadline(std::chrono::steady_clock::now(), drain));
    if (link::on_own_thread(*engine_)) return;
    context_.connections.wait_empty();
    context_.config.set_serving(false);
    stopped_.store(true);
  }

  const std::string& address() const noexcept { return address_; }
  std::size_t connection_count() const { return engine_ ? link::connection_count(*engine_) : 0; }
  // The open connections of each reactor (threaded transport: server_options.threads.io_threads of
  // them); one number for the blocking transport; empty while not listening.
  std::vector<std::size_t> reactor_connections() const {
    return engine_ ? link::reactor_connections(*engine_) : std::vector<std::size_t>{};
  }
  std::size_t inflight() const noexcept { return context_.requests.inflight(); }
  // The calls in flight server_options.limits.adaptive_concurrency allows now (0: it is off).
  std::size_t adaptive_concurrency_limit() const noexcept {
    return context_.adaptive.enabled() ? context_.adaptive.limit() : 0;
  }
  // Memory held for replies that peers have not read yet: now, and the most at once since the
  // server was made (server_options.limits.max_pending_output bounds each connection's share).
  std::size_t pending_output_bytes() const noexcept { return context_.output.now(); }
  std::size_t pending_output_peak() const noexcept { return context_.output.peak(); }
  // Memory held by request arguments waiting for a handler (server_options.limits.max_queued_request_bytes
  // bounds it).
  std::size_t queued_request_bytes() const noexcept { return context_.requests.queued_bytes(); }
  // The threads serving now (threaded transport: the handler pool), and how many times the system
  // refused to start one (the pool then keeps queueing on the threads it has).
  std::size_t thread_count() const { return engine_ ? link::thread_count(*engine_) : 0; }
  std::size_t thread_start_failures() const { return engine_ ? link::thread_start_failures(*engine_) : 0; }
  // Connections refused in the handshake reply since the server was made: a bad hello, past
  // max_connections, or (blocking transport) no thread could be started for it; and those closed
  // at once because there was no memory for their state.
  std::size_t refused_connections() const noexcept { return context_.refused.count(); }

 private:
  // Services, interceptors and listen() wait for a server that is not serving: never made to
  // listen, or stopped by a stop() or shutdown() that returned from outside its handlers (one
  // called from a handler only begins the stop, and its threads still run).
  void check_not_listening() const {
    if (engine_ && !stopped_.load())
      throw rpc_error(errc::invalid_argument,
                      "rpc server: add services and interceptors, and listen, while not serving (a stop "
                      "begun by a handler ends with a stop() from outside)");
  }

  detail::dispatcher handlers_;
  detail::describer describer_{handlers_};  // geerpc.Describe's handler
  detail::server_context context_;
  typename link::handle engine_;
  std::atomic<bool> stopped_{false};  // engine_ has stopped, its threads joined: listen() may start another
  std::string address_;
};

using server = basic_server<threaded>;

GEERPC_END_NAMESPACE

// The engines, unless this program compiles them once elsewhere (transport/link.hpp).
#if !defined(GEERPC_SEPARATE_COMPILATION) || defined(GEERPC_IMPLEMENTATION)
#include "transport/server_engines.hpp"
#endif

#if GEERPC_OUTERMOST_ENTRY == 6
#include "detail/macro_unscope.hpp"
#endif
