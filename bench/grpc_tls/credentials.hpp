// The gRPC peer's transport security, from the same flags geerpc's benchmark programs take
// (tls_flags.hpp), so that bench/run.sh hands both the certificate it made for TLS=1:
//   server: --tls-cert FILE --tls-key FILE   (none: plaintext)
//   client: --tls-ca FILE [--tls-name HOST]  (none: plaintext); HOST, the name the certificate is
//           checked against, defaults to 127.0.0.1, the address run.sh's certificate is made for.
// The client verifies the chain against the CA alone and the host name, gRPC's defaults.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "../harness.hpp"

namespace bench::grpc_peer {

inline std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path);
    std::exit(2);
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline bool tls_requested(int argc, char** argv) {
  return flag(argc, argv, "--tls-cert", nullptr) != nullptr || flag(argc, argv, "--tls-ca", nullptr) != nullptr;
}

inline std::shared_ptr<grpc::ServerCredentials> server_credentials(int argc, char** argv) {
  const char* cert = flag(argc, argv, "--tls-cert", nullptr);
  if (cert == nullptr) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  options.pem_key_cert_pairs.push_back({read_file(flag(argc, argv, "--tls-key", "")), read_file(cert)});
  return grpc::SslServerCredentials(options);
}

// `args` gains the name the server's certificate is checked against.
inline std::shared_ptr<grpc::ChannelCredentials> channel_credentials(int argc, char** argv,
                                                                     grpc::ChannelArguments& args) {
  const char* ca = flag(argc, argv, "--tls-ca", nullptr);
  if (ca == nullptr) return grpc::InsecureChannelCredentials();
  args.SetSslTargetNameOverride(flag(argc, argv, "--tls-name", "127.0.0.1"));
  return grpc::SslCredentials({.pem_root_certs = read_file(ca), .pem_private_key = {}, .pem_cert_chain = {}});
}

}  // namespace bench::grpc_peer
