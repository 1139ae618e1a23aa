// geerpc: TLS for geerpc connections (the geerpc::tls CMake target, which brings OpenSSL 3; the
// core needs none of it). tls::client(...) and tls::server(...) make the stream session factories
// that options::session and server_options::session take; "tls@host:port" dials with one.
// Not part of <geerpc/geerpc.hpp> or the single header. docs/transports.md, "TLS".
#pragma once

#ifndef GEERPC_OUTERMOST_ENTRY
#define GEERPC_OUTERMOST_ENTRY 8  // this header ends the internal macros' scope
#endif

#include "tls/context.hpp"
#include "tls/errors.hpp"
#include "tls/factories.hpp"
#include "tls/peer_certificate.hpp"
#include "tls/session.hpp"
#include "tls/settings.hpp"

#if GEERPC_OUTERMOST_ENTRY == 8
#include "detail/macro_unscope.hpp"
#endif
