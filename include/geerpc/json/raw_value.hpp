// geerpc: JSON text as a value, for the JSON codec: a dynamic call, whose argument and result types
// are known only at run time (a command-line caller, a gateway, a test harness).
//
//   auto client = geerpc::dial<geerpc::threaded, geerpc::json_codec>(address);
//   geerpc::json::raw_value sum = client.call<geerpc::json::raw_value>(
//       geerpc::with_timeout(1s), "Arith.Sum", geerpc::json::raw_arguments{R"([{"num1":1,"num2":2}])"});
//   // sum.text == "3"
//
// raw_value is one JSON value, written as its text holds it (after a check that it is exactly one
// valid JSON value: a call with any other fails with errc::invalid_argument, sending nothing) and
// read as the exact text of the value that arrived. raw_arguments is a whole call's arguments, the
// array docs/protocol.md 8 sends (`[a, b]`), given alone in place of the arguments. Neither
// changes what goes on the wire: the JSON codec sends no type fingerprint and no schema for any
// call (json/codec.hpp), so the server checks the values as it reads them, as it does any JSON call.
// A handler may take and return them too (over the JSON codec; its schema says any value). Both
// are for the JSON codec: the binary codec sees them as structs holding a string.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "../codec/json_schema.hpp"
#include "../codec/reader.hpp"
#include "../codec/type_kind.hpp"
#include "../config.hpp"
#include "cursor.hpp"
#include "decode_status.hpp"
#include "encode.hpp"
#include "tape.hpp"
#include "writer.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {

// One JSON value as text: `3`, `"text"`, `{"num1":1,"num2":2}`. Read from a reply, it is the value's
// exact text, without the whitespace around it; from a void method's reply (no value), empty.
struct raw_value {
  std::string text;
  friend bool operator==(const raw_value&, const raw_value&) = default;
};

// A whole call's arguments as the text of a JSON array, `[{"num1":1,"num2":2}]`: given alone, in
// place of the arguments, it is sent as the call's arguments are (json_codec::encode_arguments).
struct raw_arguments {
  std::string text;
  friend bool operator==(const raw_arguments&, const raw_arguments&) = default;
};

// Whether `text` is exactly one JSON value the JSON codec would read (docs/protocol.md 8.2: nesting,
// repeated keys and numbers as a decode checks them); the reason and byte offset when it is not.
inline decode_status check_value_text(std::string_view text) {
  tape parsed(std::as_bytes(std::span(text.data(), text.size())));
  return parsed.parse();
}

namespace detail {
// Appends `text`, one JSON value or (Array) one JSON array, verbatim; throws encode_error when it is not.
template <bool Array>
void write_checked_text(writer& out, std::string_view text) {
  tape parsed(std::as_bytes(std::span(text.data(), text.size())));
  if (decode_status status = parsed.parse(); !status) throw encode_error("not one JSON value: " + status.message());
  if constexpr (Array)
    if (parsed[0].kind != token_kind::array_begin) throw encode_error("the arguments must be one JSON array, `[a, b]`");
  out.raw(parsed.value_text(0));
}

// Reads the value at the cursor as its exact text.
template <class T>
bool decode_raw_text(cursor& in, T& value) {
  const std::string_view text = in.value_text();
  if (!in.charge(text.size(), in.peek())) return false;
  value.text.assign(text);
  in.skip();
  return true;
}
}  // namespace detail

template <>
struct kind_encoder<raw_value, codec::type_kind::aggregate> {
  static void encode(writer& out, const raw_value& value) { detail::write_checked_text<false>(out, value.text); }
};
template <>
struct kind_encoder<raw_arguments, codec::type_kind::aggregate> {
  static void encode(writer& out, const raw_arguments& value) { detail::write_checked_text<true>(out, value.text); }
};

template <>
struct kind_decoder<raw_value, codec::type_kind::aggregate> {
  static bool decode(cursor& in, raw_value& value) { return detail::decode_raw_text(in, value); }
};
template <>
struct kind_decoder<raw_arguments, codec::type_kind::aggregate> {
  static bool decode(cursor& in, raw_arguments& value) {
    if (in.peek().kind != token_kind::array_begin) return in.fail_expected("an array", in.peek());
    return detail::decode_raw_text(in, value);
  }
};

}  // namespace json

// A handler of raw values is described (docs/protocol.md 10) as taking any value, `{}`, and any array.
namespace codec::detail {
template <>
struct json_schema<json::raw_value, type_kind::aggregate> {
  static void append(std::string& out) { out += "{}"; }
};
template <>
struct json_schema<json::raw_arguments, type_kind::aggregate> {
  static void append(std::string& out) { out += R"({"type":"array"})"; }
};
}  // namespace codec::detail

GEERPC_END_NAMESPACE
