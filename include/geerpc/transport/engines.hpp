// geerpc: the engines of every transport, and the operations the front classes ask of them
// (transport/link.hpp) defined over them. Header-only programs get this through client.hpp and
// server.hpp; with GEERPC_SEPARATE_COMPILATION only the source file that includes
// <geerpc/implementation.hpp> does, and compiles the standard transports' engines there, once.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "../client/call.hpp"
#include "../client/dial.hpp"
#include "../config.hpp"
#include "../context.hpp"
#include "../error.hpp"
#include "../options.hpp"
#include "../scheduler/deadline_scheduler.hpp"
#include "../server/connection.hpp"
#include "../server/context.hpp"
#include "link.hpp"
#include "policies.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

template <class Transport>
result<std::shared_ptr<typename client_link<Transport>::engine>> client_link<Transport>::open(std::string_view address,
                                                                                              const options& opts,
                                                                                              std::uint8_t codec_id) {
  auto connection = dial_and_handshake(address, opts, codec_id);
  if (!connection) return connection.error();
  try {
    return std::make_shared<engine>(std::move(connection).value(), opts);
  } catch (const std::system_error& e) {  // the system refused the connection's receiving thread
    return error{make_error_code(errc::connect_failed),
                 "rpc client: dial " + std::string(address) + ": cannot start a thread: " + e.code().message()};
  }
}

template <class Transport>
call_outcome client_link<Transport>::call(engine& e, const context& ctx, std::span<std::byte> frame,
                                          const reply_sink& reply) {
  return e.call(ctx, frame, reply);
}

template <class Transport>
std::unique_ptr<async_state> client_link<Transport>::start(const std::shared_ptr<engine>& e, const context& ctx,
                                                           std::span<std::byte> frame, completion_hook hook) {
  if constexpr (Transport::supports_async) {
    auto state = std::make_unique<async_call<engine>>(e, std::move(hook));
    e->start(*state, ctx, frame);
    return state;
  } else {  // basic_client refuses this at compile time; here for the explicit instantiation
    return std::make_unique<finished_call>(
        call_outcome::failure(errc::invalid_argument, "geerpc: this transport has no asynchronous calls"));
  }
}

template <class Transport>
std::uint32_t client_link<Transport>::server_max_frame_size(const engine& e) noexcept {
  return e.server_max_frame_size();
}

template <class Transport>
void client_link<Transport>::close(engine& e) {
  e.close();
}

template <class Transport>
bool client_link<Transport>::is_open(const engine& e) {
  return e.is_open();
}

template <class Transport>
bool client_link<Transport>::on_own_thread(const engine& e) {
  return e.on_own_thread();
}

template <class Transport>
void server_link<Transport>::destroy(engine* e) noexcept {
  delete e;
}

template <class Transport>
typename server_link<Transport>::handle server_link<Transport>::listen(server_context& context,
                                                                       std::string_view address, std::string& bound) {
  context.scheduler = deadline_scheduler::shared();
  handle e(new engine(context));
  bound = e->listen(address);
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
    ~not_draining_at_end() { context.draining.store(false); }
  } guard{context};
  if (e.stop_accepting()) {
    context.draining.store(true);
    e.for_each_connection([](server_connection& connection) { connection.go_away(); });
    if (!context.wait_drained(drain_deadline))
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

#if defined(GEERPC_SEPARATE_COMPILATION) && defined(GEERPC_IMPLEMENTATION)
// The one place a program built with GEERPC_SEPARATE_COMPILATION compiles these
// (<geerpc/implementation.hpp>).
template struct client_link<threaded>;
template struct client_link<basic_threaded<tuning::none>>;
template struct client_link<blocking>;
template struct server_link<threaded>;
template struct server_link<basic_threaded<tuning::none>>;
template struct server_link<blocking>;
#endif

}  // namespace detail
GEERPC_END_NAMESPACE
