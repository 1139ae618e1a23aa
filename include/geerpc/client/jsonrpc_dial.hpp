// geerpc: dialing jsonrpc@host:port, a Go net/rpc server served with jsonrpc.ServeConn
// (docs/protocol.md 9.6). The connection is any client's, with a stream session under its engines
// that speaks JSON-RPC 1.0 for them; the session comes from the codec (json_codec's
// make_jsonrpc_client_session), so that the core never depends on geerpc::json, and a client of
// another codec is refused before it connects.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "../config.hpp"
#include "../error.hpp"
#include "../net/address.hpp"
#include "../net/stream_session.hpp"
#include "../options.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// Makes each connection's JSON-RPC session with the codec's maker.
class jsonrpc_session_factory final : public net::stream_session_factory {
 public:
  using maker = std::unique_ptr<net::stream_session> (*)(int fd, std::string_view where);
  jsonrpc_session_factory(maker codec_maker, std::string where) : make_(codec_maker), where_(std::move(where)) {}
  std::unique_ptr<net::stream_session> make(int fd, role) override { return make_(fd, where_); }

 private:
  maker make_;
  std::string where_;
};

// Whether `address` asks for a Go net/rpc/jsonrpc server (whether it is well formed, the dial says).
inline bool is_jsonrpc_address(std::string_view address) noexcept { return address.starts_with("jsonrpc@"); }

// Sets `opts.session` to the JSON-RPC session of a client of Codec, or says why it cannot be: the
// codec is not JSON (Go's server reads JSON only), or options::session is set already (TLS under
// JSON-RPC is not offered).
template <class Codec>
std::optional<error> use_jsonrpc_session(std::string_view address, options& opts) {
  const std::string where = "rpc client: dial " + std::string(address) + ": ";
  if constexpr (requires { Codec::make_jsonrpc_client_session(0, std::string_view()); }) {
    if (opts.session != nullptr)
      return error{make_error_code(errc::invalid_argument),
                   where + "jsonrpc@ speaks plain TCP: options.session (TLS) cannot be used with it"};
    const net::parsed_address parsed = net::parse_address(address);
    const std::string shown = parsed ? net::to_string(*parsed.value) : std::string(address);
    opts.session =
        std::make_shared<jsonrpc_session_factory>(&Codec::make_jsonrpc_client_session, "rpc client: " + shown);
    return std::nullopt;
  } else {
    return error{make_error_code(errc::invalid_argument),
                 where + "jsonrpc@ needs the JSON codec: dial<Transport, geerpc::json_codec>"};
  }
}

}  // namespace detail
GEERPC_END_NAMESPACE
