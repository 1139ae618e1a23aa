// geerpc: a peer's call schema (schema.hpp, docs/protocol.md 4.1) read from untrusted text into a
// tree of types, which schema_compare.hpp compares with one's own.
//
// The parser is bounded by the text alone: at most 64 KiB, nesting at most 64 deep (its recursion
// too), one node per byte at most, numbers at most 2^32 (a period's at most 2^63 - 1), names at
// most 255 bytes. What it refuses, it names with the byte where it stopped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {
namespace detail {

inline constexpr std::size_t max_schema_bytes = std::size_t{64} * 1024;
inline constexpr int max_schema_depth = 64;
inline constexpr std::size_t max_schema_name_bytes = 255;
inline constexpr std::uint64_t max_schema_number = std::uint64_t{1} << 32;
// A duration's period is a ratio of intmax_t (std::pico's denominator is 10^12).
inline constexpr std::uint64_t max_schema_period = INTMAX_MAX;
inline constexpr std::uint32_t no_schema_node = UINT32_MAX;

// One type of a parsed schema.
struct schema_node {
  char token = 0;            // its first byte: 'b', 'i', 'v', '(', '{', 'D', ...; 'x': no result
  std::uint64_t number = 0;  // i, u: bytes; a: length; V: alternatives; B: bits; c: minimum size; D, P: period's num
  std::uint64_t den = 0;     // D, P: period's den
  std::string_view name;     // a struct's field: its name
  std::uint32_t first_child = no_schema_node;  // elements, fields, alternatives; a map's key, then its value; D's rep
  std::uint32_t next_sibling = no_schema_node;
  std::uint32_t children = 0;
};

struct parsed_schema {
  std::vector<schema_node> nodes;
  std::uint32_t arguments = no_schema_node;  // a tuple
  std::uint32_t result = no_schema_node;     // 'x' for none
  const char* error = nullptr;               // why the text is not a schema, found at byte error_at
  std::size_t error_at = 0;
};

constexpr bool is_schema_digit(char c) noexcept { return c >= '0' && c <= '9'; }
constexpr bool is_schema_name_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_schema_digit(c) || c == '_';
}

// Recursive descent over the grammar of schema.hpp; each type descends one level, and a level
// past max_schema_depth is refused before it descends further.
class schema_parser {
 public:
  explicit schema_parser(std::string_view text) : text_(text) {}

  parsed_schema parse() && {
    if (text_.size() > max_schema_bytes) {
      fail_at(max_schema_bytes, "schema longer than 65536 bytes");
      return std::move(out_);
    }
    out_.nodes.reserve(text_.size() / 2 + 2);  // what most texts hold: growing cost more than the parse
    if (peek() != '(') {
      fail("expected '(', the arguments' tuple");
      return std::move(out_);
    }
    out_.arguments = type(1);
    if (out_.arguments == no_schema_node || !expect('>', "expected '>' after the arguments")) return std::move(out_);
    if (peek() == 'x') {
      out_.result = add_node('x');
      ++pos_;
    } else {
      out_.result = type(1);
    }
    if (out_.result != no_schema_node && !at_end()) fail("bytes after the end of the schema");
    return std::move(out_);
  }

 private:
  bool at_end() const noexcept { return pos_ >= text_.size(); }
  char peek() const noexcept { return at_end() ? '\0' : text_[pos_]; }

  bool fail_at(std::size_t at, const char* reason) {
    if (out_.error == nullptr) {
      out_.error = reason;
      out_.error_at = at;
    }
    return false;
  }
  // At the end of the text, whatever was expected, the text was cut short.
  bool fail(const char* reason) { return fail_at(pos_, at_end() ? "the schema ends too early" : reason); }

  bool expect(char c, const char* reason) {
    if (peek() != c) return fail(reason);  // never '\0', which peek() gives at the end
    ++pos_;
    return true;
  }

  // N ';'
  bool number(std::uint64_t& n, std::uint64_t max, const char* too_large) {
    const std::size_t start = pos_;
    if (!is_schema_digit(peek())) return fail("expected a number");
    if (peek() == '0' && pos_ + 1 < text_.size() && is_schema_digit(text_[pos_ + 1]))
      return fail("number with a leading zero");
    n = 0;
    for (; !at_end() && is_schema_digit(peek()); ++pos_) {
      const auto digit = static_cast<std::uint64_t>(peek() - '0');
      if (n > (max - digit) / 10) return fail_at(start, too_large);
      n = n * 10 + digit;
    }
    return expect(';', "expected ';' after a number");
  }
  bool count(std::uint32_t node) { return number(out_.nodes[node].number, max_schema_number, "number above 2^32"); }

  std::uint32_t add_node(char token) {
    schema_node node;
    node.token = token;
    out_.nodes.push_back(node);
    return static_cast<std::uint32_t>(out_.nodes.size() - 1);
  }
  void link(std::uint32_t parent, std::uint32_t& last, std::uint32_t child) {
    (last == no_schema_node ? out_.nodes[parent].first_child : out_.nodes[last].next_sibling) = child;
    last = child;
    ++out_.nodes[parent].children;
  }

  // One type at the given depth: its node, or no_schema_node (and the error) if it is malformed.
  std::uint32_t type(int depth) {
    if (depth > max_schema_depth) {
      fail_at(pos_, "nesting deeper than 64");
      return no_schema_node;
    }
    if (at_end()) {
      fail("expected a type");
      return no_schema_node;
    }
    const std::size_t start = pos_++;
    const char token = text_[start];
    const std::uint32_t node = add_node(token);
    return parts(node, token, start, depth) ? node : no_schema_node;
  }

  // What follows a type's first byte.
  bool parts(std::uint32_t node, char token, std::size_t start, int depth) {
    std::uint32_t last = no_schema_node;
    switch (token) {
      case 'b':
      case 'f':
      case 'd':
      case 's':
        return true;
      case 'i':
      case 'u':
      case 'B':
      case 'c':
        return count(node);
      case 'v':
      case 'o':
      case 'S':
        return bracketed(node, last, depth);
      case 'a':
        return count(node) && bracketed(node, last, depth);
      case 'm':
        return bracketed(node, last, depth) && bracketed(node, last, depth);
      case 'V':
        return count(node) && alternatives(node, depth);
      case '(':
        return sequence(node, ')', "expected ',' or ')'", depth);
      case '{':
        return sequence(node, '}', "expected ',' or '}'", depth);
      case 'D':
      case 'P':
        return period(node);
      default:
        return fail_at(start, "unknown type");
    }
  }

  // '[' type ']', a child of node.
  bool bracketed(std::uint32_t node, std::uint32_t& last, int depth) {
    if (!expect('[', "expected '['")) return false;
    const std::uint32_t child = type(depth + 1);
    if (child == no_schema_node) return false;
    link(node, last, child);
    return expect(']', "expected ']'");
  }

  // As many '[' type ']' as the count said.
  bool alternatives(std::uint32_t node, int depth) {
    std::uint32_t last = no_schema_node;
    std::uint64_t seen = 0;
    for (; peek() == '['; ++seen) {
      if (seen == out_.nodes[node].number) return fail("variant with more alternatives than its count");
      if (!bracketed(node, last, depth)) return false;
    }
    return seen == out_.nodes[node].number || fail("variant with fewer alternatives than its count");
  }

  // A tuple's types or a struct's fields, separated by ',', up to the closing byte.
  bool sequence(std::uint32_t node, char close, const char* expected, int depth) {
    std::uint32_t last = no_schema_node;
    if (peek() != close) {
      for (;;) {
        if (!member(node, last, close == '}', depth)) return false;
        if (peek() == close) break;
        if (!expect(',', expected)) return false;
      }
    }
    ++pos_;
    return true;
  }

  // A tuple's type, or a struct's field: name ':' type.
  bool member(std::uint32_t node, std::uint32_t& last, bool named, int depth) {
    std::string_view name;
    if (named && !field_name(name)) return false;
    const std::uint32_t child = type(depth + 1);
    if (child == no_schema_node) return false;
    out_.nodes[child].name = name;
    link(node, last, child);
    return true;
  }

  // name ':'
  bool field_name(std::string_view& name) {
    const std::size_t start = pos_;
    while (is_schema_name_char(peek())) ++pos_;
    name = text_.substr(start, pos_ - start);
    if (at_end()) return fail("expected ':' after a field name");  // "ends too early"
    if (name.size() > max_schema_name_bytes) return fail_at(start, "field name longer than 255 bytes");
    if (name.empty() || is_schema_digit(name[0])) return fail_at(start, "expected a field name (an identifier)");
    return expect(':', "expected ':' after a field name");
  }

  // A duration's or time point's numtype, then its period's num ';' den ';'.
  bool period(std::uint32_t node) {
    const char rep = peek();
    if (rep != 'b' && rep != 'i' && rep != 'u' && rep != 'f' && rep != 'd')
      return fail("expected a number type (b, i, u, f or d)");
    std::uint32_t last = no_schema_node;
    const std::uint32_t child = add_node(rep);
    ++pos_;
    link(node, last, child);
    if ((rep == 'i' || rep == 'u') && !count(child)) return false;
    return number(out_.nodes[node].number, max_schema_period, "period above 2^63 - 1") &&
           number(out_.nodes[node].den, max_schema_period, "period above 2^63 - 1");
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  parsed_schema out_;
};

inline parsed_schema parse_call_schema(std::string_view text) { return schema_parser(text).parse(); }

}  // namespace detail
}  // namespace codec
GEERPC_END_NAMESPACE
