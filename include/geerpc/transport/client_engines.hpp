// geerpc: the client engines of every transport, and the operations basic_client and call_future
// ask of them (transport/link.hpp's client_link) defined over them. Header-only programs get this
// through client.hpp; with GEERPC_SEPARATE_COMPILATION only the source file that includes
// <geerpc/implementation.hpp> does (transport/engines.hpp). No server part comes with it.
#pragma once

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
#include "../tuning/automatic.hpp"
#include "../tuning/none.hpp"
#include "blocking/client.hpp"
#include "fwd.hpp"
#include "link.hpp"
#include "threaded/client_receive.hpp"

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

}  // namespace detail
GEERPC_END_NAMESPACE
