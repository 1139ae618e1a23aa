// geerpc: how the etcd client reaches etcd: its endpoints and time limit, TLS for https://
// endpoints (libcurl does the TLS: this needs no OpenSSL header and no geerpc::tls), and etcd's v3
// authentication. Every connection the client makes (requests, lease keep-alives, watches) uses
// all of it.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "../config.hpp"
#include "../tls/settings.hpp"  // tls::pem only: plain strings, no OpenSSL

GEERPC_BEGIN_NAMESPACE
namespace etcd {

// A certificate, a key or a CA bundle in PEM: a file (read at each new connection, so a rotated
// file is picked up) or text in memory. The same struct as geerpc::tls uses.
using pem = tls::pem;

// TLS for https:// endpoints. Verification is on unless turned off by the option that says it is
// insecure: etcd's chain is checked against `ca` (or the system's store) and its certificate must
// name the endpoint's host (a DNS name, or the IP address of an IP literal).
struct tls_options {
  pem ca{};  // the CAs to trust instead of the system's store; empty: the system's store
  // For etcd's --client-cert-auth: the client's certificate (chain) and key, both or neither.
  // etcd 3.4's gateway refuses a client certificate with a Common Name once auth is enabled: name
  // the client in its subject alternative names instead.
  pem certificate{};
  pem key{};
  // Accepts any certificate from anyone (an eavesdropper included): for a quick local experiment,
  // never for a network. The connection is still encrypted.
  bool insecure_skip_verification = false;
};

struct options {
  // etcd's client URLs, tried in turn (etcd's --advertise-client-urls): http:// or https://.
  std::vector<std::string> endpoints{"http://127.0.0.1:2379"};
  // How long one call (lease, put, range) may take, the connect included; a watch uses it for its
  // connect only.
  std::chrono::milliseconds request_timeout{1000};
  tls_options tls{};
  // etcd's v3 authentication (etcd auth enable): the client gets a token for this user from
  // /v3/auth/authenticate and sends it with every request and watch, and authenticates again once
  // when etcd says the token is invalid or expired. Empty user: no authentication. The password
  // and the token appear in no error message, and never go out in plaintext: with a user, every
  // endpoint is https:// or on loopback (the gateway refuses others).
  std::string user{};
  std::string password{};
};

}  // namespace etcd
GEERPC_END_NAMESPACE
