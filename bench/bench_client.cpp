// geerpc's benchmark client: runs one workload of BENCHMARK.md against geerpc_bench_server and
// prints the "bench ..." line; W1 and W2 add a "# ... allocs_per_call" line (client and server).
//   geerpc_bench_client --port N --workload W1..W5 [--transport threaded|plain|blocking]
//                       [--tuning NAME] [--peer NAME] [--deadline-ms N] [--handle-timeout-ms N]
//                       [--scale F] [--server-pid N] [--balanced] [--thread-cpu-of PID]
//                       [--tls-ca F [--tls-keep-buffers]] [--codec binary|json [--jsonrpc]]
//   --thread-cpu-of: prints the CPU time per call of each thread of process PID (the server) over
//   the timed phase (thread_cpu.hpp).
//   --transport, --tuning and --codec: variants.hpp; with --codec json the default peer name is
//   geerpc-<transport>-json.
//   --balanced: the calls go through a geerpc::balanced_client over a static list of this one
//   server (round-robin), to measure what the balanced client costs over a plain one.
//   --workload storm: the timeout storm of storm.hpp instead of W1..W5.
//   --tls-*: calls over TLS (tls_flags.hpp), W1..W5 only.
//   --jsonrpc (with --codec json): calls a JSON-RPC 1.0 stream server, Go's net/rpc/jsonrpc or
//   geerpc's own (its first-byte '{' door), through the address jsonrpc@127.0.0.1:N; no allocation
//   counts (Go's server has no Arith.Allocations).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "arith.hpp"
#include "harness.hpp"
#include "storm.hpp"
#include "thread_cpu.hpp"
#include "tls_flags.hpp"
#include "variants.hpp"

namespace {

// The timeout storm (storm.hpp): the floor, then 1,000 synchronous callers, then 1,000 async calls.
template <class Transport, class Codec>
int storm(int argc, char** argv, const std::string& peer) {
  const std::string address = std::string("127.0.0.1:") + bench::flag(argc, argv, "--port", "0");
  const int server_pid = std::atoi(bench::flag(argc, argv, "--server-pid", "0"));
  geerpc::options opts;
  opts.timeouts.connect = std::chrono::seconds(30);
  opts.tuning = bench::client_knobs(bench::flag(argc, argv, "--tuning", "automatic"));
  auto client = geerpc::dial<Transport, Codec>(address, opts);
  bench::storm_floor().print(peer, "floor", "");
  std::string extra;
  bench::storm_sync(client, server_pid, extra).print(peer, "sync", extra);
  if constexpr (Transport::supports_async) bench::storm_async(client, extra).print(peer, "async", extra);
  return 0;
}

template <class Transport, class Codec>
int run(int argc, char** argv, const std::string& peer) {
  if (std::string_view(bench::flag(argc, argv, "--workload", "W1")) == "storm")
    return storm<Transport, Codec>(argc, argv, peer);
  const bench::workload w = bench::parse(argc, argv);
  const bool jsonrpc = bench::has_flag(argc, argv, "--jsonrpc");
  std::string address = std::string(jsonrpc ? "jsonrpc@" : "") + "127.0.0.1:" + bench::flag(argc, argv, "--port", "0");
  const auto deadline = std::chrono::milliseconds(std::atoi(bench::flag(argc, argv, "--deadline-ms", "0")));
  geerpc::options opts;
  opts.timeouts.connect = std::chrono::seconds(30);
  opts.timeouts.handle = std::chrono::milliseconds(std::atoi(bench::flag(argc, argv, "--handle-timeout-ms", "0")));
  opts.tuning = bench::client_knobs(bench::flag(argc, argv, "--tuning", "automatic"));
  opts.session = bench::client_session(argc, argv, address);

  // The server's memory before any connection: a TLS connection's share is made in its handshake,
  // before the harness's base_rss_kb (taken once every client has dialed).
  if (w.server_pid > 0)
    std::fprintf(stderr, "# %s %s server: rss_before_connections_kb=%ld\n", peer.c_str(), w.name.c_str(),
                 bench::proc_status(w.server_pid, "VmRSS"));
  std::vector<geerpc::basic_client<Transport, Codec>> clients;
  clients.reserve(static_cast<std::size_t>(w.connections));
  for (int i = 0; i < w.connections; ++i) clients.push_back(geerpc::dial<Transport, Codec>(address, opts));
  const std::string payload(static_cast<std::size_t>(w.payload), 'x');
  std::unique_ptr<geerpc::basic_balanced_client<Transport, Codec>> balanced;
  if (bench::has_flag(argc, argv, "--balanced")) {
    if (w.connections != 1) {
      std::fprintf(stderr, "--balanced: workloads of one connection only\n");
      return 2;
    }
    auto servers = std::make_shared<geerpc::static_discovery>(std::vector<std::string>{address});
    balanced = std::make_unique<geerpc::basic_balanced_client<Transport, Codec>>(
        servers, geerpc::balanced_options{.mode = geerpc::select_mode::round_robin, .client = opts});
  }

  auto call = [&](int connection, int caller, long i) {
    auto& client = clients[static_cast<std::size_t>(connection)];
    const geerpc::context ctx = deadline.count() > 0 ? geerpc::with_timeout(deadline) : geerpc::context{};
    if (w.echo) {
      auto r = balanced ? balanced->template try_call<std::string>(ctx, "Arith.Echo", payload)
                        : client.template try_call<std::string>(ctx, "Arith.Echo", payload);
      return r && *r == payload;
    }
    const bench::SumArgs args{static_cast<std::int32_t>(i), static_cast<std::int32_t>(caller)};
    auto r = balanced ? balanced->template try_call<std::int32_t>(ctx, "Arith.Sum", args)
                      : client.template try_call<std::int32_t>(ctx, "Arith.Sum", args);
    return r && *r == args.a + args.b;
  };

  // Allocations per call, client and server, over the timed phase of W1 and W2 (Sum).
  const bool count_allocations = !jsonrpc && (w.name == "W1" || w.name == "W2");
  auto server_allocations = [&] {
    return clients.front().template call<std::uint64_t>("Arith.Allocations", std::uint8_t{0});
  };
  std::uint64_t client_before = 0, server_before = 0;
  const int cpu_of = std::atoi(bench::flag(argc, argv, "--thread-cpu-of", "0"));
  bench::thread_cpu_sample cpu_before;
  bench::result r = bench::run(w, call, [&] {
    if (cpu_of > 0) cpu_before = bench::sample_threads(cpu_of);
    if (!count_allocations) return;
    server_before = server_allocations();
    client_before = bench::allocations();
  });
  if (count_allocations) {
    const double calls = static_cast<double>(r.latencies_ns.size());
    const double client_per_call = static_cast<double>(bench::allocations() - client_before) / calls;
    const double server_per_call = static_cast<double>(server_allocations() - server_before) / calls;
    std::fprintf(stderr, "# %s %s allocs_per_call client=%.2f server=%.2f\n", peer.c_str(), w.name.c_str(),
                 client_per_call, server_per_call);
  }
  bench::print(peer, w, r);
  if (cpu_of > 0)
    bench::print_thread_cpu(peer, w.name, cpu_before, bench::sample_threads(cpu_of),
                            static_cast<double>(r.latencies_ns.size()));
  return r.errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view transport = bench::flag(argc, argv, "--transport", "threaded");
  const std::string_view codec = bench::flag(argc, argv, "--codec", "binary");
  const std::string fallback = "geerpc-" + std::string(transport) + (codec == "json" ? "-json" : "");
  const std::string peer = bench::flag(argc, argv, "--peer", fallback.c_str());
  return bench::with_client_codec(codec, [&]<class Codec>() {
    return bench::with_transport(transport, bench::flag(argc, argv, "--tuning", "automatic"),
                                 [&]<class Transport>() { return run<Transport, Codec>(argc, argv, peer); });
  });
}
