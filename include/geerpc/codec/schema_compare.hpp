// geerpc: whether two peers' call schemas (schema.hpp, docs/protocol.md 4.1) agree, read from
// untrusted text, and where they differ, in words.
//
// A struct travels behind its length, so a reader skips the trailing fields it does not know and
// defaults the ones missing: structs agree when their common leading fields agree, matched by
// position (a renamed field agrees). Everything else agrees only when it is the same type with the
// same sizes and counts, and its parts agree.
//
// The parser is bounded by the text alone: at most 64 KiB, nesting at most 64 deep (its recursion
// too), one node per byte at most, numbers at most 2^32 (a period's at most 2^63 - 1), names at
// most 255 bytes. What it refuses, it names with the byte where it stopped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "fingerprint.hpp"

GEERPC_BEGIN_NAMESPACE
namespace codec {

struct schema_verdict {
  bool compatible = false;
  std::string why;  // if not: where the schemas differ and the type on each side, or what is malformed
};

// How a verdict's message names the two sides: "<type> here, <type> on the peer" by default; a
// server says "on the server" and "from the client".
struct schema_sides {
  const char* mine = "here";
  const char* theirs = "on the peer";
};

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

// How a type reads in a message: "list<struct{id, price}>". Output stops growing past `limit`.
inline void append_type_name(const parsed_schema& schema, std::uint32_t at, std::string& out, std::size_t limit);

inline void append_child_names(const parsed_schema& schema, std::uint32_t parent, std::string& out, std::size_t limit) {
  const char* separator = "";
  for (std::uint32_t child = schema.nodes[parent].first_child; child != no_schema_node && out.size() <= limit;
       child = schema.nodes[child].next_sibling) {
    out += separator;
    append_type_name(schema, child, out, limit);
    separator = ", ";
  }
}

inline void append_field_names(const parsed_schema& schema, std::uint32_t parent, std::string& out, std::size_t limit) {
  constexpr int shown = 6;
  int count = 0;
  for (std::uint32_t child = schema.nodes[parent].first_child; child != no_schema_node && out.size() <= limit;
       child = schema.nodes[child].next_sibling, ++count) {
    out += count == 0 ? "" : ", ";
    if (count == shown) {
      out += "...";
      return;
    }
    out += schema.nodes[child].name;
  }
}

inline void append_type_name(const parsed_schema& schema, std::uint32_t at, std::string& out, std::size_t limit) {
  if (out.size() > limit) return;
  const schema_node& node = schema.nodes[at];
  const std::string number = std::to_string(node.number);
  const auto with_parts = [&](const char* open, const std::string& close) {
    out += open;
    append_child_names(schema, at, out, limit);
    out += close;
  };
  switch (node.token) {
    case 'b':
      out += "bool";
      return;
    case 'f':
      out += "float";
      return;
    case 'd':
      out += "double";
      return;
    case 's':
      out += "string";
      return;
    case 'x':
      out += "void";
      return;
    case 'i':
    case 'u':
      out += (node.token == 'i' ? "int" : "uint") + std::to_string(node.number * 8);
      return;
    case 'v': {
      const schema_node& element = schema.nodes[node.first_child];
      if (element.token != 'u' || element.number != 1) return with_parts("list<", ">");
      out += "bytes";
      return;
    }
    case 'a':
      return with_parts("array<", ", " + number + ">");
    case 'o':
      return with_parts("optional<", ">");
    case 'm':
      return with_parts("map<", ">");
    case 'S':
      return with_parts("set<", ">");
    case '(':
      return with_parts("tuple<", ">");
    case 'V':
      return with_parts("variant<", ">");
    case 'D':
      return with_parts("duration<", ", " + number + "/" + std::to_string(node.den) + ">");
    case 'P':
      return with_parts("time_point<", ", " + number + "/" + std::to_string(node.den) + ">");
    case 'B':
      out += "bitset<" + number + ">";
      return;
    case 'c':
      out += "custom(" + number + " bytes min)";
      return;
    case '{':
      out += "struct{";
      append_field_names(schema, at, out, limit);
      out += "}";
      return;
    default:
      return;
  }
}

// At most `limit` bytes, the end of a longer one replaced by "...".
inline std::string shortened(std::string text, std::size_t limit) {
  if (text.size() > limit) {
    text.resize(limit - 3);
    text += "...";
  }
  return text;
}

inline std::string type_name_in(const parsed_schema& schema, std::uint32_t at) {
  constexpr std::size_t limit = 80;
  std::string out;
  append_type_name(schema, at, out, limit);
  return shortened(std::move(out), limit);
}

// Walks two parsed schemas side by side, keeping the path to where it is ("items[].price"), and
// stops at the first pair of types that disagree.
class schema_comparison {
 public:
  schema_comparison(const parsed_schema& mine, const parsed_schema& theirs, schema_sides sides)
      : mine_(mine), theirs_(theirs), sides_(sides) {}

  schema_verdict verdict() {
    const std::uint32_t count = mine_.nodes[mine_.arguments].children;
    const std::uint32_t their_count = theirs_.nodes[theirs_.arguments].children;
    if (count != their_count)
      return {false, std::to_string(count) + (count == 1 ? " argument " : " arguments ") + sides_.mine + ", " +
                         std::to_string(their_count) + " " + sides_.theirs};
    std::uint32_t a = mine_.nodes[mine_.arguments].first_child;
    std::uint32_t b = theirs_.nodes[theirs_.arguments].first_child;
    for (std::uint32_t k = 1; a != no_schema_node; ++k) {
      if (!agree(a, b)) return {false, message("argument " + std::to_string(k))};
      a = mine_.nodes[a].next_sibling;
      b = theirs_.nodes[b].next_sibling;
    }
    if (!agree(mine_.result, theirs_.result)) return {false, message("the result")};
    return {true, {}};
  }

 private:
  struct difference {
    std::uint32_t mine = no_schema_node;
    std::uint32_t theirs = no_schema_node;
    std::string path;
  };

  bool differ(std::uint32_t a, std::uint32_t b) {
    found_ = {a, b, path_};
    return false;
  }

  bool agree(std::uint32_t a, std::uint32_t b) {
    const schema_node& mine = mine_.nodes[a];
    const schema_node& theirs = theirs_.nodes[b];
    if (mine.token != theirs.token || mine.number != theirs.number || mine.den != theirs.den) return differ(a, b);
    switch (mine.token) {
      case '{':
        return fields_agree(a, b);
      case '(':
      case 'V':
        return mine.children == theirs.children ? elements_agree(a, b) : differ(a, b);
      case 'D':
      case 'P':
        return agree_here(mine.first_child, theirs.first_child) || differ(a, b);
      case 'm':
        return exact_part_agrees(a, b, mine.first_child, theirs.first_child, "{key}") &&
               part_agrees(a, b, mine_.nodes[mine.first_child].next_sibling,
                           theirs_.nodes[theirs.first_child].next_sibling, "[]");
      case 'o':
        return part_agrees(a, b, mine.first_child, theirs.first_child, "?");
      case 'S':
        return exact_part_agrees(a, b, mine.first_child, theirs.first_child, "[]");
      case 'v':
      case 'a':
        return part_agrees(a, b, mine.first_child, theirs.first_child, "[]");
      default:
        return true;
    }
  }
  // A duration's or a time point's rep, a number type.
  bool agree_here(std::uint32_t a, std::uint32_t b) const {
    const schema_node& mine = mine_.nodes[a];
    const schema_node& theirs = theirs_.nodes[b];
    return mine.token == theirs.token && mine.number == theirs.number;
  }

  // A container's part. Where the part itself differs, the container is named with both its
  // types ("field tags: list<int32> here, list<string> on the peer"), not its part.
  bool part_agrees(std::uint32_t a, std::uint32_t b, std::uint32_t part, std::uint32_t their_part, const char* step) {
    const std::size_t mark = path_.size();
    path_ += step;
    const bool agrees = agree(part, their_part);
    if (!agrees && found_.path.size() == path_.size()) found_ = {a, b, path_.substr(0, mark)};
    path_.resize(mark);
    return agrees;
  }

  // A map's key or a set's element: a struct there may not gain or lose fields, for a reader that
  // cut them off could find two keys equal that were not, or lose the order the writer kept.
  bool exact_part_agrees(std::uint32_t a, std::uint32_t b, std::uint32_t part, std::uint32_t their_part,
                         const char* step) {
    ++exact_;
    const bool agrees = part_agrees(a, b, part, their_part, step);
    --exact_;
    return agrees;
  }

  // A tuple's elements or a variant's alternatives, as many on each side: "#1", "#2", ...
  bool elements_agree(std::uint32_t a, std::uint32_t b) {
    std::uint32_t x = mine_.nodes[a].first_child;
    std::uint32_t y = theirs_.nodes[b].first_child;
    for (std::uint32_t k = 1; x != no_schema_node; ++k) {
      if (!step_agrees(x, y, "#" + std::to_string(k))) return false;
      x = mine_.nodes[x].next_sibling;
      y = theirs_.nodes[y].next_sibling;
    }
    return true;
  }

  // The fields both structs have, by position; those only one has do not matter (but in a key).
  bool fields_agree(std::uint32_t a, std::uint32_t b) {
    if (exact_ > 0 && mine_.nodes[a].children != theirs_.nodes[b].children) return differ(a, b);
    std::uint32_t x = mine_.nodes[a].first_child;
    std::uint32_t y = theirs_.nodes[b].first_child;
    for (; x != no_schema_node && y != no_schema_node;
         x = mine_.nodes[x].next_sibling, y = theirs_.nodes[y].next_sibling)
      if (!step_agrees(x, y, std::string(mine_.nodes[x].name))) return false;
    return true;
  }

  bool step_agrees(std::uint32_t a, std::uint32_t b, const std::string& step) {
    const std::size_t mark = path_.size();
    if (!path_.empty()) path_ += '.';
    path_ += step;
    const bool agrees = agree(a, b);
    path_.resize(mark);
    return agrees;
  }

  // "argument 1, field items[].price: int32 here, double on the peer"
  std::string message(const std::string& where) const {
    constexpr std::size_t path_limit = 80;
    std::string out = where;
    if (!found_.path.empty()) {
      out += found_.path[0] == '#' ? ", element " : ", field ";
      out += found_.path.size() > path_limit ? "..." + found_.path.substr(found_.path.size() - (path_limit - 3))
                                             : found_.path;
    }
    return out + ": " + type_name_in(mine_, found_.mine) + " " + sides_.mine + ", " +
           type_name_in(theirs_, found_.theirs) + " " + sides_.theirs;
  }

  const parsed_schema& mine_;
  const parsed_schema& theirs_;
  const schema_sides sides_;
  int exact_ = 0;  // > 0 inside a map's key or a set's element, where structs must match exactly
  std::string path_;
  difference found_;
};

inline std::string malformed(const char* whose, const parsed_schema& schema) {
  return std::string(whose) + " is malformed: " + schema.error + " at byte " + std::to_string(schema.error_at);
}

}  // namespace detail

// Whether a call whose schema here is `mine` can be made with a peer whose schema is `theirs`
// (both as call_schema<Arguments, Result>() writes them); if not, why, in one line of at most
// about 300 printable ASCII bytes: "argument 1, field value: bytes here, string on the peer".
inline schema_verdict compare_call_schemas(std::string_view mine, std::string_view theirs, schema_sides sides = {}) {
  const detail::parsed_schema here = detail::parse_call_schema(mine);
  if (here.error != nullptr) return {false, detail::malformed("the schema here", here)};
  const detail::parsed_schema peer = detail::parse_call_schema(theirs);
  if (peer.error != nullptr) return {false, detail::malformed("the peer's schema", peer)};
  return detail::schema_comparison(here, peer, sides).verdict();
}

// The fingerprint of a schema's text (fingerprint.hpp): its FNV-1a with the field names and their
// ':' left out, 0 given as 1. A pass over the bytes, no parse: what a server checks of a peer's
// schema before it parses one, so that a schema must at least be its call's.
inline std::uint32_t schema_fingerprint(std::string_view schema) noexcept {
  detail::fingerprint_hash h;
  for (std::size_t i = 0; i < schema.size();) {
    std::size_t end = i;
    while (end < schema.size() && detail::is_schema_name_char(schema[end])) ++end;
    if (end < schema.size() && schema[end] == ':' && end > i) {  // a field's name: only names precede ':'
      i = end + 1;
      continue;
    }
    for (; i < end; ++i) h.add(schema[i]);
    if (i < schema.size()) h.add(schema[i++]);
  }
  return h.value == 0 ? 1 : h.value;
}

}  // namespace codec
GEERPC_END_NAMESPACE
