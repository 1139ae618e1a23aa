// The benchmark service of BENCHMARK.md, shared by geerpc's benchmark server and client.
#pragma once

#include <cstdint>
#include <geerpc/geerpc.hpp>
#include <string>

#include "alloc_counter.hpp"

namespace bench {

struct SumArgs {
  std::int32_t a;
  std::int32_t b;
};

struct Arith {
  std::int32_t sum(const SumArgs& x) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(x.a) + static_cast<std::uint32_t>(x.b));
  }
  std::string echo(const std::string& bytes) { return bytes; }
  // Not a workload: lets the client read the server's allocation count around a timed phase.
  std::uint64_t allocations(const std::uint8_t&) { return bench::allocations(); }
};

using ArithApi = geerpc::service<"Arith", geerpc::method<"Sum", &Arith::sum>, geerpc::method<"Echo", &Arith::echo>,
                                 geerpc::method<"Allocations", &Arith::allocations>>;

}  // namespace bench
