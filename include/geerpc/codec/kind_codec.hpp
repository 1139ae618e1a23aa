// geerpc: the shape every codec of the binary format has. kind_codec<T> encodes and decodes the
// values of one kind (a string, a map, an aggregate...), one specialization per kind, each in the
// header of its family (scalars.hpp, strings.hpp, sequences.hpp, associative.hpp,
// alternatives.hpp, aggregates.hpp, custom.hpp; binary.hpp includes them all):
//
//   static void encode(writer& out, const T& value);
//   static bool decode(reader& in, T& value);   // false: `in` has failed and says why
//
// A codec reaches the values it holds through value_codec<Element>, which checks the codec's
// invariants around each one. Recursion goes through class templates only: compilers (Clang 14
// above all) take time exponential in the depth of nested types for recursive function
// templates, and linear time for class templates.
#pragma once

#include <bit>
#include <cstddef>
#include <type_traits>

#include "../config.hpp"
#include "../detail/assert.hpp"
#include "encoded_size.hpp"
#include "reader.hpp"
#include "type_kind.hpp"
#include "writer.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

// Left undefined for type_kind::unsupported: require_serializable refuses such a T, with a message,
// where it enters geerpc.
template <class T, type_kind Kind = kind_of<T>()>
struct kind_codec;

// A value of T as its kind's codec writes and reads it, with the invariants the format relies on
// checked (GEERPC_ASSERT): a value never encodes to fewer bytes than min_encoded_size<T>() (the
// count check refuses counts by it), a decode that succeeds consumes at least that many, and one
// that fails leaves its reader failed, so that a caller checks once.
template <class T>
struct value_codec {
  static void encode(writer& out, const T& value) {
    [[maybe_unused]] const std::size_t before = out.size();
    kind_codec<T>::encode(out, value);
    GEERPC_ASSERT(out.size() - before >= min_encoded_size<T>(), "a value encoded to fewer bytes than its minimum");
  }
  static bool decode(reader& in, T& value) {
    [[maybe_unused]] const bool was_ok = in.ok();
    [[maybe_unused]] const std::byte* start = in.position();
    const bool ok = kind_codec<T>::decode(in, value);
    GEERPC_ASSERT(ok || !in.ok(), "a decode failed and left its reader in good state");
    GEERPC_ASSERT(
        !ok || !was_ok || (in.ok() && static_cast<std::size_t>(in.position() - start) >= min_encoded_size<T>()),
        "a decode succeeded on fewer bytes than its type's minimum");
    return ok;
  }
};

namespace detail {
template <class T>
constexpr bool is_bool_like() {
  if constexpr (std::is_enum_v<T>)
    return std::is_same_v<std::underlying_type_t<T>, bool>;
  else
    return std::is_same_v<T, bool>;
}

// Elements whose every bit pattern is a valid value: a vector of them is copied as one block.
template <class T>
inline constexpr bool is_memcpy_array_element = (std::is_integral_v<T> || std::is_same_v<T, float> ||
                                                 std::is_same_v<T, double> || std::is_enum_v<T>)&&!is_bool_like<T>();

// A contiguous run of such elements is its own encoding on a little-endian machine.
template <class T>
inline constexpr bool copies_as_block = is_memcpy_array_element<T>&& std::endian::native == std::endian::little;
}  // namespace detail

}  // namespace codec
GEERPC_END_NAMESPACE
