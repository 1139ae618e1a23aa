// geerpc: service discovery on etcd v3 (the geerpc::etcd CMake target, which brings libcurl and
// nlohmann-json; the core needs neither). Servers register with etcd::registration; balanced
// clients find them with etcd::discovery. Not part of <geerpc/geerpc.hpp> or the single header.
#pragma once

#ifndef GEERPC_OUTERMOST_ENTRY
#define GEERPC_OUTERMOST_ENTRY 3  // this header ends the internal macros' scope
#endif

#include "etcd/discovery.hpp"
#include "etcd/gateway.hpp"
#include "etcd/options.hpp"
#include "etcd/registration.hpp"

#if GEERPC_OUTERMOST_ENTRY == 3
#include "detail/macro_unscope.hpp"
#endif
