// geerpc: OpenSSL's thread-local error queue turned into one clear line, and emptied, so that what
// one connection's failure left there is never read as another's.
#pragma once

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <stdexcept>
#include <string>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace tls {

// A certificate, key or setting OpenSSL refused, with its reason ("tls: the server's key: ...").
struct tls_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {

// Every error on this thread's queue, oldest first, "; "-separated (ERR_error_string_n's form:
// "error:0A000086:SSL routines::certificate verify failed"); the queue is left empty.
inline std::string drain_errors() {
  std::string text;
  while (const unsigned long code = ERR_get_error()) {
    char line[256];
    ERR_error_string_n(code, line, sizeof line);
    if (!text.empty()) text += "; ";
    text += line;
  }
  return text;
}

// Why a handshake or a record failed, for a message: the queue's errors, then the certificate
// check's own reason when there is one ("certificate has expired", "hostname mismatch").
inline std::string failure_text(const SSL* ssl) {
  std::string text = drain_errors();
  const long verified = SSL_get_verify_result(ssl);
  if (verified != X509_V_OK) {
    if (!text.empty()) text += ": ";
    text += X509_verify_cert_error_string(verified);
  }
  return text.empty() ? "the peer closed the connection during the TLS handshake" : text;
}

// Empties this thread's queue, as ERR_clear_error() does, at a fraction of its cost when the queue
// is empty already, as it is before and after nearly every record: ERR_clear_error() resets each of
// the queue's 16 slots (about 300 ns here, four times a call on each side), ERR_peek_error() only
// looks (about 50 ns). SSL_get_error() reads the queue through ERR_peek_error() alone, so a queue
// for which it returns 0 is empty as far as the next SSL_* call's result is concerned.
inline void clear_errors() noexcept {
  if (ERR_peek_error() != 0) ERR_clear_error();
}

// Throws tls_error("tls: <what>: <queue>") when `ok` is false.
inline void check(bool ok, const std::string& what) {
  if (ok) return;
  std::string queue = drain_errors();
  throw tls_error("tls: " + what + (queue.empty() ? std::string() : ": " + queue));
}

}  // namespace detail
}  // namespace tls
GEERPC_END_NAMESPACE
