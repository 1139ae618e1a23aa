// geerpc: tuning::automatic, the default tuning of both transports: each heuristic of this folder
// behind the strategies that tuning::none (none.hpp) names, each with its knob in
// tuning::settings. bench/README.md says what each one buys. The server's strategies are in
// automatic_server.hpp.
#pragma once

#include <cstddef>
#include <span>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../net/frame_writer.hpp"
#include "none.hpp"
#include "own_reply.hpp"
#include "request_batching.hpp"
#include "settings.hpp"
#include "spin.hpp"

GEERPC_BEGIN_NAMESPACE
namespace tuning {

struct automatic {
  // Request batching (request_batching.hpp): requests of callers woken together leave together.
  class client_send {
   public:
    using clock = std::chrono::steady_clock;
    explicit client_send(const client_setup& setup)
        : batching_(setup.writer, setup.scheduler, setup.knobs.batching, setup.broken, setup.engine) {}

    bool caller_begins(clock::time_point now) noexcept { return batching_.caller_may_hold(now); }
    net::frame_writer::status send(std::span<const std::byte> frame, bool may_hold) {
      return batching_.send_request(frame, may_hold);
    }
    void caller_due() noexcept { batching_.arrive(); }
    void caller_returns(clock::time_point now) { batching_.caller_returns(now); }
    class reader_turn {
     public:
      explicit reader_turn(detail::request_batching& batching) noexcept : batching_(batching) { batching_.arrive(); }
      ~reader_turn() { batching_.reader_leaves(); }
      reader_turn(const reader_turn&) = delete;
      reader_turn& operator=(const reader_turn&) = delete;

     private:
      detail::request_batching& batching_;
    };
    reader_turn reading() noexcept { return reader_turn(batching_); }
    void stop() { batching_.stop(); }

    // The blocking client's: a caller that finds the connection free takes it at once, though
    // others wait, until the first waiter has waited this long; then the turn is handed to it. A
    // thread switch saved per call under load, against fairness: the bound keeps anyone from
    // starving.
    static constexpr std::chrono::milliseconds overtake_limit{1};

   private:
    detail::request_batching batching_;
  };

  // A lone caller reads its own reply (own_reply.hpp), and spins for a moment before it sleeps
  // (spin.hpp). The blocking client's caller always reads its own reply: it uses the spin alone.
  class client_wait {
   public:
    explicit client_wait(const client_setup& setup) noexcept
        : client_wait(wait_setup{setup.knobs, setup.runtime_cpus, setup.waiting_callers}) {}
    explicit client_wait(const wait_setup& setup) noexcept
        : waiting_callers_(setup.waiting_callers), spin_(setup.knobs.spin), several_cpus_(setup.runtime_cpus > 1) {}

    static constexpr bool callers_read = true;
    bool call_added(bool may_read, bool& wake_receiver) noexcept { return watch_.call_added(may_read, wake_receiver); }
    bool caller_done(bool calls_pending) noexcept { return watch_.caller_done(calls_pending); }
    void receiver_read(bool calls_pending) noexcept { watch_.receiver_read(calls_pending); }
    bool receiver_watches() const noexcept { return watch_.receiver_watches(); }

    using waiter = detail::reply_wait;
    waiter waiting() const noexcept { return waiter(waiting_callers_, spin_, several_cpus_); }

   private:
    std::atomic<int>& waiting_callers_;
    const std::chrono::microseconds spin_;
    const bool several_cpus_;
    detail::socket_watch watch_;
  };

  // With the engines that use them: automatic_server.hpp (a program that only makes calls
  // compiles no server).
  class server_schedule;
  class pool_grow;
};

}  // namespace tuning
GEERPC_END_NAMESPACE
