// geerpc: the Linux futex, for a caller waiting on one reply. std::atomic::wait in libstdc++ 12
// first spins with a dozen sched_yield calls, each a system call; a waiter that knows what it is
// waiting for does better to say whether it sleeps, so that the waker skips the wake-up when
// nobody sleeps.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t), "futex needs a plain 32-bit word");

// Sleeps while `word` holds `expected` (returns at once if it does not; may wake spuriously).
inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) noexcept {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

inline void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

}  // namespace detail
GEERPC_END_NAMESPACE
