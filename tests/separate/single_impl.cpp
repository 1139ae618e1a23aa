// The engines of the single-header build of the separate-compilation test (user_a.cpp): the file a
// program using the single header writes once. (The build defines GEERPC_SEPARATE_COMPILATION for
// every file already.)
#if !defined(GEERPC_SEPARATE_COMPILATION)
#define GEERPC_SEPARATE_COMPILATION
#endif
#define GEERPC_IMPLEMENTATION
#include <geerpc/geerpc.hpp>
