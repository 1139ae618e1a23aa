// geerpc: a call's schema (docs/protocol.md 4.1), the text of its types' structure with field names.
//
// Two peers whose fingerprints differ exchange it to decide whether their types still agree
// (schema_compare.hpp). The fingerprint (fingerprint.hpp) hashes this text without its names: one
// walk over the types writes both. `std::string describe(point, bool)`, with
// `struct point { int x; int y; }`, is `({x:i4;,y:i4;},b)>s`. The grammar:
//
//   call    := tuple '>' (type | 'x')          the arguments, then the result ('x': none)
//   type    := 'b' | ('i' | 'u') N ';' | 'f' | 'd' | 's'
//            | 'v[' type ']' | 'a' N ';[' type ']' | 'o[' type ']' | 'm[' type '][' type ']'
//            | 'S[' type ']' | tuple | '{' [field (',' field)*] '}'
//            | 'D' numtype N ';' N ';' | 'P' numtype N ';' N ';'
//            | 'V' N ';' ('[' type ']'){N} | 'B' N ';' | 'c' N ';'
//   tuple   := '(' [type (',' type)*] ')'
//   field   := name ':' type                    name: a C++ identifier (field_names<T>())
//   numtype := 'b' | ('i' | 'u') N ';' | 'f' | 'd'
//   N       := decimal digits, no leading zero
#pragma once

#include <cstddef>
#include <string>

#include "../config.hpp"
#include "field_names.hpp"
#include "fingerprint.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {
namespace detail {

// A sink of the structure walk (fingerprint.hpp) that keeps the text, field names included.
struct schema_text {
  std::string& out;
  void add(char c) { out += c; }
  template <class Aggregate, std::size_t Field>
  void add_field_name() {
    constexpr auto names = field_names<Aggregate>();
    out += names[Field];
    out += ':';
  }
};

}  // namespace detail

// Appends T's schema to `out`.
template <class T>
void append_schema(std::string& out) {
  detail::schema_text text{out};
  detail::structure<T>::add(text);
}

// The schema of a call taking Arguments (a std::tuple of the types sent) and returning Result
// (void for none), written once.
template <class Arguments, class Result>
const std::string& call_schema() {
  static const std::string schema = [] {
    std::string out;
    detail::schema_text text{out};
    detail::add_call<Arguments, Result>(text);
    return out;
  }();
  return schema;
}

}  // namespace codec
GEERPC_END_NAMESPACE
