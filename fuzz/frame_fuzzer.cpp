// Fuzzes the frame layer: the stream splitter (frame_reader) fed in chunks the input chooses, and
// the header parser. A frame that parses (a request's fingerprint and metadata block included) must
// re-encode to exactly its own bytes, and a metadata block that checks must re-encode, from the
// entries read out of it, to exactly its own bytes.
#include <geerpc/net/frame_reader.hpp>
#include <geerpc/wire/frame.hpp>
#include <geerpc/wire/metadata.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace {
void check_metadata_block(std::span<const std::byte> block) {
  if (geerpc::wire::check_metadata(block) != nullptr) return;
  std::vector<std::pair<std::string, std::string>> entries;
  geerpc::wire::for_each_metadata(block, [&](std::string_view key, std::string_view value) {
    if (!geerpc::wire::valid_metadata_key(key) || value.size() > geerpc::wire::max_metadata_value_size) std::abort();
    if (geerpc::wire::find_metadata(block, key) == std::nullopt) std::abort();
    entries.emplace_back(key, value);
    return true;
  });
  std::vector<std::byte> rebuilt;
  geerpc::wire::append_metadata(rebuilt, entries);
  const auto again = std::span<const std::byte>(rebuilt).subspan(geerpc::wire::metadata_size_field);
  if (!std::equal(again.begin(), again.end(), block.begin(), block.end())) std::abort();
}
}  // namespace

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
      if (!view.schema.empty()) geerpc::wire::append_schema(rebuilt, view.schema);  // never empty when flagged
      if (view.has_metadata) {
        const auto size = static_cast<std::uint32_t>(view.metadata.size());
        for (int i = 0; i < 4; ++i) rebuilt.push_back(std::byte{static_cast<std::uint8_t>(size >> (8 * i))});
        rebuilt.insert(rebuilt.end(), view.metadata.begin(), view.metadata.end());
        check_metadata_block(view.metadata);
      }
      rebuilt.insert(rebuilt.end(), view.body.begin(), view.body.end());
      geerpc::wire::finish_frame(rebuilt, start);
      if (!std::equal(rebuilt.begin(), rebuilt.end(), frame.begin(), frame.end())) std::abort();
      return true;
    });
    if (broken != nullptr) break;
  }
  return 0;
}
