// geerpc: opening a client connection: resolve, connect and handshake, all inside
// options.timeouts.connect (GeeRPC's dialTimeout, but the handshake counts too: a server that
// accepts and then says nothing trips the same timeout).
#pragma once

#include <poll.h>

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../detail/deadline.hpp"
#include "../detail/duration_text.hpp"
#include "../error.hpp"
#include "../net/socket.hpp"
#include "../net/stream.hpp"
#include "../options.hpp"
#include "../wire/handshake.hpp"
#include "../wire/http.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

struct connection_info {
  net::stream stream;
  std::uint32_t server_max_frame_size = 0;
};

inline error connect_timeout_error(const options& opts) {
  return {make_error_code(errc::connect_timeout),
          "rpc client: connect timeout: expect within " + duration_text(opts.timeouts.connect)};
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
    // A session's write that must read first (a TLS handshake waiting for the server's flight)
    // waits for that alone: the socket's room would wake this loop for nothing until it comes.
    if (net::wait_for(stream.fd(), stream.readiness(POLLOUT), deadline) == net::wait_result::timeout)
      return errc::connect_timeout;
  }
  return std::nullopt;
}

// ": <why>" when the stream's session closed the connection itself (a TLS handshake refused),
// for the end of a message; empty otherwise.
inline std::string session_reason(const net::stream& stream) {
  std::string why = stream.why_closed();
  return why.empty() ? why : ": " + why;
}

// An "http@" address: asks for the RPC protocol with an HTTP CONNECT, as GeeRPC's DialHTTP does,
// and reads the answer's head exactly (nothing after it is taken from the stream). Any 2xx status
// is accepted, so Go's net/rpc "200 Connected to Go RPC" is too. Returns nothing on success.
inline std::optional<error> http_connect(net::stream& stream, const std::optional<net::clock::time_point>& deadline,
                                         const options& opts, const std::string& where) {
  static constexpr std::string_view request = "CONNECT /_geerpc_ HTTP/1.0\r\n\r\n";
  auto failed = write_all(stream, std::as_bytes(std::span(request)), deadline);
  if (failed == errc::connect_timeout) return connect_timeout_error(opts);
  if (failed) return error{make_error_code(errc::connect_failed), where + "could not send the HTTP CONNECT"};
  // A byte at a time: the head is a few dozen bytes, read once per connection.
  std::string head;
  for (;;) {
    std::byte byte{};
    failed = read_exactly(stream, std::span(&byte, 1), deadline);
    if (failed == errc::connect_timeout) return connect_timeout_error(opts);
    if (failed)
      return error{make_error_code(errc::connect_failed),
                   where + "connection closed before the answer to HTTP CONNECT"};
    head += static_cast<char>(byte);
    if (head.size() <= 5 && !std::string_view("HTTP/").starts_with(head))
      return error{make_error_code(errc::protocol_error), where + "the answer to HTTP CONNECT is not HTTP"};
    if (head.ends_with("\n\n") || head.ends_with("\n\r\n")) break;
    if (head.size() >= wire::http::max_head)
      return error{make_error_code(errc::protocol_error), where + "the answer to HTTP CONNECT is larger than 8 KiB"};
  }
  std::string_view status_line = std::string_view(head).substr(0, head.find('\n'));
  if (status_line.ends_with('\r')) status_line.remove_suffix(1);
  // "HTTP/1.x 2xx reason"
  const bool two_hundred = status_line.size() >= 12 && status_line[8] == ' ' && status_line[9] == '2' &&
                           status_line[10] >= '0' && status_line[10] <= '9' && status_line[11] >= '0' &&
                           status_line[11] <= '9' && (status_line.size() == 12 || status_line[12] == ' ');
  if (!two_hundred)
    return error{make_error_code(errc::handshake_rejected),
                 where + "the server answered HTTP CONNECT with \"" + std::string(status_line.substr(0, 200)) + "\""};
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
  if (opts.limits.max_frame_size < wire::header_size)
    return error{make_error_code(errc::invalid_argument),
                 "rpc client: options.limits.max_frame_size must be at least " + std::to_string(wire::header_size) +
                     " bytes (a frame header), not " + std::to_string(opts.limits.max_frame_size)};
  return std::nullopt;
}

inline result<connection_info> dial_and_handshake(std::string_view address, const options& opts,
                                                  std::uint8_t codec_id) {
  if (auto invalid = invalid_options(opts)) return std::move(*invalid);
  // 0 is no limit; a negative timeout has expired before it starts, as a Go net.Dialer's does.
  if (opts.timeouts.connect < std::chrono::nanoseconds::zero()) return connect_timeout_error(opts);
  std::optional<net::clock::time_point> deadline;
  if (opts.timeouts.connect > std::chrono::nanoseconds::zero())
    deadline = saturating_deadline(net::clock::now(), opts.timeouts.connect);
  const std::string where = "rpc client: dial " + std::string(address) + ": ";

  const net::parsed_address parsed = net::parse_address(address);
  if (!parsed)
    return error{make_error_code(errc::connect_failed),
                 "rpc client: dial \"" + std::string(address) + "\": " + parsed.error.message()};
  if (parsed.value->tls && opts.session == nullptr)
    return error{make_error_code(errc::invalid_argument),
                 where +
                     "a tls@ address needs options.session set to a TLS client factory "
                     "(geerpc::tls::client(...) from <geerpc/tls.hpp>, the geerpc::tls target)"};
  if (parsed.value->jsonrpc && opts.session == nullptr)  // try_dial sets a JSON codec's session
    return error{make_error_code(errc::invalid_argument),
                 where + "jsonrpc@ needs the JSON codec: dial<Transport, geerpc::json_codec>"};
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
    info.stream = net::make_stream(std::move(fd), opts.session.get(), net::stream_session_factory::role::client,
                                   parsed.value->host);
  } catch (const std::exception& e) {
    return error{make_error_code(errc::connect_failed), where + "stream session: " + e.what()};
  }

  if (parsed.value->http_connect)
    if (auto failed_connect = http_connect(info.stream, deadline, opts, where)) return std::move(*failed_connect);

  std::array<std::byte, wire::hello_size> hello{};
  wire::encode_hello(
      {wire::protocol_version, codec_id, handle_timeout_us(opts.timeouts.handle), opts.limits.max_frame_size}, hello);
  auto failed = write_all(info.stream, hello, deadline);
  if (failed == errc::connect_timeout) return connect_timeout_error(opts);
  if (failed)
    return error{make_error_code(errc::connect_failed),
                 where + "could not send the handshake" + session_reason(info.stream)};

  std::array<std::byte, wire::hello_reply_header_size> header{};
  failed = read_exactly(info.stream, header, deadline);
  if (failed == errc::connect_timeout) return connect_timeout_error(opts);
  if (failed)
    return error{make_error_code(errc::connect_failed),
                 where + "connection closed during the handshake" + session_reason(info.stream)};
  wire::hello_reply reply;
  std::size_t reason_size = 0;
  if (const char* bad = wire::parse_hello_reply_header(header, reply, reason_size))
    return error{make_error_code(errc::protocol_error), where + bad};
  std::vector<std::byte> reason(reason_size);
  failed = read_exactly(info.stream, reason, deadline);
  if (failed == errc::connect_timeout) return connect_timeout_error(opts);
  if (failed)
    return error{make_error_code(errc::connect_failed),
                 where + "connection closed during the handshake" + session_reason(info.stream)};
  if (!reply.accepted && reply.version != wire::protocol_version)
    return error{make_error_code(errc::handshake_rejected),
                 "rpc client: handshake rejected: the server speaks geerpc protocol version " +
                     std::to_string(reply.version) + ", this client " + std::to_string(wire::protocol_version) +
                     " (its reason: " + std::string(reinterpret_cast<const char*>(reason.data()), reason.size()) + ")"};
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
