// geerpc: opening a client connection: resolve, connect and handshake, all inside
// options.connect_timeout (GeeRPC's dialTimeout, but the handshake counts too: a server that
// accepts and then says nothing trips the same timeout).
#pragma once

#include <poll.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../detail/deadline.hpp"
#include "../detail/duration_text.hpp"
#include "../error.hpp"
#include "../net/socket.hpp"
#include "../net/stream.hpp"
#include "../options.hpp"
#include "../wire/handshake.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

struct connection_info {
  net::stream stream;
  std::uint32_t server_max_frame_size = 0;
};

inline error connect_timeout_error(const options& opts) {
  return {make_error_code(errc::connect_timeout),
          "rpc client: connect timeout: expect within " + duration_text(opts.connect_timeout)};
}

// Reads exactly out.size() bytes before the deadline; never more, so nothing after the handshake
// reply is taken from the stream. Returns nothing on success, else why it stopped.
inline std::optional<errc> read_exactly(net::stream& stream, std::span<std::byte> out,
                                        const std::optional<net::clock::time_point>& deadline) {
  std::size_t have = 0;
  while (have < out.size()) {
    const net::io_result r = stream.read_some(out.subspan(have));
    switch (r.status) {
      case net::io_status::data:
        have += r.bytes;
        continue;
      case net::io_status::closed:
        return errc::connection_closed;
      case net::io_status::would_block:
        break;
    }
    if (net::wait_for(stream.fd(), static_cast<short>(POLLIN | stream.wants()), deadline) == net::wait_result::timeout)
      return errc::connect_timeout;
  }
  return std::nullopt;
}

// Writes all of `data` before the deadline (a session may need to wait, a fresh plain socket never
// does). Returns nothing on success, else why it stopped.
inline std::optional<errc> write_all(net::stream& stream, std::span<const std::byte> data,
                                     const std::optional<net::clock::time_point>& deadline) {
  while (!data.empty()) {
    const net::io_result r = stream.write_some(data);
    switch (r.status) {
      case net::io_status::data:
        data = data.subspan(r.bytes);
        continue;
      case net::io_status::closed:
        return errc::connection_closed;
      case net::io_status::would_block:
        break;
    }
    if (net::wait_for(stream.fd(), static_cast<short>(POLLOUT | stream.wants()), deadline) == net::wait_result::timeout)
      return errc::connect_timeout;
  }
  return std::nullopt;
}

// As the hello carries it: whole microseconds rounded up; zero or negative means no limit.
// nanoseconds::max() fits: it is about 9.2e15 microseconds.
inline std::uint64_t handle_timeout_us(std::chrono::nanoseconds timeout) {
  if (timeout <= std::chrono::nanoseconds::zero()) return 0;
  return static_cast<std::uint64_t>(std::chrono::ceil<std::chrono::microseconds>(timeout).count());
}

// Options no connection could work with, refused before anything is sent: nothing would reach the
// server that it could not answer.
inline std::optional<error> invalid_options(const options& opts) {
  // Every frame has a header: a smaller limit would make every reply break the connection.
  if (opts.max_frame_size < wire::header_size)
    return error{make_error_code(errc::invalid_argument),
                 "rpc client: options.max_frame_size must be at least " + std::to_string(wire::header_size) +
                     " bytes (a frame header), not " + std::to_string(opts.max_frame_size)};
  return std::nullopt;
}

inline result<connection_info> dial_and_handshake(std::string_view address, const options& opts,
                                                  std::uint8_t codec_id) {
  if (auto invalid = invalid_options(opts)) return std::move(*invalid);
  // 0 is no limit; a negative timeout has expired before it starts, as a Go net.Dialer's does.
  if (opts.connect_timeout < std::chrono::nanoseconds::zero()) return connect_timeout_error(opts);
  std::optional<net::clock::time_point> deadline;
  if (opts.connect_timeout > std::chrono::nanoseconds::zero())
    deadline = saturating_deadline(net::clock::now(), opts.connect_timeout);
  const std::string where = "rpc client: dial " + std::string(address) + ": ";

  const net::parsed_address parsed = net::parse_address(address);
  if (!parsed)
    return error{make_error_code(errc::connect_failed),
                 "rpc client: dial \"" + std::string(address) + "\": " + parsed.error.message()};
  std::string why;
  const auto endpoint = net::resolve(*parsed.value, why);
  if (!endpoint) return error{make_error_code(errc::connect_failed), where + why};
  int err = 0;
  connection_info info;
  net::unique_fd fd = net::connect_before(*endpoint, deadline, err);
  if (err == ETIMEDOUT && deadline && net::clock::now() >= *deadline) return connect_timeout_error(opts);
  if (!fd) return error{make_error_code(errc::connect_failed), where + net::errno_text(err)};
  // The stream layer's session (TLS's SSL_connect runs as the hello below goes through it).
  try {
    info.stream = net::make_stream(std::move(fd), opts.session.get(), net::stream_session_factory::role::client);
  } catch (const std::exception& e) {
    return error{make_error_code(errc::connect_failed), where + "stream session: " + e.what()};
  }

  std::array<std::byte, wire::hello_size> hello{};
  wire::encode_hello({wire::protocol_version, codec_id, handle_timeout_us(opts.handle_timeout), opts.max_frame_size},
                     hello);
  auto failed = write_all(info.stream, hello, deadline);
  if (failed == errc::connect_timeout) return connect_timeout_error(opts);
  if (failed) return error{make_error_code(errc::connect_failed), where + "could not send the handshake"};

  std::array<std::byte, wire::hello_reply_header_size> header{};
  failed = read_exactly(info.stream, header, deadline);
  if (failed == errc::connect_timeout) return connect_timeout_error(opts);
  if (failed) return error{make_error_code(errc::connect_failed), where + "connection closed during the handshake"};
  wire::hello_reply reply;
  std::size_t reason_size = 0;
  if (const char* bad = wire::parse_hello_reply_header(header, reply, reason_size))
    return error{make_error_code(errc::protocol_error), where + bad};
  std::vector<std::byte> reason(reason_size);
  failed = read_exactly(info.stream, reason, deadline);
  if (failed == errc::connect_timeout) return connect_timeout_error(opts);
  if (failed) return error{make_error_code(errc::connect_failed), where + "connection closed during the handshake"};
  if (!reply.accepted)
    return error{
        make_error_code(errc::handshake_rejected),
        "rpc client: handshake rejected: " + std::string(reinterpret_cast<const char*>(reason.data()), reason.size())};
  if (reply.max_frame_size < wire::header_size)
    return error{make_error_code(errc::protocol_error), where + "server announced an unusable frame size limit"};
  info.server_max_frame_size = reply.max_frame_size;
  return info;
}

}  // namespace detail
GEERPC_END_NAMESPACE
