// geerpc: the threaded server's own numbers, in one place (docs/transports.md, "Settings and
// constants", lists them with the rest). None is a setting: each trades a little memory or a few
// system calls inside the engine, and what a user has reason to change (threads, limits,
// timeouts) is in server_options already.
#pragma once

#include <cstddef>
#include "../../detail/chrono.hpp"

#include "../../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

struct threaded_server_constants {
  // The buffer a thread reads into once it leads (made then: most threads of a grown pool never
  // lead): requests per recv against memory per leading thread.
  static constexpr std::size_t read_buffer = 64u << 10;
  // Events one epoll_wait returns: ready connections served per wake-up against the array on the
  // leader's stack.
  static constexpr int max_events = 64;
  // After the system refused a thread, how long the pool starts none: a refusal (a pids limit) is
  // not retried for every request meanwhile.
  static constexpr std::chrono::milliseconds thread_start_retry{50};
  // After accept() ran out of descriptors (or kernel memory), how long the listener is left unwatched:
  // a listener that stays ready would otherwise wake its leader without end.
  static constexpr std::chrono::milliseconds accept_retry{50};
};

}  // namespace detail
GEERPC_END_NAMESPACE
