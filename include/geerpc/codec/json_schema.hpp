// geerpc: the JSON Schema (draft 2020-12) of a type as the JSON codec writes it (docs/protocol.md
// 8.1), for what describes a server to other programs (GET /debug/geerpc/services.json and the
// built-in method geerpc.Describe, docs/protocol.md 10). Core: no JSON library; the text is written
// here, built from the types alone, once per call (call_json_schema's statics, made when a method
// is registered), never on a call's path.
//
//   integer          {"type":"integer","minimum":-2147483648,"maximum":2147483647}
//   float, double    {"type":"number"}
//   bytes            {"type":"string","contentEncoding":"base64"}
//   struct           {"type":"object","properties":{"a":...,"b":...}}, no "required" (below)
//   optional         {"anyOf":[{"type":"null"},...]}
//   variant          {"oneOf":[{"type":"array","prefixItems":[{"const":0},...],...},...]}
//   time point       {"type":"string","format":"date-time"}
//
// No field is required: a JSON reader gives a field no key names its default (8.2), so a peer may
// leave any out, and a struct that gained trailing fields still reads an older writer's objects.
// Nor are other keys refused (a newer writer's fields are skipped), so "additionalProperties" is
// left open. Like the codecs, the walk goes through class templates, one per kind: Clang 14 spends
// time exponential in the depth on recursive function templates.
#pragma once

#include <boost/pfr/core.hpp>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "../config.hpp"
#include "../json/map_keys.hpp"
#include "field_names.hpp"
#include "type_kind.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

// The schemas of one call: its arguments, the JSON array a call's body is ("params"), and its
// result, or an empty text for a method that returns nothing (its reply's body is empty: no JSON
// value travels).
struct call_json_schema_text {
  std::string params;
  std::string result;
};

namespace detail {

// Bytes travel as base64 strings (json/encode.hpp's rule: a vector or a span of std::byte or
// unsigned char; a deque, a list or a std::array of them is an array of integers).
template <class Element>
inline constexpr bool is_json_byte = std::is_same_v<Element, std::byte> || std::is_same_v<Element, unsigned char>;

inline constexpr std::string_view json_bytes_schema = R"({"type":"string","contentEncoding":"base64"})";

template <class T, type_kind Kind = kind_of<T>()>
struct json_schema;  // left undefined for type_kind::unsupported: registration refuses such a type first

template <class T>
struct json_schema<T, type_kind::boolean> {
  static void append(std::string& out) { out += R"({"type":"boolean"})"; }
};

// Its exact range: int64 and uint64 bounds as numbers, as the codec writes and reads them.
template <class T>
struct json_schema<T, type_kind::integer> {
  static void append(std::string& out) {
    out += R"({"type":"integer","minimum":)";
    out += std::to_string(std::numeric_limits<T>::min());
    out += R"(,"maximum":)";
    out += std::to_string(std::numeric_limits<T>::max());
    out += '}';
  }
};

template <class T>
struct json_schema<T, type_kind::floating> {
  static void append(std::string& out) { out += R"({"type":"number"})"; }
};

// Its underlying integer; a boolean over bool.
template <class T>
struct json_schema<T, type_kind::enumeration> : json_schema<std::underlying_type_t<T>> {};

template <class T>
struct json_schema<T, type_kind::string> {
  static void append(std::string& out) { out += R"({"type":"string"})"; }
};

// {"type":"array","items":E} and what follows `items` (", ..." or nothing) before the brace.
template <class Element>
void append_json_array(std::string& out, std::string_view after_items = {}) {
  out += R"({"type":"array","items":)";
  json_schema<Element>::append(out);
  out += after_items;
  out += '}';
}

template <class T>
struct json_schema<T, type_kind::vector> {
  static void append(std::string& out) {
    if constexpr (is_json_byte<typename T::value_type>)
      out += json_bytes_schema;
    else
      append_json_array<typename T::value_type>(out);
  }
};

template <class T>
struct json_schema<T, type_kind::sequence> {
  static void append(std::string& out) { append_json_array<typename T::value_type>(out); }
};

// What the receiver reads it into: a string_view as a string, a span as the vector.
template <class T>
struct json_schema<T, type_kind::view> {
  static void append(std::string& out) {
    if constexpr (std::is_same_v<T, std::string_view>)
      out += R"({"type":"string"})";
    else
      json_schema<std::vector<std::remove_const_t<typename T::element_type>>>::append(out);
  }
};

template <class T>
struct json_schema<T, type_kind::array> {
  static void append(std::string& out) {
    const std::string size = std::to_string(std::tuple_size_v<T>);
    append_json_array<typename T::value_type>(out, R"(,"minItems":)" + size + R"(,"maxItems":)" + size);
  }
};

// A set with unique keys refuses a repeated element (8.2); a multiset takes repeats.
template <class T>
inline constexpr bool has_unique_keys = requires(T& set, const typename T::value_type& key) {
  set.insert(key).second;
};

template <class T>
struct json_schema<T, type_kind::set> {
  static void append(std::string& out) {
    append_json_array<typename T::value_type>(out, has_unique_keys<T> ? R"(,"uniqueItems":true)" : "");
  }
};

// null when empty, else the value. anyOf, not oneOf: the value's own schema may take null too
// (an optional of an optional), and a null is then still valid.
template <class Value>
void append_json_nullable(std::string& out) {
  out += R"({"anyOf":[{"type":"null"},)";
  json_schema<Value>::append(out);
  out += "]}";
}

template <class T>
struct json_schema<T, type_kind::optional> {
  static void append(std::string& out) { append_json_nullable<typename T::value_type>(out); }
};

template <class T>
struct json_schema<T, type_kind::pointer> {
  static void append(std::string& out) { append_json_nullable<typename T::element_type>(out); }
};

// An array of exactly the types in turn: "prefixItems", nothing after them ("items": false) and
// none missing ("minItems"). An empty tuple is an empty array (prefixItems may not be empty).
template <class... Elements>
void append_json_fixed_array(std::string& out) {
  out += R"({"type":"array",)";
  if constexpr (sizeof...(Elements) != 0) {
    out += R"("prefixItems":[)";
    std::size_t at = 0;
    ((out += at++ == 0 ? "" : ",", json_schema<Elements>::append(out)), ...);
    out += R"(],"minItems":)";
    out += std::to_string(sizeof...(Elements));
    out += ',';
  }
  out += R"("items":false})";
}

// An object keyed by the strings, or by the integers in decimal; any other map an array of
// [key, value] pairs (json/map_keys.hpp).
template <class T>
struct json_schema<T, type_kind::map> {
  using key = typename T::key_type;
  using mapped = typename T::mapped_type;

  static void append(std::string& out) {
    constexpr json::detail::map_keys form = json::detail::map_keys_of<key>();
    if constexpr (form == json::detail::map_keys::pair) {
      out += R"({"type":"array","items":)";
      append_json_fixed_array<key, mapped>(out);
      out += '}';
    } else {
      out += R"({"type":"object",)";
      if constexpr (form == json::detail::map_keys::integer) out += integer_keys();
      out += R"("additionalProperties":)";
      json_schema<mapped>::append(out);
      out += '}';
    }
  }

  // Decimal digits as Go writes map[int]T's keys: a minus sign only where the key can be negative.
  static std::string_view integer_keys() {
    if constexpr (std::is_signed_v<typename std::conditional_t<std::is_enum_v<key>, std::underlying_type<key>,
                                                               std::type_identity<key>>::type>)
      return R"("propertyNames":{"pattern":"^(0|-?[1-9][0-9]*)$"},)";
    else
      return R"("propertyNames":{"pattern":"^(0|[1-9][0-9]*)$"},)";
  }
};

template <class T>
struct json_schema<T, type_kind::tuple> {
  static void append(std::string& out) {
    [&]<std::size_t... I>(std::index_sequence<I...>) { append_json_fixed_array<std::tuple_element_t<I, T>...>(out); }
    (std::make_index_sequence<std::tuple_size_v<T>>{});
  }
};

// An object of the fields by name (codec::field_names: identifiers, nothing to escape).
template <class T>
struct json_schema<T, type_kind::aggregate> {
  static void append(std::string& out) {
    out += R"({"type":"object","properties":{)";
    append_fields(out, std::make_index_sequence<boost::pfr::tuple_size_v<T>>{});
    out += "}}";
  }

  template <std::size_t... I>
  static void append_fields([[maybe_unused]] std::string& out, std::index_sequence<I...>) {
    [[maybe_unused]] constexpr auto names = field_names<T>();  // unused by a struct of no fields
    ((out += I == 0 ? "\"" : ",\"", out += names[I],
      out += "\":", json_schema<boost::pfr::tuple_element_t<I, T>>::append(out)),
     ...);
  }
};

// Its count of ticks, as its representation is written.
template <class T>
struct json_schema<T, type_kind::duration> : json_schema<typename T::rep> {};

template <class T>
struct json_schema<T, type_kind::time_point> {
  static void append(std::string& out) { out += R"({"type":"string","format":"date-time"})"; }
};

// [index, value]: one array form per alternative, told apart by its index.
template <class T>
struct json_schema<T, type_kind::variant> {
  static void append(std::string& out) {
    out += R"({"oneOf":[)";
    append_alternatives(out, std::make_index_sequence<std::variant_size_v<T>>{});
    out += "]}";
  }

  template <std::size_t... I>
  static void append_alternatives(std::string& out, std::index_sequence<I...>) {
    ((out += I == 0 ? "" : ",", out += R"({"type":"array","prefixItems":[{"const":)", out += std::to_string(I),
      out += "},", json_schema<std::variant_alternative_t<I, T>>::append(out),
      out += R"(],"minItems":2,"items":false})"),
     ...);
  }
};

// N characters '0' or '1', bit N-1 first.
template <class T>
struct json_schema<T, type_kind::bitset> {
  static void append(std::string& out) {
    const std::string size = std::to_string(T{}.size());
    out += R"({"type":"string","pattern":"^[01]*$","minLength":)" + size + R"(,"maxLength":)" + size + "}";
  }
};

// Its wire_type's schema; a class that writes its own bytes travels as those bytes, in base64.
template <class T>
struct json_schema<T, type_kind::custom> {
  static void append(std::string& out) {
    if constexpr (has_direct_serializer<T>)
      out += json_bytes_schema;
    else
      json_schema<typename serializer<T>::wire_type>::append(out);
  }
};

}  // namespace detail

// T's JSON Schema, appended to `out`.
template <class T>
void append_json_schema(std::string& out) {
  detail::json_schema<T>::append(out);
}

// The schemas of a call taking Arguments (a std::tuple of the types sent) and returning Result
// (void for none), written once.
template <class Arguments, class Result>
const call_json_schema_text& call_json_schema() {
  static const call_json_schema_text text = [] {
    call_json_schema_text out;
    detail::json_schema<Arguments>::append(out.params);
    if constexpr (!std::is_void_v<Result>) detail::json_schema<Result>::append(out.result);
    return out;
  }();
  return text;
}

}  // namespace codec
GEERPC_END_NAMESPACE
