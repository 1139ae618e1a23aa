// geerpc: the transport policies, chosen as the first template argument of basic_client and
// basic_server, by name only: this header declares the engines they stand for without their
// definitions, so that the front classes compile without them (transport/link.hpp). The engines
// themselves are in transport/policies.hpp. docs/transports.md says when to pick which.
#pragma once

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace tuning {
struct none;       // tuning/none.hpp
struct automatic;  // tuning/automatic.hpp
}  // namespace tuning

namespace detail {
template <class Tuning>
class threaded_client_engine;  // transport/threaded/client.hpp
template <class Tuning>
class threaded_server_engine;  // transport/threaded/server.hpp
template <class Tuning>
class blocking_client_engine;  // transport/blocking/client.hpp
class blocking_server_engine;  // transport/blocking/server.hpp (no heuristic: one for every tuning)
}  // namespace detail

// A receiving std::jthread per client connection, any number of concurrent calls, async calls; on
// the server an elastic pool of handler threads around one epoll set. `Tuning` chooses the
// performance heuristics (tuning/none.hpp names its strategies): tuning::automatic by default,
// tuning::none for the plain core.
template <class Tuning>
struct basic_threaded {
  using tuning_type = Tuning;
  using client_engine = detail::threaded_client_engine<Tuning>;
  using server_engine = detail::threaded_server_engine<Tuning>;
  static constexpr bool supports_async = true;
};

// The default transport.
using threaded = basic_threaded<tuning::automatic>;

// No client thread: the caller does its own I/O, one call on the wire at a time. On the server a
// thread per connection runs its requests in order. `Tuning` chooses the client's heuristics (a
// caller's spin before it sleeps, and how long a free connection may go to a later caller before
// the first waiter): tuning::automatic by default, tuning::none for the plain core. The server has
// none: its engine is the same for every tuning.
template <class Tuning>
struct basic_blocking {
  using tuning_type = Tuning;
  using client_engine = detail::blocking_client_engine<Tuning>;
  using server_engine = detail::blocking_server_engine;
  static constexpr bool supports_async = false;
};

using blocking = basic_blocking<tuning::automatic>;

GEERPC_END_NAMESPACE
