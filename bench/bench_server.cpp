// geerpc's benchmark server: serves Arith on 127.0.0.1, prints "PORT <n> address=<host:port>
// pid=<pid>" on stdout once it listens, and runs until SIGTERM or SIGINT.
//   geerpc_bench_server [--port N] [--transport threaded|plain|blocking] [--tuning NAME]
//                       [--handler-threads N] [--max-handler-threads N] [--pool-growth-delay-us N]
//                       [--io-threads N] [--no-statistics] [--tls-cert F --tls-key F [--tls-keep-buffers]]
//                       [--codecs binary|binary,json] [--relay-to PORT]
//   (--transport, --tuning, --codecs: variants.hpp; --no-statistics: server_options.observability.statistics = false;
//   --tls-*: tls_flags.hpp; the others set the server_options of the same names)
//   --relay-to PORT: the two-hop storm's middle server (relay.hpp), threaded and binary only: its
//   Arith passes every call on to the geerpc_bench_server on 127.0.0.1:PORT.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "arith.hpp"
#include "harness.hpp"
#include "relay.hpp"
#include "tls_flags.hpp"
#include "variants.hpp"

namespace {
// Blocks the stop signals in every thread started after it (the server's), so that a sigwait on
// them receives them.
sigset_t block_stop_signals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

// Prints the line bench/run.sh waits for, then serves until SIGTERM or SIGINT.
template <class Server>
int announce_and_wait(Server& server, const std::string& address, sigset_t& stop_signals) {
  // The pid lets bench/run.sh take the port from this process's own line and no other.
  std::printf("PORT %s address=%s pid=%ld\n", address.substr(address.rfind(':') + 1).c_str(), address.c_str(),
              static_cast<long>(getpid()));
  std::fflush(stdout);
  int signal = 0;
  sigwait(&stop_signals, &signal);
  server.stop();
  return 0;
}

template <class Transport, class Codec>
int serve(int port, const geerpc::server_options& options) {
  sigset_t stop_signals = block_stop_signals();
  bench::Arith arith;
  geerpc::basic_server<Transport, Codec> server(options);
  server.template add<bench::ArithApi>(arith);
  return announce_and_wait(server, server.listen("127.0.0.1:" + std::to_string(port)), stop_signals);
}

// The two-hop storm's middle server: passes its calls on to the server on `behind`, propagating
// the storm caller's deadline key to it.
int relay(int port, int behind, geerpc::server_options options) {
  sigset_t stop_signals = block_stop_signals();
  options.propagated_metadata.push_back(bench::caller_deadline_key);
  bench::Relay relay("127.0.0.1:" + std::to_string(behind));
  geerpc::server server(options);
  server.add<bench::RelayApi>(relay);
  return announce_and_wait(server, server.listen("127.0.0.1:" + std::to_string(port)), stop_signals);
}
}  // namespace

int main(int argc, char** argv) {
  const int port = std::atoi(bench::flag(argc, argv, "--port", "0"));
  const std::string_view transport = bench::flag(argc, argv, "--transport", "threaded");
  const std::string_view tuning = bench::flag(argc, argv, "--tuning", "automatic");
  geerpc::server_options options{
      .threads = {.handlers = static_cast<std::size_t>(std::atoi(bench::flag(argc, argv, "--handler-threads", "8")))},
      .tuning = bench::server_knobs(tuning)};
  // 0 or absent: the default (server_options.threads.max_handlers).
  if (const auto most = std::atoi(bench::flag(argc, argv, "--max-handler-threads", "0")); most > 0)
    options.threads.max_handlers = static_cast<std::size_t>(most);
  // Absent: the default (server_options.threads.io_threads, 1); 0: from the runtime's CPU budget.
  if (const char* io = bench::flag(argc, argv, "--io-threads", nullptr); io != nullptr)
    options.threads.io_threads = static_cast<std::size_t>(std::atoi(io));
  if (const char* delay = bench::flag(argc, argv, "--pool-growth-delay-us", nullptr); delay != nullptr)
    options.threads.growth_delay = std::chrono::microseconds(std::atol(delay));
  options.observability.statistics = !bench::has_flag(argc, argv, "--no-statistics");
  options.session = bench::server_session(argc, argv);
  if (const int behind = std::atoi(bench::flag(argc, argv, "--relay-to", "0")); behind > 0)
    return relay(port, behind, options);
  return bench::with_server_codecs(bench::flag(argc, argv, "--codecs", "binary"), [&]<class Codec>() {
    return bench::with_transport(transport, tuning,
                                 [&]<class Transport>() { return serve<Transport, Codec>(port, options); });
  });
}
