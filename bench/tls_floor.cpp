// The floor under a TLS call: what OpenSSL alone costs for one W1 call's records (a request and
// a reply of `size` bytes, each sealed by one side and opened by the other) and for W4's 4 KiB
// echo, with no socket: the two SSL objects talk through a BIO pair in memory, on one thread.
// TLS 1.3 and the cipher OpenSSL's defaults negotiate, or the TLS 1.3 suites given in
// --ciphersuites (OpenSSL's list syntax). Prints
//   tls_floor size=<n> ns_per_call=<float> cipher=<name>
// so that a TLS/plain ratio from bench/run.sh can be set against the time TLS needs at least.
//   geerpc_bench_tls_floor --cert F --key F [--calls N] [--ciphersuites LIST]
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness.hpp"

namespace {

bool pump(SSL* client, SSL* server) {  // drives both handshakes to the end
  for (int i = 0; i < 100; ++i) {
    const int c = SSL_do_handshake(client), s = SSL_do_handshake(server);
    if (c == 1 && s == 1) return true;
  }
  return false;
}

// One exchange: `from` seals `bytes`, `to` opens them.
bool pass(SSL* from, SSL* to, const std::vector<unsigned char>& bytes, std::vector<unsigned char>& into) {
  std::size_t n = 0;
  if (SSL_write_ex(from, bytes.data(), bytes.size(), &n) != 1 || n != bytes.size()) return false;
  std::size_t have = 0;
  while (have < bytes.size()) {
    if (SSL_read_ex(to, into.data() + have, into.size() - have, &n) != 1) return false;
    have += n;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const char* cert = bench::flag(argc, argv, "--cert", nullptr);
  const char* key = bench::flag(argc, argv, "--key", nullptr);
  const long calls = std::atol(bench::flag(argc, argv, "--calls", "200000"));
  const char* suites = bench::flag(argc, argv, "--ciphersuites", nullptr);
  if (cert == nullptr || key == nullptr) {
    std::fprintf(stderr, "usage: geerpc_bench_tls_floor --cert F --key F [--calls N] [--ciphersuites LIST]\n");
    return 2;
  }
  SSL_CTX* server_ctx = SSL_CTX_new(TLS_server_method());
  SSL_CTX* client_ctx = SSL_CTX_new(TLS_client_method());
  if (SSL_CTX_use_certificate_chain_file(server_ctx, cert) != 1 ||
      SSL_CTX_use_PrivateKey_file(server_ctx, key, SSL_FILETYPE_PEM) != 1) {
    std::fprintf(stderr, "cannot load %s / %s\n", cert, key);
    return 1;
  }
  for (SSL_CTX* ctx : {server_ctx, client_ctx}) {
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (suites != nullptr && SSL_CTX_set_ciphersuites(ctx, suites) != 1) {
      std::fprintf(stderr, "OpenSSL takes none of the TLS 1.3 suites %s\n", suites);
      return 2;
    }
  }
  for (const std::size_t size : {40u, 4096u + 40u}) {  // W1's Sum, W4's Echo (a frame each way)
    SSL* client = SSL_new(client_ctx);
    SSL* server = SSL_new(server_ctx);
    BIO *client_end = nullptr, *server_end = nullptr;
    BIO_new_bio_pair(&client_end, 1 << 17, &server_end, 1 << 17);
    SSL_set_bio(client, client_end, client_end);
    SSL_set_bio(server, server_end, server_end);
    SSL_set_connect_state(client);
    SSL_set_accept_state(server);
    if (!pump(client, server)) {
      std::fprintf(stderr, "handshake failed\n");
      return 1;
    }
    const std::vector<unsigned char> message(size, 'x');
    std::vector<unsigned char> into(size);
    const long warm = calls / 10;
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < warm + calls; ++i) {
      if (i == warm) t0 = std::chrono::steady_clock::now();
      if (!pass(client, server, message, into) || !pass(server, client, message, into)) {
        std::fprintf(stderr, "exchange failed\n");
        return 1;
      }
    }
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    std::printf("tls_floor size=%zu ns_per_call=%.0f cipher=%s\n", size, ns / static_cast<double>(calls),
                SSL_get_cipher_name(client));
    SSL_free(client);
    SSL_free(server);
  }
  SSL_CTX_free(client_ctx);
  SSL_CTX_free(server_ctx);
  return 0;
}
