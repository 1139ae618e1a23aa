// geerpc: a header-only C++20 RPC library with deadlines that hold.
// https://github.com/geerpc/geerpc — MIT licence. Include this one header.
#pragma once

#ifndef GEERPC_OUTERMOST_ENTRY
#define GEERPC_OUTERMOST_ENTRY 1  // this header ends the internal macros' scope
#endif

#include "balanced_client.hpp"
#include "call_context.hpp"
#include "client.hpp"
#include "codec/binary.hpp"
#include "codec/type_kind.hpp"
#include "config.hpp"
#include "context.hpp"
#include "discovery.hpp"
#include "error.hpp"
#include "fixed_string.hpp"
#include "interceptor.hpp"
#include "options.hpp"
#include "responder.hpp"
#include "runtime.hpp"
#include "server.hpp"
#include "service.hpp"
#include "transport/fwd.hpp"
#include "wire/frame.hpp"
#include "wire/handshake.hpp"

// The engines, unless this program compiles them once elsewhere (transport/link.hpp). client.hpp
// and server.hpp include them too; the single header has them here, after everything else.
#if !defined(GEERPC_SEPARATE_COMPILATION) || defined(GEERPC_IMPLEMENTATION)
#include "transport/engines.hpp"
#endif

// The internal macros are not part of the API (detail/macro_unscope.hpp). A header first included
// after this one defines them again, and an entry header (transport/engines.hpp for a transport of
// one's own, etcd.hpp) ends their scope again.

#if GEERPC_OUTERMOST_ENTRY == 1
#include "detail/macro_unscope.hpp"
#endif
