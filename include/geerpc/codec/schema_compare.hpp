// geerpc: whether two peers' call schemas (schema.hpp, docs/protocol.md 4.1) agree, and where they
// differ, in words; the schema's fingerprint computed from its text.
//
// A struct travels behind its length, so a reader skips the trailing fields it does not know and
// defaults the ones missing: structs agree when their common leading fields agree, matched by
// position (a renamed field agrees). Everything else agrees only when it is the same type with the
// same sizes and counts, and its parts agree. A peer's text is parsed by schema_parse.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "../config.hpp"
#include "fingerprint.hpp"
#include "schema_parse.hpp"

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
