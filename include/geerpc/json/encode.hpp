// geerpc: the JSON codec's encoder: a value as JSON text, in the forms of docs/protocol.md 8.1.
// kind_encoder<T> writes the values of one kind (a string, a map, an aggregate...), one
// specialization per kind of codec/type_kind.hpp, through json::writer (json/writer.hpp), which
// makes each token right. Recursion goes through class templates only, as in the binary codec
// (codec/kind_codec.hpp says why). A time point's RFC 3339 text and a map's form by its keys are
// json/rfc3339.hpp's and json/map_keys.hpp's, which the decoder shares.
#pragma once

#include <array>
#include <boost/pfr/core.hpp>
#include <cstddef>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "../codec/field_names.hpp"
#include "../codec/serializable.hpp"
#include "../codec/type_kind.hpp"
#include "../codec/writer.hpp"
#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "map_keys.hpp"
#include "rfc3339.hpp"
#include "writer.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {

// Left undefined for codec::type_kind::unsupported: encode() refuses such a T with
// codec::require_serializable's message.
template <class T, codec::type_kind K = codec::kind_of<T>()>
struct kind_encoder;

// Writes `value` as JSON after what `out` holds; throws encode_error for a value with no JSON form.
template <class T>
void encode_value(writer& out, const T& value) {
  kind_encoder<T>::encode(out, value);
}

// Appends the JSON text of `value` to `out`. On encode_error (or any exception a user's serializer
// throws), `out` is left as it was.
template <class T>
void encode(const T& value, std::vector<std::byte>& out) {
  codec::require_serializable<T>();
  if constexpr (codec::is_serializable_v<T>) {
    const std::size_t before = out.size();
    writer w(out);
    try {
      encode_value(w, value);
    } catch (...) {
      out.resize(before);
      throw;
    }
  }
}

// ============================================================================ scalars

template <class T>
struct kind_encoder<T, codec::type_kind::boolean> {
  static void encode(writer& out, bool value) { out.boolean(value); }
};

template <class T>
struct kind_encoder<T, codec::type_kind::integer> {
  static void encode(writer& out, T value) { out.integer(value); }
};

template <class T>
struct kind_encoder<T, codec::type_kind::floating> {
  static void encode(writer& out, T value) { out.number(value); }
};

// Its underlying integer; true/false over bool.
template <class T>
struct kind_encoder<T, codec::type_kind::enumeration> {
  static void encode(writer& out, T value) {
    using underlying = std::underlying_type_t<T>;
    kind_encoder<underlying>::encode(out, static_cast<underlying>(value));
  }
};

template <class T>
struct kind_encoder<T, codec::type_kind::string> {
  static void encode(writer& out, const T& value) { out.string(std::string_view(value.data(), value.size())); }
};

// A count of ticks of its own period, as its representation is written.
template <class T>
struct kind_encoder<T, codec::type_kind::duration> {
  static void encode(writer& out, const T& value) { kind_encoder<typename T::rep>::encode(out, value.count()); }
};

// ============================================================================ sequences

namespace detail {
// Bytes travel as base64 strings, as Go writes []byte.
template <class Element>
inline constexpr bool is_byte = std::is_same_v<Element, std::byte> || std::is_same_v<Element, unsigned char>;

template <class T, class Element = typename T::value_type>
struct range_encoder {
  static void encode(writer& out, const T& range) {
    out.begin_array();
    bool first = true;
    for (const Element& element : range) {
      if (!first) out.comma();
      first = false;
      kind_encoder<Element>::encode(out, element);
    }
    out.end_array();
  }
};
// std::vector<bool>'s elements are proxies, read as bool.
template <class Alloc>
struct range_encoder<std::vector<bool, Alloc>, bool> {
  static void encode(writer& out, const std::vector<bool, Alloc>& range) {
    out.begin_array();
    for (std::size_t i = 0; i < range.size(); ++i) {
      if (i != 0) out.comma();
      out.boolean(range[i]);
    }
    out.end_array();
  }
};

template <class T>
struct bytes_encoder {
  static void encode(writer& out, const T& bytes) { out.base64(std::as_bytes(std::span(bytes.data(), bytes.size()))); }
};
}  // namespace detail

template <class T>
struct kind_encoder<T, codec::type_kind::vector>
    : std::conditional_t<detail::is_byte<typename T::value_type>, detail::bytes_encoder<T>, detail::range_encoder<T>> {
};

template <class T>
struct kind_encoder<T, codec::type_kind::array> : detail::range_encoder<T> {};

template <class T>
struct kind_encoder<T, codec::type_kind::set> : detail::range_encoder<T> {};

template <class T>
struct kind_encoder<T, codec::type_kind::sequence> : detail::range_encoder<T> {};

// What a view views, as what the receiver decodes it into: a string_view as a string, a span as the
// vector (bytes in base64).
template <class T>
struct kind_encoder<T, codec::type_kind::view> {
  static void encode(writer& out, const T& value) {
    if constexpr (std::is_same_v<T, std::string_view>)
      out.string(value);
    else if constexpr (detail::is_byte<typename T::value_type>)
      detail::bytes_encoder<T>::encode(out, value);
    else
      detail::range_encoder<T>::encode(out, value);
  }
};

// A string of N '0'/'1' characters, bit N-1 first (std::bitset::to_string's order).
template <class T>
struct kind_encoder<T, codec::type_kind::bitset> {
  static void encode(writer& out, const T& bits) {
    out.put('"');
    for (std::size_t i = bits.size(); i-- > 0;) out.put(bits.test(i) ? '1' : '0');
    out.put('"');
  }
};

// ============================================================================ alternatives

template <class T>
struct kind_encoder<T, codec::type_kind::optional> {
  static void encode(writer& out, const T& value) {
    if (value)
      kind_encoder<typename T::value_type>::encode(out, *value);
    else
      out.null();
  }
};

template <class T>
struct kind_encoder<T, codec::type_kind::pointer> {
  static void encode(writer& out, const T& value) {
    if (value)
      kind_encoder<typename T::element_type>::encode(out, *value);
    else
      out.null();
  }
};

// [index, value].
template <class T>
struct kind_encoder<T, codec::type_kind::variant> {
  static void encode(writer& out, const T& value) {
    if (value.valueless_by_exception()) throw encode_error("a variant left valueless by an exception has no value");
    out.begin_array();
    out.integer(value.index());
    out.comma();
    std::visit(
        [&](const auto& alternative) {
          kind_encoder<std::remove_cvref_t<decltype(alternative)>>::encode(out, alternative);
        },
        value);
    out.end_array();
  }
};

// ============================================================================ maps

namespace detail {
// A map's key as an object's key (detail::map_keys_of): a string as it is, an integer in decimal.
template <class K, map_keys Form = map_keys_of<K>()>
struct key_encoder {
  static void encode(writer& out, const K& key) { out.string(std::string_view(key.data(), key.size())); }
};
template <class K>
struct key_encoder<K, map_keys::integer> {
  static void encode(writer& out, K key) {
    out.put('"');
    if constexpr (std::is_enum_v<K>)
      out.integer(static_cast<std::underlying_type_t<K>>(key));
    else
      out.integer(key);
    out.put('"');
  }
};
}  // namespace detail

template <class T>
struct kind_encoder<T, codec::type_kind::map> {
  using key = typename T::key_type;
  using mapped = typename T::mapped_type;
  static constexpr bool as_object = detail::map_keys_of<key>() != detail::map_keys::pair;

  static void encode(writer& out, const T& map) {
    as_object ? out.begin_object() : out.begin_array();
    bool first = true;
    for (const auto& [k, v] : map) {
      if (!first) out.comma();
      first = false;
      if constexpr (as_object) {
        detail::key_encoder<key>::encode(out, k);
        out.colon();
        kind_encoder<mapped>::encode(out, v);
      } else {
        out.begin_array();
        kind_encoder<key>::encode(out, k);
        out.comma();
        kind_encoder<mapped>::encode(out, v);
        out.end_array();
      }
    }
    as_object ? out.end_object() : out.end_array();
  }
};

// ============================================================================ members

// [first, second, ...].
template <class T>
struct kind_encoder<T, codec::type_kind::tuple> {
  static void encode(writer& out, const T& value) {
    out.begin_array();
    encode_elements(out, value, std::make_index_sequence<std::tuple_size_v<T>>{});
    out.end_array();
  }

 private:
  template <std::size_t... I>
  static void encode_elements([[maybe_unused]] writer& out, [[maybe_unused]] const T& value,
                              std::index_sequence<I...>) {
    ((I == 0 ? void() : out.comma(), kind_encoder<std::tuple_element_t<I, T>>::encode(out, std::get<I>(value))), ...);
  }
};

namespace detail {
// The text before each field's value, `"name":` (after a comma but for the first field), made once
// at compile time: names are identifiers (codec::field_names checks the user's), nothing to escape.
template <class T>
struct field_keys {
  static constexpr auto names = codec::field_names<T>();
  static constexpr std::size_t size = [] {
    std::size_t total = 0;
    for (const std::string_view name : names) total += name.size() + 4;  // ,"name":
    return total;
  }();
  static constexpr std::array<char, size + 1> text = [] {
    std::array<char, size + 1> out{};
    std::size_t at = 0;
    for (const std::string_view name : names) {
      out[at++] = ',';
      out[at++] = '"';
      for (const char c : name) out[at++] = c;
      out[at++] = '"';
      out[at++] = ':';
    }
    return out;
  }();

  // Field `index`'s key: its text starts after those of the fields before it.
  static constexpr std::string_view key(std::size_t index) noexcept {
    std::size_t start = 0;
    for (std::size_t i = 0; i < index; ++i) start += names[i].size() + 4;
    const std::size_t comma = index == 0 ? 1 : 0;
    return {text.data() + start + comma, names[index].size() + 4 - comma};
  }
};
template <class T, std::size_t Index>
inline constexpr std::string_view field_key = field_keys<T>::key(Index);
}  // namespace detail

// An object of the fields by name, in declaration order. A field whose value has no JSON form
// adds its name to the error's path as the exception passes (nothing is done while none is thrown).
template <class T>
struct kind_encoder<T, codec::type_kind::aggregate> {
  static void encode(writer& out, const T& value) {
    std::size_t field = 0;
    try {
      out.begin_object();
      boost::pfr::for_each_field(value, [&](const auto& member, auto index) {
        field = index;
        out.raw(detail::field_key<T, decltype(index)::value>);
        kind_encoder<std::remove_cvref_t<decltype(member)>>::encode(out, member);
      });
      out.end_object();
    } catch (const encode_error& error) {
      throw error.in_field(detail::field_keys<T>::names[field]);
    }
  }
};

// ============================================================================ time points

// RFC 3339 in UTC, with the fraction digits the duration's period needs: "2026-12-06T03:04:05.123Z".
template <class T>
struct kind_encoder<T, codec::type_kind::time_point> {
  using rep = typename T::rep;
  using period = typename T::period;

  static void encode(writer& out, const T& value) {
    const rep count = value.time_since_epoch().count();
    if constexpr (std::is_integral_v<rep>)
      detail::write_rfc3339(out, detail::split_integer_ticks<rep, period>(count));
    else
      detail::write_rfc3339(out, detail::split_floating_ticks<rep, period>(count));
  }
};

// ============================================================================ custom

// A serializer's wire_type, as that type is written; with a serializer that writes its own bytes
// (codec::serializer<T>::encode), those bytes in base64.
template <class T>
struct kind_encoder<T, codec::type_kind::custom> {
  static void encode(writer& out, const T& value) {
    if constexpr (codec::detail::has_direct_serializer<T>) {
      std::vector<std::byte> bytes;
      codec::writer binary(bytes);
      codec::serializer<T>::encode(binary, value);
      out.base64(bytes);
    } else {
      using wire_type = typename codec::serializer<T>::wire_type;
      kind_encoder<wire_type>::encode(out, codec::serializer<T>::to_wire(value));
    }
  }
};

}  // namespace json
GEERPC_END_NAMESPACE
