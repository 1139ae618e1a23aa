// geerpc's engines, compiled once for the target that links geerpc::compiled (CMakeLists.txt),
// whose other sources then compile only the front classes (GEERPC_SEPARATE_COMPILATION,
// include/geerpc/transport/link.hpp).
#include <geerpc/implementation.hpp>
