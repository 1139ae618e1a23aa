// geerpc: tuning::automatic, the default tuning of the threaded transport: each heuristic of this
// folder behind the hooks that tuning::none (none.hpp) names, each with its knob in
// tuning::settings. bench/README.md says what each one buys.
#pragma once

#include <chrono>
#include <cstddef>
#include <span>

#include "../config.hpp"
#include "../net/frame_writer.hpp"
#include "../server/connection.hpp"
#include "none.hpp"
#include "own_reply.hpp"
#include "reply_holds.hpp"
#include "request_batching.hpp"
#include "settings.hpp"
#include "spin.hpp"
#include "unled_runs.hpp"

GEERPC_BEGIN_NAMESPACE
namespace tuning {

struct automatic {
  class client_hooks {
   public:
    explicit client_hooks(const client_setup& setup)
        : spin_(setup.knobs.spin),
          several_cpus_(setup.knobs.several_cpus()),
          batching_(setup.writer, setup.scheduler, setup.knobs.batching, setup.broken, setup.engine) {}

    // Request batching (request_batching.hpp).
    bool caller_may_hold(std::chrono::steady_clock::time_point now) noexcept { return batching_.caller_may_hold(now); }
    net::frame_writer::status send_request(std::span<const std::byte> frame, bool may_hold) {
      return batching_.send_request(frame, may_hold);
    }
    void reader_arrives() noexcept { batching_.reader_arrives(); }
    void reader_leaves() { batching_.reader_leaves(); }
    void call_completing(bool synchronous) noexcept { batching_.call_completing(synchronous); }
    void caller_returns() { batching_.caller_returns(); }
    void stop() { batching_.stop(); }

    // A lone caller reads its own reply (own_reply.hpp).
    static constexpr bool callers_read = true;
    bool call_added(bool may_read, bool& wake_receiver) noexcept { return watch_.call_added(may_read, wake_receiver); }
    bool caller_done(bool calls_pending) noexcept { return watch_.caller_done(calls_pending); }
    void receiver_read(bool calls_pending) noexcept { watch_.receiver_read(calls_pending); }
    bool receiver_watches() const noexcept { return watch_.receiver_watches(); }

    // A spin before sleeping (spin.hpp).
    detail::reply_wait waiting() const noexcept { return detail::reply_wait(spin_, several_cpus_); }

   private:
    const std::chrono::microseconds spin_;
    const bool several_cpus_;
    detail::socket_watch watch_;
    detail::request_batching batching_;
  };

  class server_hooks {
   public:
    explicit server_hooks(const server_setup& setup)
        : one_cpu_(!setup.knobs.several_cpus()),
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
};

}  // namespace tuning
GEERPC_END_NAMESPACE
