// What the TLS tests share: a test PKI (a CA and a server certificate for localhost, 127.0.0.1 and
// ::1), servers of either transport behind a TLS server factory, and raw TLS peers made directly
// with OpenSSL for the cases the client API would never produce (no ALPN, TLS 1.2 renegotiation,
// garbage after a handshake, a ClientHello sent by hand).
#pragma once

#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <geerpc/tls.hpp>
#include <memory>
#include <string>
#include <vector>

#include "certificates.hpp"
#include "support.hpp"

namespace test::tls {

using geerpc::tls::pem;

// Limits only to catch a hang (a sanitizer on a loaded machine is slow).
inline constexpr auto call_limit = 2s;
inline constexpr auto large_limit = 10s;

struct pki {
  authority ca;
  identity server = ca.issue({.common_name = "server", .dns = {"localhost", "rpc.test"}, .ips = {"127.0.0.1", "::1"}});

  geerpc::tls::server_settings server_settings() const {
    return {.certificate = pem::in_memory(server.certificate), .key = pem::in_memory(server.key)};
  }
  geerpc::tls::client_settings client_settings() const { return {.ca = pem::in_memory(ca.certificate())}; }
};

// A test server of `Transport` whose connections are TLS, with the factory kept for reload and
// for what it logged.
template <class Transport>
struct tls_server {
  std::shared_ptr<geerpc::tls::server_factory> factory;
  test::arith_server<Transport> server;

  explicit tls_server(const geerpc::tls::server_settings& settings, geerpc::server_options opts = {},
                      const std::string& where = "127.0.0.1:0")
      : factory(geerpc::tls::server(settings)), server(with(std::move(opts), factory), where) {}

  std::string address() const { return "tls@" + server.address; }
  std::string port() const { return server.address.substr(server.address.rfind(':') + 1); }

 private:
  static geerpc::server_options with(geerpc::server_options opts, std::shared_ptr<geerpc::tls::server_factory> f) {
    opts.session = std::move(f);
    return opts;
  }
};

template <class Transport>
geerpc::result<geerpc::basic_client<Transport>> dial(const std::string& address,
                                                     const geerpc::tls::client_settings& settings,
                                                     geerpc::options opts = {}) {
  opts.session = geerpc::tls::client(settings);
  if (opts.timeouts.connect == std::chrono::seconds(10)) opts.timeouts.connect = 5s;
  return geerpc::try_dial<Transport>(address, opts);
}

// Whether a client of `Transport` with `settings` can dial `address` and make a call there.
template <class Transport>
bool serves(const std::string& address, const geerpc::tls::client_settings& settings) {
  auto client = dial<Transport>(address, settings);
  if (!client.has_value()) return false;
  auto sum = client.value().template try_call<int>(geerpc::with_timeout(call_limit), "Arith.Sum", Args{20, 22});
  return sum.has_value() && sum.value() == 42;
}

struct ssl_ctx_deleter {
  void operator()(SSL_CTX* ctx) const noexcept { SSL_CTX_free(ctx); }
};
struct ssl_deleter {
  void operator()(SSL* ssl) const noexcept { SSL_free(ssl); }
};

// What a raw TLS client offers.
struct raw_spec {
  bool alpn = true;                  // offer geerpc/1
  int max_version = TLS1_3_VERSION;  // TLS1_2_VERSION for renegotiation
};

// A TLS client made directly with OpenSSL over a blocking socket (no verification: it is the
// server that is under test).
class raw_tls_client {
 public:
  raw_tls_client(const std::string& address, raw_spec spec = {})
      : peer_(address), ctx_(SSL_CTX_new(TLS_client_method())) {
    SSL_CTX_set_max_proto_version(ctx_.get(), spec.max_version);
    if (spec.alpn) {
      static constexpr unsigned char alpn[] = {8, 'g', 'e', 'e', 'r', 'p', 'c', '/', '1'};
      SSL_CTX_set_alpn_protos(ctx_.get(), alpn, sizeof alpn);
    }
    ssl_.reset(SSL_new(ctx_.get()));
    SSL_set_fd(ssl_.get(), peer_.fd());
  }
  ~raw_tls_client() { ERR_clear_error(); }

  bool handshake() { return SSL_connect(ssl_.get()) == 1; }
  bool write(std::span<const std::byte> bytes) {
    std::size_t n = 0;
    return SSL_write_ex(ssl_.get(), bytes.data(), bytes.size(), &n) == 1 && n == bytes.size();
  }
  // Reads exactly `size` bytes of the peer's data; nullopt when the connection ends first.
  std::optional<std::vector<std::byte>> read(std::size_t size) {
    std::vector<std::byte> out(size);
    std::size_t have = 0;
    while (have < size) {
      std::size_t n = 0;
      if (SSL_read_ex(ssl_.get(), out.data() + have, size - have, &n) != 1) return std::nullopt;
      have += n;
    }
    return out;
  }
  SSL* ssl() { return ssl_.get(); }
  test::raw_peer& socket() { return peer_; }

 private:
  test::raw_peer peer_;
  std::unique_ptr<SSL_CTX, ssl_ctx_deleter> ctx_;
  std::unique_ptr<SSL, ssl_deleter> ssl_;
};

// The bytes of a ClientHello offering geerpc/1, made with memory BIOs: for tests that send it by
// hand (in pieces, or only half of it).
inline std::vector<std::byte> client_hello() {
  std::unique_ptr<SSL_CTX, ssl_ctx_deleter> ctx(SSL_CTX_new(TLS_client_method()));
  static constexpr unsigned char alpn[] = {8, 'g', 'e', 'e', 'r', 'p', 'c', '/', '1'};
  SSL_CTX_set_alpn_protos(ctx.get(), alpn, sizeof alpn);
  std::unique_ptr<SSL, ssl_deleter> ssl(SSL_new(ctx.get()));
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  SSL_set_bio(ssl.get(), in, out);
  SSL_connect(ssl.get());  // WANT_READ, with the ClientHello written to `out`
  char* data = nullptr;
  const long size = BIO_get_mem_data(out, &data);
  std::vector<std::byte> hello(static_cast<std::size_t>(size));
  std::memcpy(hello.data(), data, hello.size());
  ERR_clear_error();
  return hello;
}

}  // namespace test::tls
