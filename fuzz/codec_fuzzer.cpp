// Fuzzes the binary codec's decoder. Whatever the bytes: no crash, no UB, no read past the input,
// and no allocation beyond the decode's memory budget: every byte a decode asks of operator new is
// counted here, and must be within what the decoder charged, itself within the limit its input
// allows (libFuzzer's -rss_limit_mb and -malloc_limit_mb only catch excesses of hundreds of MiB).
// What decodes must re-encode to bytes that decode to the same encoding again.
#include <geerpc/codec/binary.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "counted_new.hpp"
#include "fuzz_types.hpp"

namespace {

// binary_codec::decode, watched: what the decode allocated must not exceed what it charged, and
// the charge must not exceed the input's limit.
template <class T>
bool measured_decode(std::span<const std::byte> input, T& value) {
  geerpc::codec::reader in(input);
  allocated = 0;
  counting = true;
  const bool decoded = geerpc::codec::decode_value(in, value);
  counting = false;
  const std::size_t charged = in.memory_limit() - in.memory_left();
  if (in.memory_limit() != geerpc::codec::default_memory_limit(input.size()) || charged > in.memory_limit() ||
      allocated > charged) {
    std::fprintf(stderr, "allocated %zu, charged %zu, limit %zu\n", allocated, charged, in.memory_limit());
    std::abort();
  }
  return decoded && in.remaining() == 0;
}

template <class T, bool Unordered = false>
void round_trip(std::span<const std::byte> input) {
  T value{};
  if (!measured_decode(input, value)) return;
  std::vector<std::byte> first;
  geerpc::binary_codec::encode(value, first);
  T again{};
  if (!measured_decode(first, again)) std::abort();  // our own encoding must decode
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
  switch (data[0] % 11) {
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
    case 5:
      round_trip<std::string>(input);
      break;
    // Types whose values cost far more in memory than on the wire: the decode budget's cases.
    case 6:
      round_trip<fuzz::pages>(input);
      break;
    case 7:
      round_trip<fuzz::sparse, true>(input);
      break;
    case 8:
      round_trip<std::unordered_map<std::uint16_t, std::vector<std::string>>, true>(input);
      break;
    case 9:
      round_trip<fuzz::modern, true>(input);
      break;
    default:
      round_trip<fuzz::costly>(input);
      break;
  }
  return 0;
}
