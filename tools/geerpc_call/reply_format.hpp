// geerpc-call: a call's reply, the server's JSON text, laid out for a reader (pretty: on a terminal,
// or --pretty) or left as the server's one line (piped, or --compact).
#pragma once

#include <string>
#include <string_view>

namespace geerpc_call {

// `json` with two spaces per level of nesting, `"key": value`, empty objects and arrays as {} and
// [], the layout describe prints (describe_format.hpp's indented). Exact: it re-indents the text
// itself, so every string, number and literal is kept byte for byte (a 30-digit integer, 1.0E+2,
// -0.0, which a parse into boost::json::value would change); only whitespace outside strings is
// replaced. Text that is no JSON is laid out as far as it goes, never rejected.
std::string reindented(std::string_view json);

}  // namespace geerpc_call
