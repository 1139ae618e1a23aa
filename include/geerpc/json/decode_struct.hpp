// geerpc: the JSON decoder's structs (docs/protocol.md 8.1, 8.2): an object whose keys name the
// fields (codec::field_names), matched exactly or else ignoring ASCII case as Go does, in any order;
// unknown keys skipped, missing fields left at their defaults, a field named twice refused.
#pragma once

#include <array>
#include <boost/pfr/core.hpp>
#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "../codec/field_names.hpp"
#include "../codec/type_kind.hpp"
#include "../config.hpp"
#include "cursor.hpp"
#include "decode_status.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {

namespace detail {
constexpr char lower_ascii(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

constexpr bool equal_ignoring_ascii_case(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower_ascii(a[i]) != lower_ascii(b[i])) return false;
  return true;
}

// The field a key names: the one of that name, else the one of that name ignoring ASCII case (Go's
// rule); N when none.
template <std::size_t N>
constexpr std::size_t field_named(const std::array<std::string_view, N>& names, std::string_view key) noexcept {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == key) return i;
  for (std::size_t i = 0; i < N; ++i)
    if (equal_ignoring_ascii_case(names[i], key)) return i;
  return N;
}
}  // namespace detail

// An object of fields by name (codec::field_names<T>()), in any order: a key that names no field is
// skipped, whatever its value; a field no key names keeps its default; a field named twice (the
// second time perhaps in another case) is an error.
template <class T>
struct kind_decoder<T, codec::type_kind::aggregate> {
  static constexpr auto names = codec::field_names<T>();
  static constexpr std::size_t fields = names.size();

  static bool decode(cursor& in, T& value) {
    const token& at = in.peek();
    if (at.kind != token_kind::object_begin) return in.fail_expected("an object", at);
    in.next();
    std::array<bool, fields> seen{};
    for (std::size_t member = 0; member < at.count(); ++member) {
      const token& key = in.peek();
      const std::size_t field = detail::field_named(names, in.chars(key));
      in.next();
      if (field == fields) {
        in.skip();
        continue;
      }
      if (seen[field])
        return in.fail(
            "duplicate key " + detail::quoted(in.chars(key)) + " for field \"" + std::string(names[field]) + "\"", key);
      seen[field] = true;
      if (!decode_field(in, value, field, std::make_index_sequence<fields>{})) return in.in_field(names[field]);
    }
    in.next();
    return true;
  }

 private:
  template <std::size_t... I>
  static bool decode_field([[maybe_unused]] cursor& in, [[maybe_unused]] T& value, [[maybe_unused]] std::size_t field,
                           std::index_sequence<I...>) {
    bool decoded = false;
    // References to the fields in a std::tuple: clang-analyzer 14 takes boost::pfr::get<I>'s for uninitialized.
    [[maybe_unused]] auto tied = boost::pfr::structure_tie(value);
    (void)((field == I &&
            (decoded = kind_decoder<boost::pfr::tuple_element_t<I, T>>::decode(in, std::get<I>(tied)), true)) ||
           ...);
    return decoded;
  }
};

}  // namespace json
GEERPC_END_NAMESPACE
