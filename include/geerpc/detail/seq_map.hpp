// geerpc: a map from sequence number to a pointer, for the calls in flight on one connection. Open
// addressing with linear probing and backward-shift deletion, in one array that grows and shrinks
// by powers of two: once warm, inserting and erasing a call allocates nothing (a node-based map
// would allocate on every call). Keys may be any 64-bit value (a hostile peer picks them); a null
// value marks a free slot. Not thread-safe: its owner locks.
#pragma once

#include <sys/random.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "assert.hpp"
#include "integer_cast.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// The table itself, over untyped pointers: one copy of its code serves every seq_map<T>, rather
// than one per value type in each translation unit.
class seq_map_base {
 public:
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  // False (and nothing changed) when `key` is present already.
  bool insert(std::uint64_t key, void* value) {
    GEERPC_ASSERT(value != nullptr, "seq_map: a null value would mark its slot free");
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.empty() ? 16 : slots_.size() * 2);
    for (std::size_t i = home(key);; i = next(i)) {
      if (slots_[i].value == nullptr) {
        slots_[i] = {key, value};
        ++size_;
        return true;
      }
      if (slots_[i].key == key) return false;
    }
  }

  void* find(std::uint64_t key) const noexcept {
    if (size_ == 0) return nullptr;
    GEERPC_ASSERT(size_ * 2 <= slots_.size(), "seq_map: at most half full, so every probe meets a free slot");
    for (std::size_t i = home(key);; i = next(i)) {
      if (slots_[i].value == nullptr) return nullptr;
      if (slots_[i].key == key) return slots_[i].value;
    }
  }

  // Removes `key`; returns its value, or null when absent. May shrink the table; without the
  // memory for a smaller one it keeps the one it has.
  void* erase(std::uint64_t key) noexcept {
    if (size_ == 0) return nullptr;
    std::size_t hole = home(key);
    while (slots_[hole].key != key || slots_[hole].value == nullptr) {
      if (slots_[hole].value == nullptr) return nullptr;
      hole = next(hole);
    }
    void* removed = std::exchange(slots_[hole].value, nullptr);
    --size_;
    // Backward shift: pull later entries of the probe run into the hole, so no tombstones remain.
    for (std::size_t i = next(hole); slots_[i].value != nullptr; i = next(i)) {
      const std::size_t want = home(slots_[i].key);
      // Movable when its home is not in the (cyclic) range (hole, i].
      if (((i - want) & mask()) >= ((i - hole) & mask())) {
        slots_[hole] = slots_[i];
        slots_[i].value = nullptr;
        hole = i;
      }
    }
    GEERPC_ASSERT(find(key) == nullptr, "seq_map: a key held twice");
    if (slots_.size() > 64 && size_ * 8 < slots_.size()) {
      try {
        shrink();  // allocates the new table before it changes anything
      } catch (const std::bad_alloc&) {
      }
    }
    return removed;
  }

  template <class F>
  void for_each(F&& f) const {
    for (const auto& entry : slots_)
      if (entry.value != nullptr) f(entry.key, entry.value);
  }

  void clear_and_release() noexcept {
    std::vector<slot>().swap(slots_);
    size_ = 0;
  }

 private:
  struct slot {
    std::uint64_t key = 0;
    void* value = nullptr;
  };

  std::size_t mask() const noexcept { return slots_.size() - 1; }
  std::size_t next(std::size_t i) const noexcept { return (i + 1) & mask(); }
  // Multiplicative hashing: consecutive sequence numbers spread over the table. The multiplier is
  // odd and random per map, so a peer choosing its keys cannot aim them all at one slot.
  std::size_t home(std::uint64_t key) const noexcept {
    return integer_cast<std::size_t>((key * multiplier_) >> 32) & mask();
  }
  static std::uint64_t random_multiplier(const void* self) noexcept {
    static const std::uint64_t process_seed = random_seed();
    std::uint64_t x = process_seed ^ reinterpret_cast<std::uintptr_t>(self);
    x ^= x >> 31;  // splitmix64's finaliser
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    return x | 1;
  }

  // From the kernel's random pool (getrandom(2), not <random>: std::random_device reads the same
  // pool, and <random> would add thousands of lines to every user's translation unit). Should the
  // call fail (a kernel before 3.17), ASLR's stack address still varies per process.
  static std::uint64_t random_seed() noexcept {
    std::uint64_t seed = 0;
    if (::getrandom(&seed, sizeof seed, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof seed)) return seed;
    return reinterpret_cast<std::uintptr_t>(&seed) * 0x9E3779B97F4A7C15ull;
  }

  void rehash(std::size_t capacity) {
    std::vector<slot> old(capacity);
    old.swap(slots_);
    size_ = 0;
    for (const auto& s : old) {
      if (s.value == nullptr) continue;
      const bool fresh = insert(s.key, s.value);
      GEERPC_ASSERT(fresh, "seq_map: a key held twice");
    }
  }
  // Called mid-erase with the table consistent: halves it while it stays at most half full.
  void shrink() {
    std::size_t capacity = slots_.size();
    while (capacity > 64 && size_ * 4 < capacity) capacity /= 2;
    rehash(capacity);
  }

  std::vector<slot> slots_;  // a power of two in size, at most half full
  std::size_t size_ = 0;
  std::uint64_t multiplier_ = random_multiplier(this);
};

// A seq_map_base whose values are T*.
template <class T>
class seq_map : private seq_map_base {
 public:
  using seq_map_base::empty;
  using seq_map_base::size;

  // False (and nothing changed) when `key` is present already.
  bool insert(std::uint64_t key, T* value) { return seq_map_base::insert(key, value); }
  T* find(std::uint64_t key) const noexcept { return static_cast<T*>(seq_map_base::find(key)); }
  // Removes `key`; returns its value, or null when absent.
  T* erase(std::uint64_t key) noexcept { return static_cast<T*>(seq_map_base::erase(key)); }

  template <class F>
  void for_each(F&& f) const {
    seq_map_base::for_each([&](std::uint64_t key, void* value) { f(key, static_cast<T*>(value)); });
  }

  // Empties the map into `out` (appending the values) and releases its memory.
  void drain_into(std::vector<T*>& out) {
    for_each([&](std::uint64_t, T* value) { out.push_back(value); });
    clear_and_release();
  }
};

}  // namespace detail
GEERPC_END_NAMESPACE
