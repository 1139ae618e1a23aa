// geerpc: a request's metadata block (docs/protocol.md 4.1): string keys and values a caller
// attaches to one call (an auth token, a trace id), versioned so that a later format can be told
// apart. Pure functions over bytes: no I/O, so they can be fuzzed.
//
//   u32 size        bytes that follow, the version byte included
//   u8  version     1
//   then, until `size` is used up, entries:  u8 key size (1..255), key, u16 value size, value
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../detail/byte_order.hpp"

GEERPC_BEGIN_NAMESPACE
namespace wire {

inline constexpr std::uint8_t metadata_version = 1;
inline constexpr std::size_t metadata_size_field = 4;
inline constexpr std::size_t max_metadata_key_size = 0xff;
inline constexpr std::size_t max_metadata_value_size = 0xffff;

// A key is 1 to 255 bytes of printable ASCII other than space (0x21..0x7e), compared exactly.
constexpr bool valid_metadata_key(std::string_view key) noexcept {
  if (key.empty() || key.size() > max_metadata_key_size) return false;
  for (char c : key)
    if (c < 0x21 || c > 0x7e) return false;
  return true;
}

// The bytes a block of these entries takes on the wire, its size field included.
template <class Entries>
std::size_t metadata_wire_size(const Entries& entries) noexcept {
  std::size_t size = metadata_size_field + 1;
  for (const auto& [key, value] : entries) size += 1 + key.size() + 2 + value.size();
  return size;
}

// Appends the block of `entries` (pairs of strings, each key valid and each value at most
// max_metadata_value_size bytes: the caller checks).
template <class Entries>
void append_metadata(std::vector<std::byte>& out, const Entries& entries) {
  using geerpc::detail::store_le;
  const std::size_t whole = metadata_wire_size(entries);
  std::size_t at = out.size();
  out.resize(at + whole);
  std::byte* p = out.data() + at;
  store_le<std::uint32_t>(p, static_cast<std::uint32_t>(whole - metadata_size_field));
  p += metadata_size_field;
  *p++ = std::byte{metadata_version};
  for (const auto& [key, value] : entries) {
    *p++ = std::byte{static_cast<std::uint8_t>(key.size())};
    for (char c : key) *p++ = static_cast<std::byte>(c);
    store_le<std::uint16_t>(p, static_cast<std::uint16_t>(value.size()));
    p += 2;
    for (char c : value) *p++ = static_cast<std::byte>(c);
  }
}

// Calls f(key, value) for each entry of a block that check_metadata() accepted, in the order sent;
// stops early when f returns false.
template <class F>
void for_each_metadata(std::span<const std::byte> block, F&& f) {
  using geerpc::detail::load_le;
  std::size_t at = 1;  // past the version
  while (at < block.size()) {
    const std::size_t key_size = static_cast<std::uint8_t>(block[at]);
    const auto* key = reinterpret_cast<const char*>(block.data() + at + 1);
    const std::size_t value_size = load_le<std::uint16_t>(block.data() + at + 1 + key_size);
    const auto* value = reinterpret_cast<const char*>(block.data() + at + 3 + key_size);
    at += 3 + key_size + value_size;
    if (!f(std::string_view(key, key_size), std::string_view(value, value_size))) return;
  }
}

// Checks a block (what follows its size field): its version, and that its entries fill it
// exactly with valid keys. Returns nullptr, or why it is malformed.
inline const char* check_metadata(std::span<const std::byte> block) noexcept {
  using geerpc::detail::load_le;
  if (block.empty()) return "request metadata without a version";
  if (static_cast<std::uint8_t>(block[0]) != metadata_version) return "request metadata of an unknown version";
  std::size_t at = 1;
  while (at < block.size()) {
    const std::size_t key_size = static_cast<std::uint8_t>(block[at]);
    if (block.size() - at < 1 + key_size + 2) return "request metadata entry exceeds its block";
    const std::string_view key(reinterpret_cast<const char*>(block.data() + at + 1), key_size);
    if (!valid_metadata_key(key)) return "request metadata key empty or not printable ASCII";
    const std::size_t value_size = load_le<std::uint16_t>(block.data() + at + 1 + key_size);
    if (block.size() - at - 3 - key_size < value_size) return "request metadata value exceeds its block";
    at += 3 + key_size + value_size;
  }
  return nullptr;
}

// The value of the first entry named `key` in a checked block.
inline std::optional<std::string_view> find_metadata(std::span<const std::byte> block, std::string_view key) {
  std::optional<std::string_view> found;
  for_each_metadata(block, [&](std::string_view k, std::string_view v) {
    if (k != key) return true;
    found = v;
    return false;
  });
  return found;
}

}  // namespace wire
GEERPC_END_NAMESPACE
