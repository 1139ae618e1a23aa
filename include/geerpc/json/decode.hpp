// geerpc: the JSON codec's decoder: a value from JSON text, by the rules of docs/protocol.md 8.2, the
// header to include. Its entry points parse the text into a tape (json/tape.hpp; the parse is
// compiled in geerpc::json) and read the value from it through a cursor (json/cursor.hpp), with the
// decoder of each kind: json/decode_scalars.hpp, decode_containers.hpp, decode_struct.hpp and
// decode_custom.hpp.
#pragma once

#include <cstddef>
#include <span>

#include "../codec/reader.hpp"
#include "../codec/serializable.hpp"
#include "../codec/type_kind.hpp"
#include "../config.hpp"
#include "../detail/assert.hpp"
#include "cursor.hpp"
#include "decode_containers.hpp"
#include "decode_custom.hpp"
#include "decode_scalars.hpp"
#include "decode_status.hpp"
#include "decode_struct.hpp"
#include "tape.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {

// A view is what a caller sends, never what is decoded: the build fails with a message saying so.
template <class T>
struct kind_decoder<T, codec::type_kind::view> {
  static bool decode(cursor&, T&) { return codec::view_cannot_be_decoded<T>::value; }
};

// ============================================================================ entry points

namespace detail {
// Parses `text` and decodes its value (OnlyElement: the only element of its array) into `value`,
// made afresh, so that a field the text leaves out holds its default.
template <bool OnlyElement, class T>
decode_status decode_text(std::span<const std::byte> text, T& value, std::size_t max_memory) {
  codec::require_serializable<T>();
  if constexpr (codec::is_serializable_v<T>) {
    tape parsed(text, max_memory);
    if (decode_status status = parsed.parse(); !status) return status;
    cursor in(parsed);
    if constexpr (OnlyElement) {
      if (!expect_array(in, in.peek(), 1)) return in.status();
      in.next();
    }
    if (!in.charge_made<T>(1, in.peek())) return in.status();
    value = T();
    if (!decode_value(in, value)) return in.status();
    GEERPC_ASSERT(in.index() + (OnlyElement ? 1 : 0) == parsed.size(), "a JSON decode did not read its whole tape");
  }
  return {};
}
}  // namespace detail

// Decodes the JSON text `text` into `value`, made afresh (so that a field the text leaves out
// holds its default), allocating at most `max_memory` bytes, the tape's included (the heap memory
// the value holds; the object `value` itself is the caller's).
template <class T>
decode_status decode(std::span<const std::byte> text, T& value, std::size_t max_memory) {
  return detail::decode_text<false>(text, value, max_memory);
}

// The same within the default limit: 16 bytes per byte of text, plus 64 KiB (docs/protocol.md 5.6).
template <class T>
decode_status decode(std::span<const std::byte> text, T& value) {
  return decode(text, value, codec::default_memory_limit(text.size()));
}

// Decodes the only element of the array `text` holds, `[value]`: a call's one argument
// (json_codec::decode_arguments).
template <class T>
decode_status decode_only_element(std::span<const std::byte> text, T& value, std::size_t max_memory) {
  return detail::decode_text<true>(text, value, max_memory);
}
template <class T>
decode_status decode_only_element(std::span<const std::byte> text, T& value) {
  return decode_only_element(text, value, codec::default_memory_limit(text.size()));
}

}  // namespace json
GEERPC_END_NAMESPACE
