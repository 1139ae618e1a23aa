// geerpc: what a TLS client or server is given (the geerpc::tls target, <geerpc/tls.hpp>): plain
// structs, with no OpenSSL type in them, so that code which only fills them in needs no OpenSSL
// header. context.hpp turns them into an SSL_CTX.
#pragma once

#include <string>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace tls {

// A certificate (chain), a private key or a bundle of CA certificates, in PEM: read from a file
// when the connection's context is built (and again at each reload), or given as text.
struct pem {
  std::string path{};  // a file to read; used when `text` is empty
  std::string text{};  // "-----BEGIN ..."

  static pem file(std::string path) { return {std::move(path), {}}; }
  static pem in_memory(std::string text) { return {{}, std::move(text)}; }
  bool empty() const noexcept { return path.empty() && text.empty(); }
};

// The client's side. Verification is on unless turned off by the option that says it is insecure:
// the server's chain is checked against `ca` (or the system's store) and its certificate against
// the host the client dialed (a DNS name, or an IP address for an IP literal).
struct client_settings {
  pem ca{};  // empty: the system's store of trusted CAs (Debian: /etc/ssl/certs)
  // For mutual TLS: the client's certificate (chain) and key; both or neither.
  pem certificate{};
  pem key{};
  // The name the server's certificate must carry, and the SNI sent, instead of the dialed host:
  // for a Unix socket, or a server reached by an address its certificate does not name.
  std::string server_name{};
  // Accepts any certificate from anyone (an eavesdropper included): for a quick local experiment,
  // never for a network. The session still encrypts.
  bool insecure_skip_verification = false;
  // SSL_MODE_RELEASE_BUFFERS: an idle connection gives its record buffers back (about 33 KB a
  // side, measured), at the price of OpenSSL allocating them again for each exchange (about 18
  // allocations more per call). Off for a few busy connections, on for many idle ones. Off, a
  // connection whose last read filled its read buffer keeps that buffer, 64 KiB, while idle.
  bool release_idle_buffers = true;
};

enum class client_certificates {
  none,     // not asked for
  request,  // asked for; a client without one is let in, one with a bad one is refused
  require,  // a client without a valid one is refused
};

// The server's side: its certificate (chain) and key, and, for mutual TLS, the CA its clients'
// certificates must chain to.
struct server_settings {
  pem certificate{};
  pem key{};
  client_certificates clients = client_certificates::none;
  pem client_ca{};                   // needed when `clients` is request or require
  bool release_idle_buffers = true;  // as client_settings::release_idle_buffers
  // Whether every peer must speak TLS. A connection whose first byte does not begin a TLS record
  // is then refused in its own protocol (a geerpc hello gets a handshake refusal that says to dial
  // tls@host:port, an HTTP request a 400), and closed. false: such plaintext peers are served on
  // the same port beside TLS ones, as a server without TLS would serve them.
  bool required = true;
};

}  // namespace tls
GEERPC_END_NAMESPACE
