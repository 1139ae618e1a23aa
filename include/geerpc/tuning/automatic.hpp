// geerpc: tuning::automatic, the default tuning of the threaded transport: each heuristic of this
// folder behind the hooks that tuning::none (none.hpp) names, each with its knob in
// tuning::settings. bench/README.md says what each one buys. The server's hooks are in
// automatic_server.hpp.
#pragma once

#include <chrono>
#include <cstddef>
#include <span>

#include "../config.hpp"
#include "../net/frame_writer.hpp"
#include "none.hpp"
#include "own_reply.hpp"
#include "request_batching.hpp"
#include "settings.hpp"
#include "spin.hpp"

GEERPC_BEGIN_NAMESPACE
namespace tuning {

struct automatic {
  class client_hooks {
   public:
    explicit client_hooks(const client_setup& setup)
        : waiting_callers_(setup.waiting_callers),
          spin_(setup.knobs.spin),
          several_cpus_(setup.knobs.several_cpus(setup.runtime_cpus)),
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
    detail::reply_wait waiting() const noexcept { return detail::reply_wait(waiting_callers_, spin_, several_cpus_); }

   private:
    std::atomic<int>& waiting_callers_;
    const std::chrono::microseconds spin_;
    const bool several_cpus_;
    detail::socket_watch watch_;
    detail::request_batching batching_;
  };

  // With the engines that use them: automatic_server.hpp (a program that only makes calls
  // compiles no server).
  class server_hooks;
};

}  // namespace tuning
GEERPC_END_NAMESPACE
