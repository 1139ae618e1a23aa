// The server limits the hostile-peer tests run under: small, so that every case is quick.
#pragma once

#include <chrono>
#include <geerpc/options.hpp>

namespace test {

inline geerpc::server_options hostile_limits() {
  using namespace std::chrono_literals;
  geerpc::server_options opts;
  opts.limits.max_frame_size = 64u << 10;
  opts.limits.max_inflight_per_connection = 4;
  opts.timeouts.handshake = 200ms;
  opts.timeouts.frame = 200ms;
  opts.limits.max_pending_output = 1u << 20;
  return opts;
}

}  // namespace test
