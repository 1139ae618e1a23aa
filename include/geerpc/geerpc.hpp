// geerpc: a header-only C++20 RPC library with deadlines that hold.
// https://github.com/geerpc/geerpc — MIT licence. Include this one header.
#pragma once

#include "client.hpp"
#include "codec/binary.hpp"
#include "codec/type_kind.hpp"
#include "config.hpp"
#include "context.hpp"
#include "error.hpp"
#include "fixed_string.hpp"
#include "options.hpp"
#include "server.hpp"
#include "service.hpp"
#include "transport/policies.hpp"
#include "wire/frame.hpp"
#include "wire/handshake.hpp"

// Internal macros are not part of the API.
#undef GEERPC_BEGIN_NAMESPACE
#undef GEERPC_END_NAMESPACE
#undef GEERPC_ASSERT
