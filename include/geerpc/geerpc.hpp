// geerpc: a header-only C++20 RPC library with deadlines that hold.
// https://github.com/geerpc/geerpc — MIT licence. Include this one header.
#pragma once

#include "config.hpp"
#include "error.hpp"
#include "fixed_string.hpp"
#include "context.hpp"
#include "options.hpp"
#include "codec/type_kind.hpp"
#include "codec/binary.hpp"
#include "wire/handshake.hpp"
#include "wire/frame.hpp"
#include "service.hpp"
#include "transport/policies.hpp"
#include "client.hpp"
#include "server.hpp"
