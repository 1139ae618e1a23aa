// geerpc: the SSL_CTX a client or a server makes its sessions from, built from settings.hpp's
// structs. A context is never changed once built: sessions made from it share it, and a server's
// reload builds a new one (factories.hpp). SSL_new takes a reference to its context, so a session
// keeps the context it began with alive, whatever the factory swaps in later.
#pragma once

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>

#include "../config.hpp"
#include "errors.hpp"
#include "settings.hpp"

GEERPC_BEGIN_NAMESPACE
namespace tls {

// The one application protocol both sides speak, sent and required in ALPN.
inline constexpr std::string_view alpn_protocol = "geerpc/1";
// What a browser or curl offers (beside h2), which a server also accepts: such a connection goes
// through the HTTP door only (the debug page over HTTPS).
inline constexpr std::string_view http_alpn_protocol = "http/1.1";

struct context_deleter {
  void operator()(SSL_CTX* ctx) const noexcept { SSL_CTX_free(ctx); }
};
using context_ptr = std::shared_ptr<SSL_CTX>;

namespace detail {

// alpn_protocol as ALPN's wire form: a length byte, then the name.
inline constexpr unsigned char alpn_wire[] = {8, 'g', 'e', 'e', 'r', 'p', 'c', '/', '1'};
// What a server selects from, in its order of preference: geerpc/1, then http/1.1.
inline constexpr unsigned char server_alpn_wire[] = {8, 'g', 'e', 'e', 'r', 'p', 'c', '/', '1',
                                                     8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

struct bio_deleter {
  void operator()(BIO* bio) const noexcept { BIO_free(bio); }
};
struct x509_deleter {
  void operator()(X509* x) const noexcept { X509_free(x); }
};
struct key_deleter {
  void operator()(EVP_PKEY* key) const noexcept { EVP_PKEY_free(key); }
};
using bio_ptr = std::unique_ptr<BIO, bio_deleter>;
using x509_ptr = std::unique_ptr<X509, x509_deleter>;

// The PEM text of `source`, read from its file when it has no text.
inline std::string pem_text(const pem& source, const std::string& what) {
  if (!source.text.empty()) return source.text;
  std::ifstream in(source.path, std::ios::binary);
  if (!in) throw tls_error("tls: " + what + ": cannot read " + source.path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline bio_ptr memory_bio(const std::string& text) {
  bio_ptr bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  check(bio != nullptr, "cannot make a memory BIO");
  return bio;
}

// Every certificate in `text`, in order; throws if there is none.
template <class Each>
void each_certificate(const std::string& text, const std::string& what, Each&& each) {
  bio_ptr bio = memory_bio(text);
  int count = 0;
  while (x509_ptr cert{PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)}) {
    each(std::move(cert));
    ++count;
  }
  ERR_clear_error();  // the end of the text reads as "no start line"
  if (count == 0) throw tls_error("tls: " + what + ": no PEM certificate found");
}

// The certificate chain (leaf first) and its private key; checks that they match.
inline void use_identity(SSL_CTX* ctx, const pem& certificate, const pem& key, const std::string& who) {
  bool leaf = true;
  each_certificate(pem_text(certificate, who + " certificate"), who + " certificate", [&](x509_ptr cert) {
    if (leaf)
      check(SSL_CTX_use_certificate(ctx, cert.get()) == 1, who + " certificate");
    else
      check(SSL_CTX_add1_chain_cert(ctx, cert.get()) == 1, who + " certificate chain");
    leaf = false;
  });
  const std::string key_text = pem_text(key, who + " key");
  bio_ptr bio = memory_bio(key_text);
  std::unique_ptr<EVP_PKEY, key_deleter> pkey(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  check(pkey != nullptr, who + " key: no PEM private key");
  check(SSL_CTX_use_PrivateKey(ctx, pkey.get()) == 1, who + " key");
  check(SSL_CTX_check_private_key(ctx) == 1, who + " key does not match its certificate");
}

// Trusts the CAs in `ca`; for a server, also names them to clients as acceptable issuers.
inline void trust(SSL_CTX* ctx, const pem& ca, const std::string& what, bool name_to_clients) {
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  each_certificate(pem_text(ca, what), what, [&](x509_ptr cert) {
    check(X509_STORE_add_cert(store, cert.get()) == 1, what);
    if (name_to_clients) check(SSL_CTX_add_client_CA(ctx, cert.get()) == 1, what);
  });
}

// What every context has: TLS 1.2 or later, no renegotiation, partial writes from a buffer that
// may move (the combining writer retries the rest from another), no compression; and, if asked,
// buffers freed while a connection is idle.
inline context_ptr new_context(const SSL_METHOD* method, bool release_idle_buffers) {
  context_ptr ctx(SSL_CTX_new(method), context_deleter{});
  check(ctx != nullptr, "cannot make an SSL_CTX");
  check(SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION) == 1, "cannot require TLS 1.2");
  SSL_CTX_set_options(ctx.get(), SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (release_idle_buffers) SSL_CTX_set_mode(ctx.get(), SSL_MODE_RELEASE_BUFFERS);
  // A read returns after a record that carries no data (a KeyUpdate), as would_block: with
  // AUTO_RETRY it went on consuming such records, the session's lock held, for as long as a peer
  // sent them. The engines' level-triggered waits see the rest of the socket's bytes again.
  SSL_CTX_clear_mode(ctx.get(), SSL_MODE_AUTO_RETRY);
  return ctx;
}

// The server's ALPN choice: geerpc/1 when the client offers it, else http/1.1 (SSL_select_next_proto
// goes by the server's order); neither: the handshake fails with a "no application protocol" alert.
inline int select_alpn(SSL*, const unsigned char** out, unsigned char* out_size, const unsigned char* offered,
                       unsigned int offered_size, void*) {
  unsigned char* chosen = nullptr;
  if (SSL_select_next_proto(&chosen, out_size, server_alpn_wire, sizeof server_alpn_wire, offered, offered_size) !=
      OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  *out = chosen;
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace detail

// A client's context: verification on (the chain against the CA or the system store; the host is
// set per session), ALPN geerpc/1 offered, the client's certificate for mutual TLS.
inline context_ptr make_client_context(const client_settings& settings) {
  context_ptr ctx = detail::new_context(TLS_client_method(), settings.release_idle_buffers);
  SSL_CTX* raw = ctx.get();
  if (!settings.insecure_skip_verification) {
    SSL_CTX_set_verify(raw, SSL_VERIFY_PEER, nullptr);
    if (settings.ca.empty())
      detail::check(SSL_CTX_set_default_verify_paths(raw) == 1, "cannot load the system's CA store");
    else
      detail::trust(raw, settings.ca, "the CA", false);
  }
  if (settings.certificate.empty() != settings.key.empty())
    throw tls_error("tls: a client certificate needs its key, and a key its certificate");
  if (!settings.certificate.empty()) detail::use_identity(raw, settings.certificate, settings.key, "the client's");
  detail::check(SSL_CTX_set_alpn_protos(raw, detail::alpn_wire, sizeof detail::alpn_wire) == 0, "cannot set ALPN");
  return ctx;
}

// A server's context: its identity, ALPN geerpc/1 (or http/1.1) required, client certificates as asked, and no
// session tickets (geerpc connections are long-lived; a ticket would only cost a record).
inline context_ptr make_server_context(const server_settings& settings) {
  context_ptr ctx = detail::new_context(TLS_server_method(), settings.release_idle_buffers);
  SSL_CTX* raw = ctx.get();
  if (settings.certificate.empty() || settings.key.empty())
    throw tls_error("tls: a server needs a certificate and its key");
  detail::use_identity(raw, settings.certificate, settings.key, "the server's");
  if (settings.clients != client_certificates::none) {
    if (settings.client_ca.empty())
      throw tls_error("tls: asking for client certificates needs server_settings::client_ca");
    detail::trust(raw, settings.client_ca, "the client CA", true);
    const int mode = settings.clients == client_certificates::require
                         ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
                         : SSL_VERIFY_PEER;
    SSL_CTX_set_verify(raw, mode, nullptr);
  }
  SSL_CTX_set_alpn_select_cb(raw, detail::select_alpn, nullptr);
  // No resumption in either version: TLS 1.3 tickets (num_tickets), TLS 1.2 tickets (NO_TICKET)
  // and its session cache. A resumed session skips the certificate checks a reload may have
  // tightened.
  SSL_CTX_set_num_tickets(raw, 0);
  SSL_CTX_set_options(raw, SSL_OP_NO_TICKET);
  SSL_CTX_set_session_cache_mode(raw, SSL_SESS_CACHE_OFF);
  return ctx;
}

}  // namespace tls
GEERPC_END_NAMESPACE
