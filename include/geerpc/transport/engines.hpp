// geerpc: the engines of every transport, and the operations the front classes ask of them
// (transport/link.hpp) defined over them: the client's (client_engines.hpp) and the server's
// (server_engines.hpp). Header-only programs get each half through client.hpp and server.hpp; with
// GEERPC_SEPARATE_COMPILATION only the source file that includes <geerpc/implementation.hpp> does,
// and compiles the standard transports' engines there, once.
#pragma once

#ifndef GEERPC_OUTERMOST_ENTRY
#define GEERPC_OUTERMOST_ENTRY 4  // this header ends the internal macros' scope
#endif

#include "../config.hpp"
#include "client_engines.hpp"
#include "link.hpp"
#include "policies.hpp"
#include "server_engines.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

#if defined(GEERPC_SEPARATE_COMPILATION) && defined(GEERPC_IMPLEMENTATION)
// The one place a program built with GEERPC_SEPARATE_COMPILATION compiles these
// (<geerpc/implementation.hpp>).
template struct client_link<threaded>;
template struct client_link<basic_threaded<tuning::none>>;
template struct client_link<blocking>;
template struct server_link<threaded>;
template struct server_link<basic_threaded<tuning::none>>;
template struct server_link<blocking>;
#endif

}  // namespace detail
GEERPC_END_NAMESPACE

#if GEERPC_OUTERMOST_ENTRY == 4
#include "../detail/macro_unscope.hpp"
#endif
