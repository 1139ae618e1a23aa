// geerpc: the blocks a writer's queue is made of (net/chunk_queue.hpp), and where they come from.
// A block of the standard size comes from the system's pages, not from malloc, and goes back to
// them, through a small free list the whole process shares.
//
// Why not malloc: a queue that grows on handler threads and shrinks on whichever thread drains it
// leaves freed blocks in the allocating thread's arena, resident until that thread allocates again,
// so a server's memory would follow the sum of every arena's peak rather than what it holds now.
// Pages mapped per block go back to the system as soon as they are unmapped: memory held is memory
// counted. What that costs is a system call and the page faults of a fresh block, only on the slow
// path (a peer not reading as fast as it is answered); the free list, bounded in size, spares the
// common case of a queue that grows and drains over and over, at the price of that much memory kept
// (`kept_most` blocks) for the life of the process once it has been used.
//
// Under AddressSanitizer blocks come from operator new instead, so that an overrun meets a redzone.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>

#include "../config.hpp"
#include "../detail/assert.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define GEERPC_CHUNKS_FROM_NEW 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GEERPC_CHUNKS_FROM_NEW 1
#endif
#endif

GEERPC_BEGIN_NAMESPACE
namespace net {

// One block: this header, then its bytes. Bytes [begin, end) of data() wait to be sent.
struct output_chunk {
  static constexpr std::size_t header = 64;  // keeps data() on a cache line of its own
  output_chunk* next = nullptr;
  std::uint32_t begin = 0;
  std::uint32_t end = 0;

  std::byte* data() noexcept { return reinterpret_cast<std::byte*>(this) + header; }
};
static_assert(sizeof(output_chunk) <= output_chunk::header);

class chunk_pool {
 public:
  // The standard block: what a writer whose limit allows it uses, and what the free list keeps.
  static constexpr std::size_t standard = 64u << 10;
  // The smallest block: a writer's limit below it still lets it queue one.
  static constexpr std::size_t smallest = 1u << 10;
  // Blocks kept for reuse, for the whole process: 2 MiB.
  static constexpr std::size_t kept_most = 32;

  // The block size for a writer that may hold `limit` bytes: the standard one, or the largest power
  // of two within a smaller limit.
  static constexpr std::size_t block_size(std::size_t limit) noexcept {
    return std::clamp(std::bit_floor(std::max<std::size_t>(limit, 1)), smallest, standard);
  }

  // The one free list of the process. Never destroyed: a writer may give a block back during static
  // destruction.
  static chunk_pool& shared() noexcept {
    alignas(chunk_pool) static std::byte storage[sizeof(chunk_pool)];
    static chunk_pool* const pool = ::new (storage) chunk_pool();
    return *pool;
  }

  // An empty block of `size` bytes (header included). Throws std::bad_alloc.
  output_chunk* take(std::size_t size) {
    if (size == standard) {
      std::lock_guard lock(mutex_);
      if (output_chunk* const c = free_) {
        free_ = c->next;
        --kept_;
        return ::new (c) output_chunk();  // as new: no bytes, no next
      }
    }
    return ::new (allocate(size)) output_chunk();
  }
  // Takes back a block take(size) gave.
  void give(output_chunk* c, std::size_t size) noexcept {
    GEERPC_ASSERT(c != nullptr, "chunk_pool: a block to give back");
    if (size == standard) {
      std::lock_guard lock(mutex_);
      if (kept_ < kept_most) {
        c->next = free_;
        free_ = c;
        ++kept_;
        return;
      }
    }
    release(c, size);
  }

 private:
  chunk_pool() = default;

  static void* allocate(std::size_t size) {
#if defined(GEERPC_CHUNKS_FROM_NEW)
    return ::operator new(size);
#else
    if (size < standard) return ::operator new(size);  // a small limit's block: malloc keeps little
    void* const p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return p;
#endif
  }
  static void release(output_chunk* c, [[maybe_unused]] std::size_t size) noexcept {
    c->~output_chunk();
#if defined(GEERPC_CHUNKS_FROM_NEW)
    ::operator delete(static_cast<void*>(c));
#else
    if (size < standard)
      ::operator delete(static_cast<void*>(c));
    else
      ::munmap(c, size);
#endif
  }

  std::mutex mutex_;
  output_chunk* free_ = nullptr;  // a stack of blocks of the standard size, linked through next
  std::size_t kept_ = 0;
};

}  // namespace net
GEERPC_END_NAMESPACE

#undef GEERPC_CHUNKS_FROM_NEW
