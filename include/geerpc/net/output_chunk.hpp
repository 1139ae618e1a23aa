// geerpc: the blocks a writer's queue is made of (net/chunk_queue.hpp), and where they come from:
// the allocator, through a small free list that the writers of one runtime share (runtime.hpp).
//
// What fixed-size blocks trade. A block freed is the size of every other block, so the next block
// taken reuses it, and a queue holds what it holds, never an outgrown buffer. Blocks are taken on
// handler threads and given back on whichever thread sends them, though, and a block given back to
// malloc stays in the arena of the thread that took it until that thread takes another. The free
// list, shared by every thread of a runtime and bounded (`kept_most` blocks), makes most blocks go
// round through it instead, from whoever sent them to whoever queues next; it keeps that much
// memory for the life of its runtime once used, and beyond it the arenas keep what their threads
// freed, in blocks their next queue reuses. Pages mapped per block would leave nothing behind, but
// unmapping a page shared by threads costs a TLB shootdown, hundreds of microseconds on these VMs,
// on every block sent.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>

#include "../config.hpp"
#include "../detail/assert.hpp"

GEERPC_BEGIN_NAMESPACE
namespace net {

// One block: this header, then its bytes. Bytes [begin, end) of data() wait to be sent.
struct output_chunk {
  static constexpr std::size_t header = 64;  // room for the fields below; data() keeps the allocator's alignment
  output_chunk* next = nullptr;
  std::uint32_t begin = 0;
  std::uint32_t end = 0;

  std::byte* data() noexcept { return reinterpret_cast<std::byte*>(this) + header; }
};
static_assert(sizeof(output_chunk) <= output_chunk::header);

// Whether this is an AddressSanitizer build (GCC's macro, or Clang's feature test).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool under_address_sanitizer = true;
#elif defined(__has_feature)
inline constexpr bool under_address_sanitizer = __has_feature(address_sanitizer);
#else
inline constexpr bool under_address_sanitizer = false;
#endif

class chunk_pool {
 public:
  // The standard block: what a writer whose limit allows it uses, and what the free list keeps.
  static constexpr std::size_t standard = 64u << 10;
  // The smallest block. A writer whose limit is below it still queues one frame at a time: a frame
  // may always wait alone (frame_writer::append_locked).
  static constexpr std::size_t smallest = 1u << 10;
  // Blocks kept for reuse, per pool (one per runtime): 2 MiB. None under AddressSanitizer, so that a
  // block used after it was given back is a use after free it reports, not another connection's
  // bytes.
  static constexpr std::size_t kept_most = under_address_sanitizer ? 0 : 32;

  // The block size for a writer that may hold `limit` bytes: the standard one, or the largest power
  // of two within an eighth of a smaller limit, so that about eight blocks fit: a frame that waits
  // behind another thread's send must not find the limit taken by one or two part-filled blocks.
  static constexpr std::size_t block_size(std::size_t limit) noexcept {
    return std::clamp(std::bit_floor(std::max<std::size_t>(limit / 8, 1)), smallest, standard);
  }

  chunk_pool() = default;
  // Every writer that takes from it must be gone first (its runtime outlives its users).
  ~chunk_pool() {
    while (output_chunk* const c = free_) {
      free_ = c->next;
      release(c);
    }
  }
  chunk_pool(const chunk_pool&) = delete;
  chunk_pool& operator=(const chunk_pool&) = delete;

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
    return allocate(size);
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
    release(c);
  }

  // A block of `size` bytes straight from the allocator, and back: for a writer without a pool.
  static output_chunk* allocate(std::size_t size) { return ::new (::operator new(size)) output_chunk(); }
  static void release(output_chunk* c) noexcept {
    c->~output_chunk();
    ::operator delete(static_cast<void*>(c));
  }

 private:
  std::mutex mutex_;
  output_chunk* free_ = nullptr;  // a stack of blocks of the standard size, linked through next
  std::size_t kept_ = 0;
};

}  // namespace net
GEERPC_END_NAMESPACE
