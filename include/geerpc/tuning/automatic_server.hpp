// geerpc: tuning::automatic's two server strategies (automatic.hpp has the client's), behind the
// functions that tuning::none (none.hpp) names: server_schedule with unled runs on one CPU
// (unled_runs.hpp) and reply holds (reply_holds.hpp); pool_grow with the growth rule of
// transport/threaded/pool_growth.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../server/connection.hpp"
#include "../transport/threaded/pool_growth.hpp"
#include "automatic.hpp"
#include "none.hpp"
#include "reply_holds.hpp"
#include "unled_runs.hpp"

GEERPC_BEGIN_NAMESPACE
namespace tuning {

class automatic::server_schedule {
 public:
  explicit server_schedule(const server_setup& setup)
      : one_cpu_(setup.runtime_cpus <= 1),
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
    if (!batching_ || !next_same || !holds_.deadline_allows(request)) return false;
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

// The growth rule (pool_growth.hpp): above the core size, a thread only while handlers are stuck,
// a look armed on the scheduler otherwise. A refused start is the reactor's to retry (its own
// timer), not this strategy's.
class automatic::pool_grow {
 public:
  using clock = std::chrono::steady_clock;
  explicit pool_grow(const pool_setup& setup)
      : growth_(setup.core_threads, setup.slots, setup.growth_delay, &setup.scheduler, setup.look, setup.pool) {}

  bool may_grow(std::size_t threads, clock::time_point now) noexcept { return growth_.may_grow(threads, now); }
  void look() noexcept { growth_.look(); }
  void handler_began(std::size_t slot) noexcept { growth_.handler_began(slot); }
  void handler_ended(std::size_t slot) noexcept { growth_.handler_ended(slot); }
  void stop() { growth_.cancel(); }

 private:
  detail::pool_growth growth_;
};

}  // namespace tuning
GEERPC_END_NAMESPACE
