// A check turned off (GEERPC_ENABLE_ASSERTS=0) still compiles its condition, so that a check
// naming something that no longer exists breaks every build, not only the debug ones.
// expect-error: no_such_counter
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#undef GEERPC_ENABLE_ASSERTS
#define GEERPC_ENABLE_ASSERTS 0
#include <geerpc/detail/assert.hpp>

int main() {
  int counter = 0;
#ifdef GEERPC_CONTROL
  GEERPC_ASSERT(counter == 0, "a declared name");
#else
  GEERPC_ASSERT(no_such_counter == 0, "an undeclared name");
#endif
  return counter;
}
