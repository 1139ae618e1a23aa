// geerpc: the end of the internal macros' scope (config.hpp, detail/assert.hpp). The outermost entry
// header of a translation unit includes this at its end; the user's code after it sees none of
// them. No #pragma once: each entry header that comes next, outermost in its turn, ends with it.
//
// An entry header is one a user includes directly: geerpc.hpp, implementation.hpp, etcd.hpp,
// transport/engines.hpp, and client.hpp, server.hpp and balanced_client.hpp for a program that
// needs only one side. Each one begins with
//
//   #ifndef GEERPC_OUTERMOST_ENTRY
//   #define GEERPC_OUTERMOST_ENTRY <its own number>
//   #endif
//
// and ends with
//
//   #if GEERPC_OUTERMOST_ENTRY == <its own number>
//   #include "detail/macro_unscope.hpp"
//   #endif
//
// so that an entry header included by another (implementation.hpp includes geerpc.hpp) leaves the
// macros to the outer one. A new internal macro is #undef'd here too.
#undef GEERPC_BEGIN_NAMESPACE
#undef GEERPC_END_NAMESPACE
#undef GEERPC_ASSERT
#undef GEERPC_OUTERMOST_ENTRY
