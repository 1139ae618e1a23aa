// geerpc: tuning::automatic's hooks on the threaded server (automatic.hpp has the client's): unled
// runs on one CPU (unled_runs.hpp) and reply holds (reply_holds.hpp), behind the hooks that
// tuning::none (none.hpp) names.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../config.hpp"
#include "../server/connection.hpp"
#include "automatic.hpp"
#include "none.hpp"
#include "reply_holds.hpp"
#include "unled_runs.hpp"

GEERPC_BEGIN_NAMESPACE
namespace tuning {

class automatic::server_hooks {
 public:
  explicit server_hooks(const server_setup& setup)
      : one_cpu_(!setup.knobs.several_cpus(setup.runtime_cpus)),
        batching_(setup.knobs.batching),
        holds_(setup.thread_slots, setup.scheduler),
        unled_(setup.scheduler, one_cpu_, setup.look_for_leader, setup.engine) {}

  struct thread_state {
    std::size_t index;
    std::uint32_t draw;  // xorshift32 state, for unled_runs' samples
  };
  thread_state thread_begins(std::size_t index) noexcept {
    return {index, 0x9E3779B9u ^ static_cast<std::uint32_t>(index + 1)};
  }

  // On one CPU, unled runs (unled_runs.hpp).
  void lead_round_began() noexcept { unled_.lead_round_began(); }
  void run_began() noexcept { unled_.run_began(); }
  bool may_run_unled() const noexcept { return unled_.may_run_unled(); }
  bool leader_overdue(bool unled) noexcept { return unled_.look(unled); }
  void found_blocked() noexcept { unled_.found_blocked(); }
  using run_probe = detail::unled_runs::probe;
  run_probe unled_run_begins(thread_state& mine) noexcept { return unled_.unled_run_begins(mine.draw); }
  static bool blocked(const run_probe& probe) noexcept { return detail::unled_runs::blocked(probe); }

  // Reply holds (reply_holds.hpp).
  bool hold_reply(thread_state& mine, const detail::server_request& request, bool next_same) noexcept {
    if (!batching_ || !next_same || !detail::reply_holds::deadline_allows(request)) return false;
    holds_.hold(mine.index, request.connection);
    return true;
  }
  const detail::server_connection* held(const thread_state& mine) const noexcept { return holds_.held(mine.index); }
  void release(thread_state& mine) { holds_.release(mine.index); }

  void stop() {
    holds_.stop();
    unled_.stop();
  }

 private:
  const bool one_cpu_;
  const bool batching_;
  detail::reply_holds holds_;
  detail::unled_runs unled_;
};

}  // namespace tuning
GEERPC_END_NAMESPACE
