// geerpc: bytes waiting to be sent, in a list of blocks of one fixed size (net/output_chunk.hpp).
// It grows a block at a time and shrinks as soon as a block is sent, so the memory it holds is the
// bytes in it rounded up to a block or two, never an outgrown buffer, and none of it is copied
// again once queued. A sender offers the blocks to the socket in one gather write.
//
// Not thread-safe by itself: its owner (net/frame_writer.hpp) calls it under a lock. One exception
// is what makes a sender cheap: the bytes gather() pointed to stay where they are, unchanged, until
// consume() or clear(), so a sender may send them outside the lock while others append after them.
#pragma once

#include <sys/uio.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>

#include "../config.hpp"
#include "../detail/assert.hpp"
#include "output_chunk.hpp"

GEERPC_BEGIN_NAMESPACE
namespace net {

class chunk_queue {
 public:
  // Blocks of `block_size` bytes (chunk_pool::block_size()), header included, from `pool` (null:
  // from the allocator).
  explicit chunk_queue(std::size_t block_size, chunk_pool* pool = nullptr) noexcept : block_(block_size), pool_(pool) {}
  ~chunk_queue() { clear(); }
  chunk_queue(const chunk_queue&) = delete;
  chunk_queue& operator=(const chunk_queue&) = delete;

  std::size_t bytes() const noexcept { return bytes_; }
  bool empty() const noexcept { return bytes_ == 0; }
  // The memory held: every block, whole.
  std::size_t held() const noexcept { return blocks_ * block_; }
  std::size_t block_size() const noexcept { return block_; }
  // How many more blocks appending `size` bytes takes.
  std::size_t blocks_to_append(std::size_t size) const noexcept {
    const std::size_t room = last_ != nullptr ? capacity() - last_->end : 0;
    return size <= room ? 0 : (size - room + capacity() - 1) / capacity();
  }
  std::size_t blocks_for(std::size_t size) const noexcept { return (size + capacity() - 1) / capacity(); }

  // Appends `bytes` after the last ones. Throws std::bad_alloc, having appended nothing.
  void append(std::span<const std::byte> bytes) {
    reserve_after(blocks_to_append(bytes.size()));
    for (output_chunk* c = last_with_room(); !bytes.empty(); c = c->next) {
      const std::size_t n = std::min(bytes.size(), capacity() - c->end);
      std::memcpy(c->data() + c->end, bytes.data(), n);
      c->end += static_cast<std::uint32_t>(n);
      bytes_ += n;
      bytes = bytes.subspan(n);
      if (!bytes.empty()) last_ = c->next;
    }
  }

  // Puts `bytes` ahead of everything queued, in blocks of their own. Throws std::bad_alloc, having
  // put nothing.
  void prepend(std::span<const std::byte> bytes) {
    if (bytes.empty()) return;
    if (empty()) return append(bytes);
    output_chunk* head = nullptr;
    output_chunk** tail = &head;
    std::size_t taken = 0;
    try {
      for (; taken < blocks_for(bytes.size()); ++taken, tail = &(*tail)->next) *tail = take();
    } catch (...) {
      give_all(head);
      throw;
    }
    for (output_chunk* c = head; c != nullptr; c = c->next) {
      const std::size_t n = std::min(bytes.size(), capacity());
      std::memcpy(c->data(), bytes.data(), n);
      c->end = static_cast<std::uint32_t>(n);
      bytes_ += n;
      bytes = bytes.subspan(n);
    }
    *tail = first_;
    first_ = head;
    blocks_ += taken;
  }

  // Points `out` at the first bytes, up to out.size() blocks of them; returns how many entries it
  // filled, and their bytes in `total`.
  std::size_t gather(std::span<::iovec> out, std::size_t& total) const noexcept {
    std::size_t n = 0;
    total = 0;
    for (output_chunk* c = first_; c != nullptr && n < out.size() && c->end > c->begin; c = c->next, ++n) {
      out[n] = {c->data() + c->begin, std::size_t{c->end} - c->begin};
      total += out[n].iov_len;
    }
    return n;
  }

  // `count` bytes from the front went out: the blocks emptied go back, the last one too, so that
  // an idle queue holds no memory (a block comes back from the pool's free list for the next bytes).
  void consume(std::size_t count) noexcept {
    GEERPC_ASSERT(count <= bytes_, "chunk_queue: more consumed than queued");
    bytes_ -= count;
    while (first_ != nullptr) {
      output_chunk* const c = first_;
      const std::size_t n = std::min<std::size_t>(count, c->end - c->begin);
      c->begin += static_cast<std::uint32_t>(n);
      count -= n;
      if (c->begin < c->end) break;
      GEERPC_ASSERT(c != last_ || (c->next == nullptr && bytes_ == 0),
                    "chunk_queue: the last block empties only with the queue");
      first_ = c->next;
      if (c == last_) last_ = nullptr;
      --blocks_;
      give(c);
    }
    GEERPC_ASSERT(count == 0 && (first_ != nullptr || (blocks_ == 0 && bytes_ == 0)),
                  "chunk_queue: blocks and bytes agree");
  }

  // Drops every byte and gives back every block.
  void clear() noexcept {
    give_all(first_);
    first_ = last_ = nullptr;
    blocks_ = 0;
    bytes_ = 0;
  }

 private:
  std::size_t capacity() const noexcept { return block_ - output_chunk::header; }

  // Links `count` new blocks after the last one; all or none.
  void reserve_after(std::size_t count) {
    output_chunk* head = nullptr;
    output_chunk** tail = &head;
    try {
      for (std::size_t i = 0; i < count; ++i, tail = &(*tail)->next) *tail = take();
    } catch (...) {
      give_all(head);
      throw;
    }
    if (head == nullptr) return;
    if (last_ != nullptr)
      last_->next = head;
    else
      first_ = last_ = head;
    blocks_ += count;
  }
  // The first block with room: the last one, or the first new one after a full last one.
  output_chunk* last_with_room() noexcept {
    if (last_ != nullptr && last_->end == capacity() && last_->next != nullptr) last_ = last_->next;
    return last_;
  }
  void give_all(output_chunk* c) noexcept {
    while (c != nullptr) {
      output_chunk* const next = c->next;
      give(c);
      c = next;
    }
  }
  output_chunk* take() { return pool_ != nullptr ? pool_->take(block_) : chunk_pool::allocate(block_); }
  void give(output_chunk* c) noexcept {
    if (pool_ != nullptr)
      pool_->give(c, block_);
    else
      chunk_pool::release(c);
  }

  const std::size_t block_;
  chunk_pool* const pool_;
  output_chunk* first_ = nullptr;
  output_chunk* last_ = nullptr;  // the block appends go to; new blocks are linked after it
  std::size_t blocks_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace net
GEERPC_END_NAMESPACE
