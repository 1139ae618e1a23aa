// The gRPC peer's client: one workload of BENCHMARK.md through gRPC's synchronous stubs, plaintext
// or over TLS (credentials.hpp), measured by geerpc's own harness (harness.hpp), so that its
// "bench ..." line compares with geerpc's.
//   grpc_tls_client --port N --workload W1..W5 [--peer NAME] [--scale F] [--server-pid N]
//                   [--tls-ca FILE [--tls-name HOST]]
// One channel per connection of the workload: each channel has its own local subchannel pool and
// a channel argument of its own, so that gRPC does not share one TCP connection between them.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "../harness.hpp"
#include "arith.grpc.pb.h"
#include "credentials.hpp"

namespace {

std::unique_ptr<geerpc_bench::Arith::Stub> connect(int argc, char** argv, const std::string& target, int index) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt("geerpc_bench.connection", index);
  auto credentials = bench::grpc_peer::channel_credentials(argc, argv, args);
  auto channel = grpc::CreateCustomChannel(target, credentials, args);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(30))) {
    std::fprintf(stderr, "gRPC channel %d to %s did not connect within 30 s\n", index, target.c_str());
    std::exit(1);
  }
  return geerpc_bench::Arith::NewStub(channel);
}

}  // namespace

int main(int argc, char** argv) {
  const bench::workload w = bench::parse(argc, argv);
  const bool tls = bench::grpc_peer::tls_requested(argc, argv);
  const std::string peer = bench::flag(argc, argv, "--peer", tls ? "grpc-sync-tls" : "grpc-sync");
  const std::string target = std::string("ipv4:127.0.0.1:") + bench::flag(argc, argv, "--port", "0");

  // The server's memory before any connection: the harness's base is taken after every handshake.
  if (w.server_pid > 0)
    std::fprintf(stderr, "# %s %s server: rss_before_connections_kb=%ld\n", peer.c_str(), w.name.c_str(),
                 bench::proc_status(w.server_pid, "VmRSS"));
  std::vector<std::unique_ptr<geerpc_bench::Arith::Stub>> stubs;
  stubs.reserve(static_cast<std::size_t>(w.connections));
  for (int i = 0; i < w.connections; ++i) stubs.push_back(connect(argc, argv, target, i));
  const std::string payload(static_cast<std::size_t>(w.payload), 'x');

  auto call = [&](int connection, int caller, long i) {
    auto& stub = *stubs[static_cast<std::size_t>(connection)];
    grpc::ClientContext context;
    if (w.echo) {
      geerpc_bench::Bytes request, reply;
      request.set_data(payload);
      return stub.Echo(&context, request, &reply).ok() && reply.data() == payload;
    }
    geerpc_bench::SumArgs args;
    args.set_a(static_cast<std::int32_t>(i));
    args.set_b(caller);
    geerpc_bench::SumResult result;
    return stub.Sum(&context, args, &result).ok() && result.value() == args.a() + args.b();
  };
  bench::result r = bench::run(w, call);
  bench::print(peer, w, r);
  return r.errors == 0 ? 0 : 1;
}
