// geerpc's benchmark over TLS: the flags that give the server its certificate and the client the
// CA to verify it by (bench/run.sh makes both with the openssl command when TLS=1).
//   server: --tls-cert FILE --tls-key FILE [--tls-keep-buffers]
//   client: --tls-ca FILE [--tls-keep-buffers]
//   both:   --tls-dir DIR, for DIR/cert.pem and DIR/key.pem (the server's) and DIR/cert.pem (the
//           client's CA): one flag for both programs (bench/ab.sh passes the same flags to each)
//   --tls-keep-buffers: release_idle_buffers = false (SSL_MODE_RELEASE_BUFFERS off).
// A binary built without geerpc::tls refuses these flags.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "harness.hpp"

#if defined(GEERPC_BENCH_TLS)
#include <geerpc/tls.hpp>
#endif

namespace bench {

[[noreturn]] inline void no_tls() {
  std::fprintf(stderr, "this benchmark was built without geerpc::tls (OpenSSL 3)\n");
  std::exit(2);
}

// The server's stream layer: TLS with --tls-cert and --tls-key, none without.
inline std::shared_ptr<geerpc::net::stream_session_factory> server_session(int argc, char** argv) {
  const char* dir = flag(argc, argv, "--tls-dir", nullptr);
  const char* cert = flag(argc, argv, "--tls-cert", nullptr);
  if (cert == nullptr && dir == nullptr) return nullptr;
#if defined(GEERPC_BENCH_TLS)
  const std::string prefix = dir != nullptr ? std::string(dir) + "/" : std::string();
  return geerpc::tls::server(
      {.certificate = geerpc::tls::pem::file(dir != nullptr ? prefix + "cert.pem" : cert),
       .key = geerpc::tls::pem::file(dir != nullptr ? prefix + "key.pem" : flag(argc, argv, "--tls-key", "")),
       .release_idle_buffers = !has_flag(argc, argv, "--tls-keep-buffers")});
#else
  no_tls();
#endif
}

// The client's stream layer: TLS verified against --tls-ca, none without. `address` gains "tls@".
inline std::shared_ptr<geerpc::net::stream_session_factory> client_session(int argc, char** argv,
                                                                           std::string& address) {
  const char* dir = flag(argc, argv, "--tls-dir", nullptr);
  const char* ca = flag(argc, argv, "--tls-ca", nullptr);
  if (ca == nullptr && dir == nullptr) return nullptr;
#if defined(GEERPC_BENCH_TLS)
  address = "tls@" + address;
  return geerpc::tls::client({.ca = geerpc::tls::pem::file(dir != nullptr ? std::string(dir) + "/cert.pem" : ca),
                              .release_idle_buffers = !has_flag(argc, argv, "--tls-keep-buffers")});
#else
  no_tls();
#endif
}

}  // namespace bench
