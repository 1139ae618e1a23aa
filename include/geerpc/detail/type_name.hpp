// geerpc: a type's name as the compiler spells it, tidied for people ("std::string", not
// "std::__cxx11::basic_string<char>"): what the debug page shows of a method's argument and reply.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// GCC: "... [with T = Args; std::string_view = ...]"; Clang: "... [T = Args]".
template <class T>
std::string_view raw_type_name() noexcept {
  const std::string_view text = __PRETTY_FUNCTION__;
  const std::size_t from = text.find("T = ");
  if (from == std::string_view::npos) return "?";
  const std::size_t begin = from + 4;
  int depth = 0;
  std::size_t end = begin;
  for (; end < text.size(); ++end) {
    const char c = text[end];
    if (c == '<' || c == '(' || c == '[') ++depth;
    if ((c == '>' || c == ')') && depth > 0) --depth;
    if (c == ']' && depth-- == 0) break;
    if (c == ';' && depth == 0) break;
  }
  return text.substr(begin, end - begin);
}

inline void replace_all(std::string& text, std::string_view what, std::string_view with) {
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + with.size()))
    text.replace(at, what.size(), with);
}

template <class T>
std::string type_name() {
  std::string name(raw_type_name<T>());
  replace_all(name, "std::__cxx11::", "std::");
  replace_all(name, "std::basic_string<char>", "std::string");
  replace_all(name, "std::basic_string_view<char>", "std::string_view");
  replace_all(name, " >", ">");
  return name;
}

}  // namespace detail
GEERPC_END_NAMESPACE
