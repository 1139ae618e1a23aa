// geerpc: why a request to etcd failed, in words that say what to fix: a TLS failure (wrong CA,
// host name mismatch, a client certificate etcd refused or never got, plain HTTP to a TLS etcd)
// rather than "curl error 35", and etcd's refusals (wrong password, no permission, a token it no
// longer knows). Pure functions of what libcurl and etcd said, so they are tested alone; no
// password or token ever reaches them.
#pragma once

#include <curl/curl.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "../config.hpp"
#include "answers.hpp"

GEERPC_BEGIN_NAMESPACE
namespace etcd::detail {

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// What libcurl reported for one transfer that failed before etcd answered.
struct transfer_failure {
  std::string url;
  CURLcode code = CURLE_OK;
  std::string detail;             // libcurl's error buffer
  bool handshake_done = false;    // the TLS handshake had completed
  bool sent_certificate = false;  // a client certificate was configured
};

inline std::string tls_failure_reason(const transfer_failure& f) {
  const std::string_view d = f.detail;
  if (f.code == CURLE_PEER_FAILED_VERIFICATION) {
    if (contains(d, "subject name") || contains(d, "host name"))
      return "host name mismatch: etcd's certificate does not name the endpoint's host";
    return "etcd's certificate is not trusted: it does not chain to a CA in tls.ca (the system's store when "
           "that is empty): wrong CA?";
  }
  if (f.code == CURLE_SSL_CACERT_BADFILE) return "the CA bundle in tls.ca cannot be read";
  if (f.code == CURLE_SSL_CERTPROBLEM) return "the client certificate or key in tls cannot be used";
  if (contains(d, "wrong version number") || contains(d, "packet length too long"))
    return "the endpoint does not speak TLS (an http:// etcd?)";
  // A plain HTTP server (etcd's among them) closes a connection that opens with a TLS ClientHello.
  if (f.code == CURLE_SSL_CONNECT_ERROR && !f.handshake_done &&
      (contains(d, "SSL_ERROR_SYSCALL") || contains(d, "unexpected eof")))
    return "the endpoint closed the connection at the TLS handshake: it does not speak TLS (an http:// etcd?)";
  // Or resets it: the ClientHello's answer was a reset, reported as a failed receive (seen under
  // TSan's timing) or as a failed handshake whose first words are the receive's (a loaded machine).
  if (!f.handshake_done &&
      (f.code == CURLE_RECV_ERROR || (f.code == CURLE_SSL_CONNECT_ERROR && contains(d, "Connection reset by peer"))))
    return "the endpoint reset the connection at the TLS handshake: it may not speak TLS (an http:// etcd?)";
  // etcd checks a client certificate at the end of the handshake; under TLS 1.3 the refusal comes
  // as the first read or write after it, as an alert or a reset.
  const bool refused_after_handshake =
      f.handshake_done && (f.code == CURLE_GOT_NOTHING || f.code == CURLE_SEND_ERROR || f.code == CURLE_RECV_ERROR ||
                           f.code == CURLE_HTTP2 || f.code == CURLE_HTTP2_STREAM);
  if (contains(d, "alert certificate required") || contains(d, "alert bad certificate") ||
      contains(d, "alert unknown ca") || contains(d, "alert handshake failure")) {
    return f.sent_certificate ? "etcd refused the client certificate (not signed by a CA etcd trusts, or expired)"
                              : "etcd requires a client certificate (--client-cert-auth) and none is set in tls";
  }
  // No alert named: a refusal without one (a reset), or an etcd that went away (a restart).
  if (refused_after_handshake) {
    return f.sent_certificate
               ? "etcd closed the connection after the TLS handshake: it may have refused the client certificate "
                 "(not signed by a CA etcd trusts, or expired), or it may be restarting"
               : "etcd closed the connection after the TLS handshake: it may require a client certificate "
                 "(--client-cert-auth; none is set in tls), or it may be restarting";
  }
  return {};
}

// The message for a transfer that failed: the reason when one is known, then libcurl's words.
inline std::string describe(const transfer_failure& f) {
  const bool tls = f.url.rfind("https://", 0) == 0;
  std::string reason = tls ? tls_failure_reason(f) : std::string();
  if (!tls && f.code == CURLE_GOT_NOTHING)
    reason = "etcd closed the connection without an answer: if it serves TLS, use an https:// endpoint";
  const std::string said = f.detail.empty() ? curl_easy_strerror(f.code) : f.detail;
  if (reason.empty()) return "etcd: unreachable: " + f.url + ": " + said;
  return "etcd: " + f.url + ": " + reason + " (" + said + ")";
}

// etcd's error message in an answer (its "message", or "error"), or the answer's text.
inline std::string answer_message(const nlohmann::json& reply, std::string_view raw) {
  for (const char* field : {"message", "error"}) {
    if (const auto found = reply.find(field); found != reply.end() && found->is_string())
      return found->get<std::string>();
  }
  return std::string(raw.substr(0, 200));
}

// The words for etcd's refusal `message` (wrong password, no permission, no credentials, a
// client certificate its gateway will not take), after `head`; empty for any other message.
// `user` is the configured user (a name, not a secret).
inline std::string describe_refusal(const std::string& head, const std::string& message, const std::string& user) {
  if (contains(message, "authentication failed"))
    return head + "authentication of user '" + user + "' failed: wrong user name or password (" + message + ")";
  if (contains(message, "permission denied"))
    return head + "permission denied: user '" + user + "' has no role granting this key range (" + message + ")";
  if (contains(message, "user name is empty"))
    return head + "etcd has authentication enabled: set options::user and options::password (" + message + ")";
  if (contains(message, "CommonName of client"))
    return head +
           "etcd 3.4's gateway refuses a client certificate with a Common Name once auth is enabled: use one "
           "without (names in its subject alternative names)";
  return {};
}

// The message for an answer with an HTTP error status; throws token_rejected for a token etcd no
// longer accepts.
inline std::string describe_answer(const std::string& url, long status, const nlohmann::json& reply,
                                   std::string_view raw, const std::string& user) {
  const std::string message = answer_message(reply, raw);
  const std::string head = "etcd: " + url + ": ";
  if (says_token_rejected(message)) throw token_rejected(head + "etcd rejected the auth token: " + message);
  if (auto refusal = describe_refusal(head, message, user); !refusal.empty()) return refusal;
  return head + "answered HTTP " + std::to_string(status) + ": " + message;
}

}  // namespace etcd::detail
GEERPC_END_NAMESPACE
