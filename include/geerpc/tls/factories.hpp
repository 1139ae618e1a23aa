// geerpc: the factories that plug TLS into a client or a server (options::session,
// server_options::session): each holds the SSL_CTX its sessions are made from.
//
//   geerpc::options opts;
//   opts.session = geerpc::tls::client({.ca = geerpc::tls::pem::file("ca.pem")});
//   auto c = geerpc::dial("tls@rpc.example.com:7000", opts);
//
//   geerpc::server_options so;
//   auto tls = geerpc::tls::server({.certificate = pem::file("cert.pem"), .key = pem::file("key.pem")});
//   so.session = tls;             // later: tls->reload(new_settings), no restart
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "../config.hpp"
#include "../net/stream_session.hpp"
#include "context.hpp"
#include "session.hpp"
#include "settings.hpp"

GEERPC_BEGIN_NAMESPACE
namespace tls {

// A client's sessions: verify the server against the dialed host (or settings.server_name).
class client_factory final : public net::stream_session_factory {
 public:
  explicit client_factory(const client_settings& settings)
      : ctx_(make_client_context(settings)), server_name_(settings.server_name) {}

  std::unique_ptr<net::stream_session> make(int fd, role side) override { return make_for(fd, side, {}); }
  std::unique_ptr<net::stream_session> make_for(int fd, role side, std::string_view host) override {
    if (side != role::client) throw tls_error("tls: a client factory cannot serve a server's connection");
    return std::make_unique<session>(ctx_.get(), fd, side, server_name_.empty() ? std::string(host) : server_name_,
                                     nullptr);
  }

 private:
  const context_ptr ctx_;
  const std::string server_name_;
};

// A server's sessions. reload() swaps in a new context for the connections accepted after it;
// those before keep theirs (each SSL object holds a reference to its context) to the end.
class server_factory final : public net::stream_session_factory {
 public:
  explicit server_factory(const server_settings& settings)
      : ctx_(make_server_context(settings)), required_(settings.required) {}

  std::unique_ptr<net::stream_session> make(int fd, role side) override {
    if (side != role::server) throw tls_error("tls: a server factory cannot serve a client's connection");
    auto made = std::make_unique<session>(current().get(), fd, side, std::string(), log_);
    made->sniff_first_byte(fd, required_.load(std::memory_order_relaxed));
    return made;
  }

  // New certificates, key or client CA, read again from their files if they are files: throws
  // tls_error, keeping the old context, if they are not usable.
  void reload(const server_settings& settings) {
    context_ptr fresh = make_server_context(settings);
    std::lock_guard lock(mutex_);
    ctx_.swap(fresh);
    required_.store(settings.required, std::memory_order_relaxed);
  }

  // Connections refused by TLS in their handshake (a certificate, a protocol or ALPN not agreed, a
  // peer that is not TLS); connections TLS closed later (a record that did not authenticate, a bad
  // record header); and the last reason of either.
  std::size_t failed_handshakes() const { return log_->handshakes(); }
  std::size_t failed_after_handshake() const { return log_->later(); }
  std::string last_failure() const { return log_->last(); }
  // Plaintext peers refused because server_settings::required (not counted as failed handshakes).
  std::size_t refused_plaintext() const { return log_->plaintext_refusals(); }

 private:
  context_ptr current() const {
    std::lock_guard lock(mutex_);
    return ctx_;
  }

  mutable std::mutex mutex_;
  context_ptr ctx_;
  std::atomic<bool> required_;
  const std::shared_ptr<failure_log> log_ = std::make_shared<failure_log>();
};

inline std::shared_ptr<client_factory> client(const client_settings& settings = {}) {
  return std::make_shared<client_factory>(settings);
}
inline std::shared_ptr<server_factory> server(const server_settings& settings) {
  return std::make_shared<server_factory>(settings);
}

}  // namespace tls
GEERPC_END_NAMESPACE
