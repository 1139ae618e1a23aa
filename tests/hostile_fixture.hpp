// The hostile-peer tests' fixture (hostile_test.cpp, hostile_limits_test.cpp): a server under
// hostile_limits(), a raw peer past the handshake, and the check that a well-behaved client on
// another connection is still served.
#pragma once

#include <memory>

#include "catch.hpp"
#include "hostile_limits.hpp"
#include "support.hpp"

namespace test {

template <class Transport>
struct hostile_fixture {
  arith_server<Transport> s{hostile_limits()};

  // A well-behaved client on its own connection still gets its answer.
  bool others_served() {
    auto client = geerpc::try_dial<Transport>(s.address, {.timeouts = {.connect = 2s}});
    if (!client) return false;
    auto r = client->template try_call<int>(geerpc::with_timeout(2s), "Arith.Sum", Args{20, 22});
    return r && *r == 42;
  }

  // A raw peer past the handshake.
  std::unique_ptr<raw_peer> greeted() {
    auto peer = std::make_unique<raw_peer>(s.address);
    peer->send_hello();
    auto reply = peer->read_hello_reply();
    REQUIRE(reply);
    REQUIRE(reply->accepted);
    return peer;
  }
};

}  // namespace test
