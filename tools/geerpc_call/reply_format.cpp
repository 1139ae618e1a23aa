// geerpc-call's pretty replies: the reply's text re-indented without parsing it. Outside a string,
// JSON's only whitespace is insignificant, so dropping it and inserting our own after the
// structural characters ({ [ , and before } ]) changes the layout and nothing else; inside a
// string, every byte is copied, an escaped quote included.
#include "reply_format.hpp"

namespace geerpc_call {
namespace {

constexpr std::string_view json_whitespace = " \t\r\n";

void new_line(std::string& out, std::size_t depth) {
  out += '\n';
  out.append(depth * 2, ' ');
}

// Copies the string that opens at json[i] (a quote) to `out`; returns the index of its closing quote.
std::size_t copy_string(std::string& out, std::string_view json, std::size_t i) {
  out += json[i];
  for (++i; i < json.size(); ++i) {
    out += json[i];
    if (json[i] == '\\' && i + 1 < json.size())
      out += json[++i];
    else if (json[i] == '"')
      break;
  }
  return i;
}

}  // namespace

std::string reindented(std::string_view json) {
  std::string out;
  out.reserve(json.size() * 2);
  std::size_t depth = 0;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (json_whitespace.find(c) != std::string_view::npos) continue;
    if (c == '"') {
      i = copy_string(out, json, i);
    } else if (c == '{' || c == '[') {
      out += c;
      const std::size_t next = json.find_first_not_of(json_whitespace, i + 1);
      if (next != std::string_view::npos && (json[next] == '}' || json[next] == ']')) {
        out += json[next];  // {} and []: one token, as describe prints them
        i = next;
        continue;
      }
      new_line(out, ++depth);
    } else if (c == '}' || c == ']') {
      depth = depth > 0 ? depth - 1 : 0;
      new_line(out, depth);
      out += c;
    } else if (c == ',') {
      out += c;
      new_line(out, depth);
    } else if (c == ':') {
      out += ": ";
    } else {
      out += c;  // a number's or a literal's character
    }
  }
  return out;
}

}  // namespace geerpc_call
