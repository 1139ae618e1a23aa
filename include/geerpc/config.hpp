// geerpc: version and the ABI namespace every other header opens.
#pragma once

#define GEERPC_VERSION_MAJOR 0
#define GEERPC_VERSION_MINOR 1
#define GEERPC_VERSION_PATCH 0
#define GEERPC_VERSION (GEERPC_VERSION_MAJOR * 10000 + GEERPC_VERSION_MINOR * 100 + GEERPC_VERSION_PATCH)

// An inline namespace lets two incompatible geerpc versions link into one program without ODR
// clashes, while users keep writing plain `geerpc::`.
#define GEERPC_BEGIN_NAMESPACE \
  namespace geerpc {           \
  inline namespace v0 {
#define GEERPC_END_NAMESPACE \
  }                          \
  }

#if !defined(__linux__)
#error "geerpc needs Linux: its transports use epoll, eventfd and poll"
#endif

GEERPC_BEGIN_NAMESPACE
inline constexpr const char* version = "0.1.0";
GEERPC_END_NAMESPACE
