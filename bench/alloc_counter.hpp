// Counts heap allocations in a benchmark process (bench mode), so that allocations per call can be
// reported for client and server. alloc_counter.cpp replaces the global operator new.
#pragma once

#include <atomic>
#include <cstdint>

namespace bench {
std::uint64_t allocations();  // since the process started
}
