// geerpc: what a stream layer proved about the peer at the other end of a connection: whether the
// bytes are encrypted, and whether the peer presented a certificate that verified, with the names
// that certificate carries. A plain struct, so that the core, which hands it to handlers
// (call_context::identity()) and to the debug page's policy, holds no type of the layer's (OpenSSL's).
//
// A plain TCP or Unix socket proves nothing: not encrypted, not verified, no names. A TLS
// connection is encrypted; it is verified when the peer's certificate chained to a CA this side
// trusts (a server's client_ca for mutual TLS). The names are filled for a verified certificate
// only: an unverified one's names are anybody's claim.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace net {

struct peer_identity {
  bool encrypted = false;  // the connection's bytes are encrypted (TLS)
  bool verified = false;   // the peer's certificate verified against this side's trusted CAs
  // The certificate's subject, RFC 2253 (most significant part last): "CN=alice,O=Example". UTF-8;
  // OpenSSL escapes what the RFC asks for (',' '+' '"' '\' '<' '>' ';', control characters), and
  // a name that is not valid UTF-8 comes out with all its non-ASCII bytes as "\XX" escapes.
  std::string subject{};
  // Its subject alternative names, each kind in the certificate's order, as their bytes: nothing
  // here promises printable text (show them escaped).
  std::vector<std::string> dns_names{};     // "api.example.com"
  std::vector<std::string> ip_addresses{};  // "10.0.0.7", "2001:db8::7"
  std::vector<std::string> uris{};          // "spiffe://example.org/ns/prod/sa/billing"
  std::vector<std::string> emails{};        // "alice@example.com"

  // Whether the verified certificate carries `name` among its SANs of that kind (exact bytes).
  bool has_dns_name(std::string_view name) const noexcept { return contains(dns_names, name); }
  bool has_uri(std::string_view uri) const noexcept { return contains(uris, uri); }
  bool has_email(std::string_view email) const noexcept { return contains(emails, email); }

 private:
  static bool contains(const std::vector<std::string>& names, std::string_view name) noexcept {
    return std::find(names.begin(), names.end(), name) != names.end();
  }
};

// What a connection without a stream layer proves: nothing. One object for all of them.
inline const peer_identity& no_peer_identity() noexcept {
  static const peer_identity none{};
  return none;
}

}  // namespace net
GEERPC_END_NAMESPACE
