// Fuzzes the JSON codec's decoder (json/decode.hpp). Whatever the text: no crash, no UB, no read
// past the input, and no allocation beyond the decode's memory budget: every byte a decode asks of
// operator new is counted here, and must be within what the decoder charged (the tape's blocks
// included), itself within the limit its input allows. What decodes must re-encode (json/encode.hpp)
// to text that decodes to a value that encodes to the same text again.
#include <geerpc/json/decode.hpp>
#include <geerpc/json/encode.hpp>

#include <array>
#include <bitset>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "counted_new.hpp"
#include "fuzz_types.hpp"

namespace fuzz {

// The forms only JSON has: bytes in base64, maps keyed by integers in decimal strings or by other
// types as [key, value] pairs, time points of a coarser period, an optional of an optional.
struct json_forms {
  std::vector<std::byte> blob;
  std::map<std::int16_t, std::string> by_id;
  std::map<colour, std::vector<float>> by_colour;
  std::map<std::pair<std::int8_t, bool>, std::optional<std::optional<int>>> by_pair;
  std::chrono::time_point<std::chrono::system_clock, std::chrono::milliseconds> when;
  std::array<std::uint16_t, 3> triple;
  std::variant<std::monostate, double, std::bitset<9>> choice;
  std::chrono::duration<double> elapsed;
  char letter;
};

}  // namespace fuzz

namespace {

namespace json = geerpc::json;

// A decode that fails allocates its reason's text besides what it charged (a field path, a key).
constexpr std::size_t failure_text_allowance = 8192;

// json::decode, watched: what the decode allocated must not exceed what it charged, and the charge
// must not exceed the input's limit. The tape is the decode's own, so `charged` is read through a
// decode made here step by step, as json::decode makes it.
template <class T>
bool measured_decode(std::span<const std::byte> input, T& value) {
  allocated = 0;
  counting = true;
  json::tape parsed(input);
  bool decoded = static_cast<bool>(parsed.parse());
  if (decoded) {
    json::cursor in(parsed);
    decoded = in.charge_made<T>(1, in.peek());
    if (decoded) {
      value = T();
      decoded = json::decode_value(in, value);
    }
  }
  counting = false;
  const geerpc::codec::reader& budget = parsed.budget();
  const std::size_t charged = budget.memory_limit() - budget.memory_left();
  const std::size_t allowance = decoded ? 0 : failure_text_allowance;
  if (budget.memory_limit() != geerpc::codec::default_memory_limit(input.size()) || charged > budget.memory_limit() ||
      allocated > charged + allowance) {
    std::fprintf(stderr, "allocated %zu, charged %zu, limit %zu\n", allocated, charged, budget.memory_limit());
    std::abort();
  }
  return decoded;
}

template <class T>
std::vector<std::byte> encoded(const T& value) {
  std::vector<std::byte> out;
  try {
    json::encode(value, out);
  } catch (const json::encode_error& error) {
    std::fprintf(stderr, "a decoded value does not encode: %s\n", error.what());
    std::abort();
  }
  return out;
}

// Decoded, the value must encode; that text must decode (within any memory: it may hold fields the
// input left out) to a value that encodes to the same text, up to the order of unordered containers.
template <class T, bool Unordered = false>
void round_trip(std::span<const std::byte> input) {
  T value{};
  if (!measured_decode(input, value)) return;
  const std::vector<std::byte> first = encoded(value);
  T again{};
  if (const json::decode_status status = json::decode(first, again, std::numeric_limits<std::size_t>::max()); !status) {
    std::fprintf(stderr, "our own encoding does not decode: %s\n%.*s\n", status.message().c_str(),
                 static_cast<int>(first.size()), reinterpret_cast<const char*>(first.data()));
    std::abort();
  }
  const std::vector<std::byte> second = encoded(again);
  if (first.size() != second.size() || (!Unordered && first != second)) {
    std::fprintf(stderr, "unstable:\n%.*s\n%.*s\n", static_cast<int>(first.size()),
                 reinterpret_cast<const char*>(first.data()), static_cast<int>(second.size()),
                 reinterpret_cast<const char*>(second.data()));
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the type, so one corpus serves them all; the rest is the JSON text.
  const auto input = std::as_bytes(std::span(data + 1, size - 1));
  switch (data[0] % 9) {
    case 0:
      round_trip<fuzz::tree, true>(input);
      break;
    case 1:
      round_trip<fuzz::leaf>(input);
      break;
    case 2:
      round_trip<std::map<std::string, fuzz::point>>(input);
      break;
    case 3:
      round_trip<fuzz::modern, true>(input);
      break;
    case 4:
      round_trip<fuzz::json_forms>(input);
      break;
    case 5:
      round_trip<std::optional<std::tuple<std::string, std::vector<double>, fuzz::colour>>>(input);
      break;
    // Types whose values cost far more in memory than in text: the decode budget's cases.
    case 6:
      round_trip<fuzz::sparse, true>(input);
      break;
    case 7:
      round_trip<fuzz::pages>(input);
      break;
    default:
      round_trip<fuzz::costly>(input);
      break;
  }
  return 0;
}
