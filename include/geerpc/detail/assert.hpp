// geerpc: GEERPC_ASSERT(condition, "message"), the check on an invariant that geerpc's own code
// relies on (a request answered once, a timer queued at most once, a counter that never goes
// below zero). A failed check is a bug in geerpc, never a peer's doing: hostile input gets an
// error, not an assertion. It prints where and what to stderr and aborts, so that a sanitizer or a
// core dump shows the state that broke it.
//
// On when GEERPC_ENABLE_ASSERTS is 1, which it is by default unless NDEBUG is defined (as
// <cassert>); a user may define it to 1 to check a release build, or to 0 to drop the checks from a
// debug one. geerpc's own tests and examples build with it on. When off, the condition is not
// evaluated, but is still compiled (inside sizeof), so that a variable used only by a check
// draws no "unused" warning and a check never rots.
//
// GEERPC_ASSERT is internal: the outermost entry header #undefs it at its end. Like config.hpp, this
// file has no #pragma once, so that a header first reached after that gets it again.
#include "../config.hpp"

#ifndef GEERPC_DETAIL_ASSERT_HPP
#define GEERPC_DETAIL_ASSERT_HPP

#include <cstdio>
#include <cstdlib>

#ifndef GEERPC_ENABLE_ASSERTS
#ifdef NDEBUG
#define GEERPC_ENABLE_ASSERTS 0
#else
#define GEERPC_ENABLE_ASSERTS 1
#endif
#endif

GEERPC_BEGIN_NAMESPACE
namespace detail {

// Out of line from the check, so that the passing path stays a compare and a branch.
[[noreturn]] inline void assert_failed(const char* file, int line, const char* condition,
                                       const char* message) noexcept {
  std::fprintf(stderr, "%s:%d: geerpc: assertion failed: %s: %s\n", file, line, condition, message);
  std::fflush(stderr);
  std::abort();
}

}  // namespace detail
GEERPC_END_NAMESPACE

#endif  // GEERPC_DETAIL_ASSERT_HPP

#ifndef GEERPC_ASSERT
#if GEERPC_ENABLE_ASSERTS
#define GEERPC_ASSERT(condition, message) \
  ((condition) ? static_cast<void>(0) : ::geerpc::detail::assert_failed(__FILE__, __LINE__, #condition, message))
#else
#define GEERPC_ASSERT(condition, message) static_cast<void>(sizeof(!(condition)))
#endif
#endif
