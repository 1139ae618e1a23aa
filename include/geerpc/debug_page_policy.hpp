// geerpc: who may open a server's debug page (server_options.observability.debug_page,
// docs/debug_page.md): nobody, local peers and those that passed mutual TLS (the default), any
// peer, or a predicate of one's own over what the server knows of the peer (debug_peer). It is asked only when an HTTP
// request for the page or its JSON arrives (server/http_door.hpp), or a call of the built-in geerpc.Describe
// (server/describe.hpp), never on another call's path; a peer it refuses gets the same 404 as a path that does not
// exist, and the same error for geerpc.Describe as for a service that does not exist. CONNECT /_geerpc_ (RPC over HTTP)
// is not the debug page: no policy applies to it. The same type says who may call methods with
// JSON-RPC over HTTP (POST /rpc: server_options.observability.http_rpc), asked for that path only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <functional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "config.hpp"
#include "net/peer_identity.hpp"

GEERPC_BEGIN_NAMESPACE

// What the server knows of a peer asking for the debug page: where it connects from and, through
// a stream layer (TLS), what it proved. More may be added here, as new fields, so a predicate that
// reads the fields it needs keeps compiling.
struct debug_peer {
  // As the page shows it: "127.0.0.1:53124", "[::1]:53124"; "unix@" for a Unix-socket client
  // (one that bound a name of its own: "unix@/its/name", or "unix@@name" for an abstract one);
  // empty when the system could not say (the peer is then not local). A view of the connection's
  // own text, valid during the predicate's call only: copy it to keep it.
  std::string_view address{};
  bool loopback = false;     // TCP from 127.0.0.0/8, ::1 or an IPv4-mapped ::ffff:127.x.y.z
  bool unix_socket = false;  // a Unix-domain socket: a process on this machine
  // What the connection's stream layer proved (net/peer_identity.hpp), as identity() gives it;
  // null: nothing (a plain connection). Valid during the predicate's call only, as `address`.
  const net::peer_identity* proven = nullptr;

  // The peer's identity: for mutual TLS, verified, with its certificate's subject and SANs.
  const net::peer_identity& identity() const noexcept { return proven != nullptr ? *proven : net::no_peer_identity(); }
  // On this machine: a loopback or Unix-socket peer.
  bool local() const noexcept { return loopback || unix_socket; }
  // Passed mutual TLS: its client certificate verified against the server's client CA.
  bool mutual_tls() const noexcept { return identity().verified; }
};

// server_options.observability.debug_page. `true` means local() and `false` off(), so that
// `.observability = {.debug_page = false}` reads as it always did; `true` never means any(): a page
// that lists methods, peers and failures' messages is opened to the network only by saying so.
class debug_page_policy {
 public:
  enum class kind { off, local, any, predicate };

  debug_page_policy() noexcept = default;  // local()
  template <std::same_as<bool> Bool>       // bool only: 0, a pointer or a string is not a policy
  debug_page_policy(Bool on) noexcept : kind_(on ? kind::local : kind::off) {}

  static debug_page_policy off() noexcept { return debug_page_policy(kind::off); }
  // Loopback and Unix-socket peers, and any peer that passed mutual TLS (debug_peer::mutual_tls():
  // whoever holds a client certificate the server's client CA signed may see the page). A local
  // proxy or tunnel that forwards others' connections makes them local too.
  static debug_page_policy local() noexcept { return debug_page_policy(kind::local); }
  static debug_page_policy any() noexcept { return debug_page_policy(kind::any); }
  // Serves the peers `allow(peer)` returns true for. It runs on the thread that reads the
  // connection, possibly on several at once (one per reactor): it must be quick, must not block,
  // and must be safe to call concurrently. While it runs, the other connections of its reactor
  // are not read (a blocking predicate can make their frame and handshake timeouts drop them), and
  // it must not call into the server (stop(), for one). An exception from it refuses the peer.
  template <class Predicate>
  requires std::is_invocable_r_v<bool, Predicate&, const debug_peer&>
  static debug_page_policy allow_if(Predicate allow) {
    debug_page_policy policy(kind::predicate);
    policy.allow_ = std::move(allow);
    return policy;
  }

  kind mode() const noexcept { return kind_; }

  bool allows(const debug_peer& peer) const noexcept {
    switch (kind_) {
      case kind::off:
        return false;
      case kind::local:
        return peer.local() || peer.mutual_tls();
      case kind::any:
        return true;
      case kind::predicate:
        break;
    }
    try {
      return allow_ && allow_(peer);
    } catch (...) {
      return false;
    }
  }

 private:
  explicit debug_page_policy(kind k) noexcept : kind_(k) {}

  kind kind_ = kind::local;
  std::function<bool(const debug_peer&)> allow_{};
};

namespace detail {

// Whether `host`, an IP address's text without brackets or port, is a loopback address:
// 127.0.0.0/8, ::1, or ::ffff:127.x.y.z (an IPv4 peer of a dual-stack socket). Anything else,
// text that is no address included, is not.
inline bool loopback_host(std::string_view host) noexcept {
  char text[INET6_ADDRSTRLEN + 1] = {};
  if (host.empty() || host.size() >= sizeof text) return false;
  std::copy(host.begin(), host.end(), text);
  in_addr v4{};
  if (::inet_pton(AF_INET, text, &v4) == 1) return reinterpret_cast<const unsigned char*>(&v4.s_addr)[0] == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, text, &v6) != 1) return false;
  const unsigned char* const b = v6.s6_addr;
  const bool ten_zeros = std::all_of(b, b + 10, [](unsigned char c) { return c == 0; });
  if (ten_zeros && b[10] == 0xff && b[11] == 0xff) return b[12] == 127;  // IPv4-mapped
  return ten_zeros && b[10] == 0 && b[11] == 0 && b[12] == 0 && b[13] == 0 && b[14] == 0 && b[15] == 1;
}

// What a peer's address text (net::endpoint_text's forms: "host:port", "[v6]:port", "unix@...")
// says of it, with what its connection `proved` (null: nothing). A pure function of its arguments:
// the page's locality is decided here and nowhere else.
inline debug_peer debug_peer_of(std::string_view address, const net::peer_identity* proved = nullptr) noexcept {
  debug_peer peer{address};
  peer.proven = proved;
  if (address.starts_with("unix@")) {
    peer.unix_socket = true;
    return peer;
  }
  std::string_view host;
  if (address.starts_with('[')) {
    const std::size_t end = address.find("]:");
    if (end == std::string_view::npos) return peer;
    host = address.substr(1, end - 1);
  } else {
    const std::size_t colon = address.rfind(':');
    if (colon == std::string_view::npos) return peer;
    host = address.substr(0, colon);
  }
  peer.loopback = loopback_host(host);
  return peer;
}

}  // namespace detail
GEERPC_END_NAMESPACE
