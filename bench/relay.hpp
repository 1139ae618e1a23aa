// The two-hop timeout storm's middle server (B in A -> B -> C): its Arith passes every call on to
// the server behind it, so that the storm's caller (A) reaches the slow handler (C) through B.
// Arith.Slow is passed on as an asynchronous call with the handler's context
// (geerpc::context::from: B's deadline less its reserve, B's stop_token, and the caller's deadline
// key, which B's server propagates), answered through a responder when C's answer or its own
// deadline comes: 1,000 calls in flight hold no thread of B's. The others are quick synchronous
// calls on the handler's thread, which inherit the same way without being told.
#pragma once

#include <cstdint>
#include <geerpc/geerpc.hpp>
#include <string>
#include <utility>
#include <vector>

#include "arith.hpp"

namespace bench {

struct Relay {
  explicit Relay(const std::string& behind) : downstream(geerpc::dial(behind)) {}

  void slow(const SumArgs& x, const geerpc::call_context& ctx, geerpc::responder<std::int32_t> reply) {
    downstream.async_call<std::int32_t>(geerpc::context::from(ctx), "Arith.Slow", x)
        .then([reply = std::move(reply)](geerpc::result<std::int32_t> r) mutable {
          if (r)
            reply(*r);
          else
            reply.fail(r.error());
        });
  }
  std::int32_t sum(const SumArgs& x) { return downstream.call<std::int32_t>("Arith.Sum", x); }
  std::vector<std::int64_t> stops(const std::uint8_t& x) {
    return downstream.call<std::vector<std::int64_t>>("Arith.Stops", x);
  }
  std::vector<std::int64_t> told(const std::uint8_t& x) {
    return downstream.call<std::vector<std::int64_t>>("Arith.Told", x);
  }

  geerpc::client downstream;
};

using RelayApi = geerpc::service<"Arith", geerpc::method<"Sum", &Relay::sum>, geerpc::method<"Slow", &Relay::slow>,
                                 geerpc::method<"Stops", &Relay::stops>, geerpc::method<"Told", &Relay::told>>;

}  // namespace bench
