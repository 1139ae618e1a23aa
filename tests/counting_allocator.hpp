// An allocator that counts what is asked of it (in one thread at a time): how many allocations and
// how many bytes, to compare what a decode allocated with what it charged, or to prove a refused
// count allocated nothing. Shared by support.hpp and the codec tests.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace test {

struct allocation_log {
  static inline std::size_t allocations = 0;
  static inline std::size_t bytes = 0;
  static void reset() { allocations = bytes = 0; }
};

template <class T>
struct counting_allocator {
  using value_type = T;
  counting_allocator() = default;
  template <class U>
  counting_allocator(const counting_allocator<U>&) noexcept {}  // NOLINT: rebinding must be implicit

  T* allocate(std::size_t n) {
    ++allocation_log::allocations;
    allocation_log::bytes += n * sizeof(T);  // NOLINT(bugprone-sizeof-expression): T may be a pointer type
    return std::allocator<T>{}.allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>{}.deallocate(p, n); }
};
template <class T, class U>
bool operator==(const counting_allocator<T>&, const counting_allocator<U>&) noexcept {
  return true;
}

using counted_string = std::basic_string<char, std::char_traits<char>, counting_allocator<char>>;

}  // namespace test
