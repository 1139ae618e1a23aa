// geerpc: reusable per-thread buffers for building frames, so a warm call path does not allocate.
// Each use gets its own Tag: a handler that makes a client call while its reply is being built must
// not have the two share a buffer. A buffer holds only the frame being built: whatever client or
// server used it last, nothing in it reaches the next use but its capacity.
#pragma once

#include <cstddef>
#include <vector>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

template <class Tag>
std::vector<std::byte>& frame_scratch() {
  thread_local std::vector<std::byte> buffer;
  buffer.clear();
  return buffer;
}

// After an unusually large frame, give the memory back instead of keeping it for the thread's life.
inline void trim_scratch(std::vector<std::byte>& buffer) {
  if (buffer.capacity() > (1u << 20)) std::vector<std::byte>().swap(buffer);
}

}  // namespace detail
GEERPC_END_NAMESPACE
