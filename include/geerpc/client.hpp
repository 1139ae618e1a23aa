// geerpc: the client. dial() connects and handshakes within options.timeouts.connect (the address's
// prefix chooses the way in: "host:port", "unix@/path", "http@host:port"); then the calls, from
// the call surface it shares with balanced_client (client/call_surface.hpp):
//
//   int sum = client.call<int>("Foo.Sum", Args{1, 2});                          // by name
//   int sum = client.call<int>(geerpc::with_timeout(1s), "Foo.Sum", Args{1, 2}); // with a deadline
//   int sum = client.call<int>("Math.Add", 1, 2);                               // any number of arguments
//   int sum = client.call<FooApi::fn<"Sum">>({1, 2});                           // typed stub
//   int sum = client.call<MathApi::fn<"Add">>(1, 2);
//   geerpc::result<int> r = client.try_call<int>("Foo.Sum", Args{1, 2});        // no exceptions
//   auto f = client.async_call<int>("Foo.Sum", Args{1, 2}); ... f.get();        // threaded only
//   client.async_call<int>("Foo.Sum", Args{1, 2}).then([](geerpc::result<int> r) { ... });
//   int sum = co_await client.async_call<int>("Foo.Sum", Args{1, 2});           // in any coroutine
//   client.call<int>(geerpc::with_metadata("authorization", token), "Kv.Size");  // with metadata
//
// Many threads may call through one client at once. When the connection breaks, every pending
// call fails with errc::connection_closed, and so does every later one.
#pragma once

#ifndef GEERPC_OUTERMOST_ENTRY
#define GEERPC_OUTERMOST_ENTRY 5  // this header ends the internal macros' scope
#endif

#include "client/basic_client.hpp"

// The engines, unless this program compiles them once elsewhere (transport/link.hpp).
#if !defined(GEERPC_SEPARATE_COMPILATION) || defined(GEERPC_IMPLEMENTATION)
#include "transport/client_engines.hpp"
#endif

#if GEERPC_OUTERMOST_ENTRY == 5
#include "detail/macro_unscope.hpp"
#endif
