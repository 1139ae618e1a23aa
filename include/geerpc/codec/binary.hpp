// geerpc: the binary codec's entry points (binary_codec, encode_value, decode_value); each kind of
// value has its codec in a header of its own (kind_codec.hpp lists them). Fields in declaration
// order, no names or tags: fixed-size little-endian scalars, LEB128 varint counts, one-byte tags.
// The format is specified in docs/protocol.md.
//
// Decoding trusts nothing: every read is bounds-checked, every count is checked against what the
// remaining bytes could hold before anything is allocated, every allocation is charged against a
// memory budget proportional to the input before it is made, and trailing bytes are an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "../config.hpp"
#include "aggregates.hpp"
#include "alternatives.hpp"
#include "associative.hpp"
#include "custom.hpp"
#include "decode_cost.hpp"
#include "fingerprint.hpp"
#include "kind_codec.hpp"
#include "reader.hpp"
#include "scalars.hpp"
#include "schema.hpp"
#include "sequences.hpp"
#include "serializable.hpp"
#include "strings.hpp"
#include "writer.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

// Encodes a value of T, which must be serializable (require_serializable), after what `out` holds.
template <class T>
void encode_value(writer& out, const T& value) {
  value_codec<T>::encode(out, value);
}

// Decodes a value of T into `value`; false when the input is bad, and then `in` says why and where.
template <class T>
bool decode_value(reader& in, T& value) {
  return value_codec<T>::decode(in, value);
}

// Why a decode failed: a static description and the byte offset where it was noticed; and the
// memory limit the decode ran under, for the message of a value that would have passed it.
struct decode_status {
  const char* error = nullptr;
  std::size_t offset = 0;
  std::size_t memory_limit = 0;
  std::size_t input_size = 0;

  explicit operator bool() const noexcept { return error == nullptr; }
  std::string message() const {
    if (error == nullptr) return "ok";
    if (error != memory_limit_reason) return std::string(error) + " at byte " + std::to_string(offset);
    const std::string limit = memory_limit == default_memory_limit(input_size)
                                  ? "limit: " + std::to_string(memory_per_input_byte) + " x " +
                                        std::to_string(input_size) + " input bytes + " + std::to_string(memory_base)
                                  : std::string("limit set by the caller");
    return "decoded value would need more than " + std::to_string(memory_limit) + " bytes of memory (" + limit +
           ") at byte " + std::to_string(offset);
  }
};

}  // namespace codec

// The codec policy geerpc uses by default; its id travels in the handshake so that a server can
// refuse a codec it does not speak. A codec is any type with this shape.
struct binary_codec {
  static constexpr std::uint8_t id = 1;
  static constexpr const char* name = "binary";

  template <class T>
  static void encode(const T& value, std::vector<std::byte>& out) {
    codec::require_serializable<T>();
    if constexpr (codec::is_serializable_v<T>) {
      codec::writer w(out);
      codec::encode_value(w, value);
    }
  }

  // The type fingerprint of a call taking Arguments (a std::tuple) and returning Result, sent with
  // each request so that the server refuses a call whose types are not its handler's
  // (codec/fingerprint.hpp). A codec without this member sends none, and no check is made.
  template <class Arguments, class Result>
  static constexpr std::uint32_t fingerprint = codec::fingerprint<Arguments, Result>();

  // The text the fingerprint hashes, with field names (codec/schema.hpp): what a peer whose
  // fingerprint differs is sent, to decide whether the two sides' types still agree (a struct
  // that gained fields at its end) or not, and then to name the field that differs.
  template <class Arguments, class Result>
  static const std::string& schema() {
    return codec::call_schema<Arguments, Result>();
  }

  // Whether a T decodes about as fast as its bytes copy (codec::detail::decodes_like_copy): a client
  // then decodes a reply straight from its receive buffer, instead of copying it out for the caller.
  template <class T>
  static constexpr bool cheap_to_decode = codec::detail::decodes_like_copy<T>();

  // Decodes exactly `bytes` into `value`: a short input, a bad value or bytes left over all fail,
  // and so does a value whose decoding would allocate more than codec::default_memory_limit of
  // the input's size (16 bytes per input byte + 64 KiB).
  template <class T>
  static codec::decode_status decode(std::span<const std::byte> bytes, T& value) {
    return decode(bytes, value, codec::default_memory_limit(bytes.size()));
  }

  // The same, allocating at most `max_memory` bytes (the heap memory the value holds; the object
  // `value` itself is the caller's).
  template <class T>
  static codec::decode_status decode(std::span<const std::byte> bytes, T& value, std::size_t max_memory) {
    codec::require_serializable<T>();
    codec::reader r(bytes, max_memory);
    if (codec::decode_value(r, value) && r.remaining() != 0) r.fail("trailing bytes after the value");
    return {r.error(), r.error_offset(), r.memory_limit(), bytes.size()};
  }
};

GEERPC_END_NAMESPACE
