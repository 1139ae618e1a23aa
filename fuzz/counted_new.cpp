// The fuzzers' global operator new and delete, every form of them, replaced for the whole program:
// each counts the bytes asked of it while fuzz::counting is set (counted_new.hpp), so that a
// fuzzer checks a decode's memory charges against what it really took.
#include <cstddef>
#include <cstdlib>
#include <new>

#include "counted_new.hpp"

namespace fuzz {
std::size_t allocated = 0;
bool counting = false;
}  // namespace fuzz

namespace {

void* allocate(std::size_t size, std::size_t alignment) {
  if (fuzz::counting) fuzz::allocated += size;
  void* p = nullptr;
  if (alignment <= alignof(std::max_align_t))
    p = std::malloc(size == 0 ? 1 : size);
  else if (::posix_memalign(&p, alignment, size == 0 ? 1 : size) != 0)
    p = nullptr;
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

// Replaced for the whole fuzzer binary, every form of them, so that no block taken from one
// allocator is returned to another (ASan checks that).
void* operator new(std::size_t size) { return allocate(size, alignof(std::max_align_t)); }
void* operator new[](std::size_t size) { return allocate(size, alignof(std::max_align_t)); }
void* operator new(std::size_t size, std::align_val_t alignment) {
  return allocate(size, static_cast<std::size_t>(alignment));
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  return allocate(size, static_cast<std::size_t>(alignment));
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return allocate(size, alignof(std::max_align_t));
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  try {
    return allocate(size, static_cast<std::size_t>(alignment));
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t& tag) noexcept {
  return operator new(size, alignment, tag);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
