// geerpc: the knobs of the threaded transport's performance heuristics (tuning/), as options a
// user may set: `options::tuning` for a client, `server_options::tuning` for a server. Every
// default suits most programs; tuning::none ignores them all.
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
  // The CPUs the heuristics assume this process has; 0: its runtime's (runtime_options::cpus, by
  // default detected from the CPU affinity and the cgroup CPU quota). Several heuristics (spinning, running a handler
  // without waking a thread to lead, yielding before a read) choose by whether there is more than one.
  unsigned cpus = 0;

  // Whether the heuristics may count on more than one CPU, given the runtime's budget.
  bool several_cpus(unsigned runtime_cpus) const noexcept { return (cpus != 0 ? cpus : runtime_cpus) > 1; }
};

}  // namespace tuning
GEERPC_END_NAMESPACE
