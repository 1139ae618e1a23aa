// geerpc: the read side of a connection: turns the bytes recv() returned into whole frames.
// Complete frames are handed out straight from the caller's receive buffer; only the unfinished
// tail of a frame is copied and kept, so an idle connection holds no buffer at all. A frame's
// claimed length is checked against the limit before a byte of it is stored.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "../config.hpp"
#include "../wire/frame.hpp"

GEERPC_BEGIN_NAMESPACE
namespace net {

class frame_reader {
 public:
  explicit frame_reader(std::uint32_t max_frame_size) noexcept : max_frame_size_(max_frame_size) {}

  // A partial-frame buffer grown past this is given back once its frame is whole: a big frame's
  // memory is not kept for the connection's life, at the price of growing again for the next one.
  static constexpr std::size_t kept_partial = std::size_t{64} << 10;

  // Calls on_frame(std::span<const std::byte> whole_frame) for every frame completed by `data`;
  // on_frame returns false to stop (the rest of `data` is dropped). Returns nullptr, or why the
  // stream is broken (the connection must then be closed: its framing can no longer be trusted).
  template <class OnFrame>
  const char* feed(std::span<const std::byte> data, OnFrame&& on_frame) {
    // First finish the frame a previous read left incomplete, copying only the bytes it still needs.
    while (!partial_.empty() && !data.empty()) {
      const wire::frame_scan scan = wire::scan_frame(partial_, max_frame_size_);
      if (const char* bad = judge(scan)) return bad;
      const std::size_t take = std::min(scan.size - partial_.size(), data.size());
      partial_.insert(partial_.end(), data.begin(), data.begin() + static_cast<std::ptrdiff_t>(take));
      data = data.subspan(take);
      const wire::frame_scan now = wire::scan_frame(partial_, max_frame_size_);
      if (const char* bad = judge(now)) return bad;
      if (now.what == wire::frame_scan::state::complete) {
        const bool go_on = on_frame(std::span<const std::byte>(partial_));
        partial_.clear();
        if (partial_.capacity() > kept_partial) std::vector<std::byte>().swap(partial_);
        if (!go_on) return nullptr;
      }
    }
    while (!data.empty()) {
      const wire::frame_scan scan = wire::scan_frame(data, max_frame_size_);
      if (const char* bad = judge(scan)) return bad;
      if (scan.what == wire::frame_scan::state::need_more) {
        // Keep only what arrived: the claimed size is not reserved, a peer gets memory by sending bytes.
        partial_.assign(data.begin(), data.end());
        return nullptr;
      }
      if (!on_frame(data.first(scan.size))) return nullptr;
      data = data.subspan(scan.size);
    }
    return nullptr;
  }

  // What feed() returns for a frame whose length prefix is past the limit.
  static constexpr const char* too_large = "frame larger than the limit";

  // Bytes of an unfinished frame held: nonzero means the peer stopped mid-frame.
  std::size_t buffered() const noexcept { return partial_.size(); }

 private:
  static const char* judge(const wire::frame_scan& scan) noexcept {
    switch (scan.what) {
      case wire::frame_scan::state::too_large:
        return too_large;
      case wire::frame_scan::state::too_small:
        return "frame shorter than its header";
      default:
        return nullptr;
    }
  }

  std::uint32_t max_frame_size_;
  std::vector<std::byte> partial_;
};

}  // namespace net
GEERPC_END_NAMESPACE
