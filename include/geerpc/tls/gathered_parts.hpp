// geerpc: a writer's buffers cut into TLS records' worth of bytes: a record costs a seal, a header
// and a send whatever its size, so small buffers (frames) are copied together into whole records
// and a buffer of a record's size or more goes as it is (session::write_parts()).
#pragma once

#include <sys/uio.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <span>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace tls {
namespace detail {

// The most application data one TLS record carries (both TLS 1.2 and 1.3).
inline constexpr std::size_t max_record_data = 16384;

// Walks `parts` a record at a time: record() gives the next one's bytes, advance() moves past
// what a write took of them.
class gathered_parts {
 public:
  explicit gathered_parts(std::span<const ::iovec> parts) noexcept : parts_(parts) { skip_finished(); }

  bool done() const noexcept { return index_ == parts_.size(); }

  // The next record's bytes: the current buffer's rest as it is when it holds a record's worth or
  // is the last buffer (or there is no `staging`); otherwise up to max_record_data bytes of it and
  // those after, copied into `staging` (max_record_data bytes). Call it only while !done().
  std::span<const std::byte> record(std::byte* staging) const noexcept {
    const std::span<const std::byte> first = rest_of(index_, offset_);
    if (first.size() >= max_record_data || index_ + 1 == parts_.size() || staging == nullptr) return first;
    std::size_t used = 0;
    for (std::size_t i = index_, offset = offset_; i < parts_.size() && used < max_record_data; ++i, offset = 0) {
      const std::span<const std::byte> part = rest_of(i, offset);
      const std::size_t n = std::min(part.size(), max_record_data - used);
      std::memcpy(staging + used, part.data(), n);
      used += n;
    }
    return {staging, used};
  }

  // Moves past `bytes` bytes (at most what is left).
  void advance(std::size_t bytes) noexcept {
    while (bytes > 0 && index_ < parts_.size()) {
      const std::size_t left = parts_[index_].iov_len - offset_;
      if (bytes < left) {
        offset_ += bytes;
        return;
      }
      bytes -= left;
      ++index_;
      offset_ = 0;
    }
    skip_finished();
  }

 private:
  std::span<const std::byte> rest_of(std::size_t index, std::size_t offset) const noexcept {
    return std::span(static_cast<const std::byte*>(parts_[index].iov_base), parts_[index].iov_len).subspan(offset);
  }
  void skip_finished() noexcept {
    while (index_ < parts_.size() && parts_[index_].iov_len == offset_) {
      ++index_;
      offset_ = 0;
    }
  }

  std::span<const ::iovec> parts_;
  std::size_t index_ = 0;   // the current buffer
  std::size_t offset_ = 0;  // and the first of its bytes not yet taken
};

}  // namespace detail
}  // namespace tls
GEERPC_END_NAMESPACE
