// geerpc-call: a server's description (geerpc.Describe's document, docs/protocol.md 10) as the text
// `list` and `describe` print.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

namespace geerpc_call {

// One line per method: `Arith.Sum({num1: int32, num2: int32}) -> int32`; a void result is `void`.
std::string list_text(const boost::json::value& document);

// The method's entry of the document (its name, params and result schemas), indented JSON; nothing
// when the document has no such method.
std::optional<std::string> describe_text(const boost::json::value& document, std::string_view method);

// A schema (draft 2020-12, in the JSON codec's forms) in a few words: `int32`, `[string]`,
// `{a: bool, b: double?}`, `(int32, string)` for a tuple, `any` for what it cannot name.
std::string type_summary(const boost::json::value& schema);

// `value` as JSON with two spaces per level of nesting.
std::string indented(const boost::json::value& value);

}  // namespace geerpc_call
