// geerpc's benchmark: the transports and tuning variants the bench programs can run, so that what
// each heuristic of include/geerpc/tuning/ buys is measured A/B in one run (bench/ab.sh). Each
// variant is tuning::automatic with one heuristic off, through its user knob where it has one and
// otherwise through a policy derived from automatic that turns that heuristic's part of a strategy
// into tuning::none's. Both bench programs take the same `--tuning NAME` and apply what concerns them.
//
//   --transport threaded   tuning::automatic (the default) or the --tuning variant
//   --transport plain      basic_threaded<tuning::none>: the core with every heuristic off
//   --transport blocking
//   --transport blocking-plain   basic_blocking<tuning::none>: no spin, strict arrival order
// and the codecs (where geerpc::json is built: GEERPC_BENCH_JSON, bench/CMakeLists.txt):
//   server --codecs binary        basic_server<Transport>, binary_codec alone (the default)
//   server --codecs binary,json   basic_server<Transport, codecs<binary_codec, json_codec>>
//   client --codec binary|json    basic_client<Transport, binary_codec|json_codec>
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string_view>

#include <geerpc/geerpc.hpp>
#if defined(GEERPC_BENCH_JSON)
#include <geerpc/json.hpp>
#endif

namespace bench {

// A lone synchronous caller never reads its own reply: the receiving thread always does
// (tuning/own_reply.hpp off); the spin stays.
struct no_own_reply {
  using client_send = geerpc::tuning::automatic::client_send;
  class client_wait : public geerpc::tuning::automatic::client_wait {
   public:
    using geerpc::tuning::automatic::client_wait::client_wait;
    static constexpr bool callers_read = false;
    bool receiver_watches() const noexcept { return true; }
  };
  using server_schedule = geerpc::tuning::automatic::server_schedule;
  using pool_grow = geerpc::tuning::automatic::pool_grow;
};

// On one CPU, a handler never runs with the I/O unled (tuning/unled_runs.hpp off): the engine
// makes sure another thread leads, as on several CPUs.
struct no_unled_runs {
  using client_send = geerpc::tuning::automatic::client_send;
  using client_wait = geerpc::tuning::automatic::client_wait;
  using pool_grow = geerpc::tuning::automatic::pool_grow;
  class server_schedule : public geerpc::tuning::automatic::server_schedule {
   public:
    using geerpc::tuning::automatic::server_schedule::server_schedule;
    bool may_run_unled() const noexcept { return false; }
    bool leader_overdue(bool) noexcept { return false; }
  };
};

// The variants, by --tuning name. Those with a knob keep tuning::automatic and change the knob:
// request batching (client `batching`), reply holds (server `batching`), the spin (client `spin`).
inline constexpr std::string_view tuning_names[] = {"automatic", "no-request-batching", "no-reply-holds",
                                                    "no-spin",   "no-own-reply",        "no-unled-runs"};

inline geerpc::tuning::settings client_knobs(std::string_view tuning) {
  geerpc::tuning::settings knobs;
  if (tuning == "no-request-batching") knobs.batching = false;
  if (tuning == "no-spin") knobs.spin = std::chrono::microseconds(0);
  return knobs;
}

inline geerpc::tuning::settings server_knobs(std::string_view tuning) {
  geerpc::tuning::settings knobs;
  if (tuning == "no-reply-holds") knobs.batching = false;
  return knobs;
}

// Calls `run.template operator()<Transport>()` with the transport that --transport and --tuning name.
template <class Run>
int with_transport(std::string_view transport, std::string_view tuning, Run&& run) {
  bool known = false;
  for (const std::string_view name : tuning_names) known = known || name == tuning;
  if (!known) {
    std::fprintf(stderr, "unknown --tuning %.*s\n", static_cast<int>(tuning.size()), tuning.data());
    std::exit(2);
  }
  if (transport == "blocking") return run.template operator()<geerpc::blocking>();
  if (transport == "plain") return run.template operator()<geerpc::basic_threaded<geerpc::tuning::none>>();
  if (transport == "blocking-plain") return run.template operator()<geerpc::basic_blocking<geerpc::tuning::none>>();
  if (transport != "threaded") {
    std::fprintf(stderr, "unknown --transport %.*s\n", static_cast<int>(transport.size()), transport.data());
    std::exit(2);
  }
  if (tuning == "no-own-reply") return run.template operator()<geerpc::basic_threaded<no_own_reply>>();
  if (tuning == "no-unled-runs") return run.template operator()<geerpc::basic_threaded<no_unled_runs>>();
  return run.template operator()<geerpc::threaded>();
}

[[noreturn]] inline void unknown_codec(const char* flag, std::string_view name) {
#if defined(GEERPC_BENCH_JSON)
  constexpr const char* why = "";
#else
  constexpr const char* why = " (this benchmark was built without geerpc::json)";
#endif
  std::fprintf(stderr, "unknown %s %.*s%s\n", flag, static_cast<int>(name.size()), name.data(), why);
  std::exit(2);
}

// Calls `run.template operator()<Codec>()` with the server's codec that --codecs names: binary_codec
// (basic_server's default) or codecs<binary_codec, json_codec>.
template <class Run>
int with_server_codecs(std::string_view names, Run&& run) {
  if (names == "binary") return run.template operator()<geerpc::binary_codec>();
#if defined(GEERPC_BENCH_JSON)
  if (names == "binary,json")
    return run.template operator()<geerpc::codecs<geerpc::binary_codec, geerpc::json_codec>>();
#endif
  unknown_codec("--codecs", names);
}

// Calls `run.template operator()<Codec>()` with the client's codec that --codec names.
template <class Run>
int with_client_codec(std::string_view name, Run&& run) {
  if (name == "binary") return run.template operator()<geerpc::binary_codec>();
#if defined(GEERPC_BENCH_JSON)
  if (name == "json") return run.template operator()<geerpc::json_codec>();
#endif
  unknown_codec("--codec", name);
}

}  // namespace bench
