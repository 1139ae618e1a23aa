// Fuzzes the frame layer: the stream splitter (frame_reader) fed in chunks the input chooses, and
// the header parser. A frame that parses (a request's fingerprint included) must re-encode to
// exactly its own bytes.
#include <geerpc/net/frame_reader.hpp>
#include <geerpc/wire/frame.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t chunk = 1 + data[0] % 64;  // how the stream arrives: 1 to 64 bytes a read
  const std::uint32_t limit = 20 + (data[1] % 4) * 1000;
  auto stream = std::as_bytes(std::span(data + 2, size - 2));
  geerpc::net::frame_reader reader(limit);
  for (std::size_t at = 0; at < stream.size(); at += chunk) {
    const auto piece = stream.subspan(at, std::min(chunk, stream.size() - at));
    const char* broken = reader.feed(piece, [&](std::span<const std::byte> frame) {
      if (frame.size() < geerpc::wire::frame_overhead || frame.size() > limit + geerpc::wire::length_prefix_size)
        std::abort();  // the reader must only hand out frames within the limit
      geerpc::wire::frame_view view;
      if (geerpc::wire::parse_frame(frame, view) != nullptr) return true;
      std::vector<std::byte> rebuilt;
      const std::size_t start = geerpc::wire::begin_frame(rebuilt, view.header, view.text, view.fingerprint);
      rebuilt.insert(rebuilt.end(), view.body.begin(), view.body.end());
      geerpc::wire::finish_frame(rebuilt, start);
      if (!std::equal(rebuilt.begin(), rebuilt.end(), frame.begin(), frame.end())) std::abort();
      return true;
    });
    if (broken != nullptr) break;
  }
  return 0;
}
