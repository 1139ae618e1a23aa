// Fuzzes the binary codec's decoder. Whatever the bytes: no crash, no UB, no read past the input,
// no allocation the input could not justify (libFuzzer's -rss_limit_mb and -malloc_limit_mb catch
// those). What decodes must re-encode to bytes that decode to the same encoding again.
#include <geerpc/codec/binary.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "fuzz_types.hpp"

namespace {

template <class T, bool Unordered = false>
void round_trip(std::span<const std::byte> input) {
  T value{};
  if (!geerpc::binary_codec::decode(input, value)) return;
  std::vector<std::byte> first;
  geerpc::binary_codec::encode(value, first);
  T again{};
  if (!geerpc::binary_codec::decode(first, again)) std::abort();  // our own encoding must decode
  std::vector<std::byte> second;
  geerpc::binary_codec::encode(again, second);
  // And be stable: the same bytes, except that an unordered_map may list its entries in another order.
  if (first.size() != second.size() || (!Unordered && first != second)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the type, so one corpus serves them all.
  const auto input = std::as_bytes(std::span(data + 1, size - 1));
  switch (data[0] % 6) {
    case 0:
      round_trip<fuzz::tree, true>(input);
      break;
    case 1:
      round_trip<fuzz::leaf>(input);
      break;
    case 2:
      round_trip<std::vector<fuzz::tree>, true>(input);
      break;
    case 3:
      round_trip<std::map<std::string, fuzz::point>>(input);
      break;
    case 4:
      round_trip<std::optional<std::tuple<std::string, std::vector<double>, fuzz::colour>>>(input);
      break;
    default:
      round_trip<std::string>(input);
      break;
  }
  return 0;
}
