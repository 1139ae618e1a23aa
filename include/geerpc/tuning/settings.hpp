// geerpc: the knobs of the threaded transport's performance heuristics (tuning/), as options a
// user may set: `options::tuning` for a client, `server_options::tuning` for a server. Every
// default suits most programs; tuning::none ignores them all. The CPUs the heuristics plan for are
// their runtime's (runtime_options::cpus): one setting, shared by the clients and servers of a runtime.
#pragma once

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "spin.hpp"

GEERPC_BEGIN_NAMESPACE
namespace tuning {

struct settings {
  // How long a waiting caller looks for its reply before it sleeps, when it is the only caller of
  // its runtime waiting and a CPU is spare (spin.hpp; the threaded client's client_wait and the
  // blocking client). Trades a CPU burnt for up to this long against a sleeping thread's wake-up
  // (tens of microseconds on a VM whose idle CPUs halt). 0: never spin.
  std::chrono::microseconds spin = detail::spin_budget;
  // Whether requests made together and replies answered together are held for a moment to leave
  // in one send (request_batching.hpp, reply_holds.hpp). Trades up to a millisecond or two of a
  // held request's latency, when its senders are kept off the CPU, for one send and one wake-up
  // of the peer per batch. Off: each goes out on its own.
  bool batching = true;
};

}  // namespace tuning
GEERPC_END_NAMESPACE
