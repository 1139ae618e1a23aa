// The gRPC peer's server: Arith.Sum and Arith.Echo on gRPC's synchronous server (its default thread
// pool), plaintext or over TLS (credentials.hpp), on 127.0.0.1.
//   grpc_tls_server [--port N] [--tls-cert FILE --tls-key FILE]
// Prints "PORT <n> address=127.0.0.1:<n> pid=<pid>", the line bench/run.sh waits for, and serves
// until SIGTERM.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "arith.grpc.pb.h"
#include "credentials.hpp"

namespace {

class arith final : public geerpc_bench::Arith::Service {
  grpc::Status Sum(grpc::ServerContext*, const geerpc_bench::SumArgs* args, geerpc_bench::SumResult* result) override {
    result->set_value(args->a() + args->b());
    return grpc::Status::OK;
  }
  grpc::Status Echo(grpc::ServerContext*, const geerpc_bench::Bytes* in, geerpc_bench::Bytes* out) override {
    out->set_data(in->data());
    return grpc::Status::OK;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::string address = std::string("127.0.0.1:") + bench::flag(argc, argv, "--port", "0");
  arith service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(address, bench::grpc_peer::server_credentials(argc, argv), &port);
  builder.RegisterService(&service);
  const std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "gRPC server could not listen on %s\n", address.c_str());
    return 1;
  }
  std::printf("PORT %d address=127.0.0.1:%d pid=%d\n", port, port, static_cast<int>(getpid()));
  std::fflush(stdout);
  server->Wait();  // SIGTERM ends the process
  return 0;
}
