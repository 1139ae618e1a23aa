// geerpc: the server engines of every transport, and the operations basic_server asks of them
// (transport/link.hpp's server_link) defined over them. Header-only programs get this through
// server.hpp; with GEERPC_SEPARATE_COMPILATION only the source file that includes
// <geerpc/implementation.hpp> does (transport/engines.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../runtime.hpp"
#include "../scheduler/deadline_scheduler.hpp"
#include "../server/connection.hpp"
#include "../server/context.hpp"
#include "../tuning/automatic_server.hpp"
#include "../tuning/none.hpp"
#include "blocking/server.hpp"
#include "fwd.hpp"
#include "link.hpp"
#include "threaded/server.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

template <class Transport>
void server_link<Transport>::destroy(engine* e) noexcept {
  delete e;
}

template <class Transport>
typename server_link<Transport>::handle server_link<Transport>::listen(server_context& context,
                                                                       std::string_view address, std::string& bound) {
  context.config.bind_runtime();
  // A fresh estimate for each listen: the server may have changed since (it has the same options).
  context.adaptive.configure(context.config.options().limits.adaptive_concurrency,
                             context.config.options().limits.max_inflight);
  handle e(new engine(context));
  bound = e->listen(address);
  context.config.set_serving(true);  // until basic_server has seen the engine stop
  return e;
}

template <class Transport>
void server_link<Transport>::stop(engine& e) {
  e.stop();
}

template <class Transport>
std::size_t server_link<Transport>::connection_count(const engine& e) {
  return e.connection_count();
}

template <class Transport>
std::vector<std::size_t> server_link<Transport>::reactor_connections(const engine& e) {
  if constexpr (requires { e.reactor_connections(); })
    return e.reactor_connections();
  else
    return {e.connection_count()};
}

template <class Transport>
std::size_t server_link<Transport>::thread_count(const engine& e) {
  if constexpr (requires { e.thread_count(); })
    return e.thread_count();
  else
    return 0;
}

template <class Transport>
void server_link<Transport>::shutdown(engine& e, server_context& context,
                                      std::chrono::steady_clock::time_point drain_deadline) {
  struct not_draining_at_end {
    server_context& context;
    ~not_draining_at_end() { context.drain.end(); }
  } guard{context};
  if (e.stop_accepting()) {
    context.drain.begin();
    e.for_each_connection([](server_connection& connection) { connection.go_away(); });
    if (!context.wait_drained_and_sent(drain_deadline))
      e.for_each_connection([](server_connection& connection) { connection.abort_inflight(); });
  }
  e.stop();
}

template <class Transport>
bool server_link<Transport>::on_own_thread(const engine& e) {
  return e.on_own_thread();
}

template <class Transport>
std::size_t server_link<Transport>::thread_start_failures(const engine& e) {
  if constexpr (requires { e.thread_start_failures(); })
    return e.thread_start_failures();
  else
    return 0;
}

}  // namespace detail
GEERPC_END_NAMESPACE
