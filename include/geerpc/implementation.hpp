// geerpc: the engines of the standard transports (threaded, basic_threaded<tuning::none>,
// blocking), compiled once, for a program that builds with GEERPC_SEPARATE_COMPILATION
// (transport/link.hpp). Include this header in exactly one source file of that program, before any
// other geerpc header or not, and nothing else there is needed:
//
//   // geerpc.cpp
//   #include <geerpc/implementation.hpp>
//
// CMake's geerpc::compiled target does this for you. With the single header, the same file is:
//
//   #define GEERPC_SEPARATE_COMPILATION
//   #define GEERPC_IMPLEMENTATION
//   #include <geerpc/geerpc.hpp>
#pragma once

#ifndef GEERPC_OUTERMOST_ENTRY
#define GEERPC_OUTERMOST_ENTRY 2  // this header ends the internal macros' scope
#endif

#if !defined(GEERPC_SEPARATE_COMPILATION)
#define GEERPC_SEPARATE_COMPILATION
#endif
#define GEERPC_IMPLEMENTATION

#include "geerpc.hpp"
#include "transport/engines.hpp"  // also when geerpc.hpp came earlier, without the engines

#if GEERPC_OUTERMOST_ENTRY == 2
#include "detail/macro_unscope.hpp"
#endif
