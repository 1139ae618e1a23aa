// geerpc: version, the ABI namespace, and the scope of the internal macros.
//
// Every header that uses GEERPC_BEGIN_NAMESPACE or GEERPC_END_NAMESPACE includes this one, and every
// header that uses GEERPC_ASSERT includes detail/assert.hpp. The entry headers (geerpc.hpp,
// implementation.hpp, etcd.hpp, transport/engines.hpp) #undef these internal macros at their end
// (detail/macro_unscope.hpp), so a user's code never sees them. So that a header first reached
// after that (<geerpc/etcd.hpp> after <geerpc/geerpc.hpp>) still finds them, this file has no
// #pragma once: its once-only part is guarded, and its macros are defined again whenever they are
// missing. (nlohmann/json's macro_scope.hpp and macro_unscope.hpp pair works the same way.)
// An inline namespace lets two incompatible geerpc versions link into one program without ODR
// clashes, while users keep writing plain `geerpc::`.
#ifndef GEERPC_BEGIN_NAMESPACE
#define GEERPC_BEGIN_NAMESPACE \
  namespace geerpc {           \
  inline namespace v0 {
#endif
#ifndef GEERPC_END_NAMESPACE
#define GEERPC_END_NAMESPACE \
  }                          \
  }
#endif

#ifndef GEERPC_CONFIG_HPP
#define GEERPC_CONFIG_HPP

#define GEERPC_VERSION_MAJOR 0
#define GEERPC_VERSION_MINOR 1
#define GEERPC_VERSION_PATCH 0
#define GEERPC_VERSION (GEERPC_VERSION_MAJOR * 10000 + GEERPC_VERSION_MINOR * 100 + GEERPC_VERSION_PATCH)

#if !defined(__linux__)
#error "geerpc needs Linux: its transports use epoll, eventfd and poll"
#endif

GEERPC_BEGIN_NAMESPACE
inline constexpr const char* version = "0.1.0";
GEERPC_END_NAMESPACE

#endif  // GEERPC_CONFIG_HPP
