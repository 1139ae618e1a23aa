// geerpc-call's `list` and `describe`: what geerpc.Describe returns, read with Boost.JSON and
// written for a reader; nothing here parses JSON by hand.
#include "describe_format.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <utility>

#include <boost/json.hpp>

namespace geerpc_call {
namespace {

namespace bj = boost::json;

const bj::array* methods_of(const bj::value& document) {
  const bj::object* top = document.if_object();
  const bj::value* methods = top != nullptr ? top->if_contains("methods") : nullptr;
  return methods != nullptr ? methods->if_array() : nullptr;
}

std::string_view string_or(const bj::object& object, std::string_view key, std::string_view otherwise) {
  const bj::value* found = object.if_contains(key);
  return found != nullptr && found->is_string() ? std::string_view(found->get_string()) : otherwise;
}

// An integer's C++ name from the range its schema gives, "integer" when it is none of them.
std::string integer_name(const bj::object& schema) {
  const bj::value* low = schema.if_contains("minimum");
  const bj::value* high = schema.if_contains("maximum");
  if (low == nullptr || high == nullptr) return "integer";
  struct range {
    const char* name;
    std::int64_t low;
    std::uint64_t high;
  };
  constexpr std::array<range, 8> ranges{{{"int8", -128, 127},
                                         {"uint8", 0, 255},
                                         {"int16", -32768, 32767},
                                         {"uint16", 0, 65535},
                                         {"int32", -2147483648LL, 2147483647},
                                         {"uint32", 0, 4294967295ULL},
                                         {"int64", std::numeric_limits<std::int64_t>::min(),
                                          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())},
                                         {"uint64", 0, std::numeric_limits<std::uint64_t>::max()}}};
  bj::error_code low_error, high_error;
  const auto low_value = low->to_number<std::int64_t>(low_error);
  const auto high_value = high->to_number<std::uint64_t>(high_error);
  if (low_error || high_error) return "integer";
  for (const range& r : ranges)
    if (r.low == low_value && r.high == high_value) return r.name;
  return "integer";
}

std::string joined(const bj::array& schemas, std::string_view separator) {
  std::string out;
  for (const bj::value& schema : schemas) {
    if (!out.empty()) out += separator;
    out += type_summary(schema);
  }
  return out;
}

// `inner` between `open` and `close`. (Appended, not `"(" + inner + ")"`: GCC 12 at -O2 warns
// -Wrestrict, wrongly, at that operator+ once inlined here.)
std::string enclosed(char open, const std::string& inner, char close) {
  std::string out(1, open);
  out.append(inner);
  out.push_back(close);
  return out;
}

std::string array_summary(const bj::object& schema) {
  if (const bj::value* items = schema.if_contains("prefixItems"); items != nullptr && items->is_array())
    return enclosed('(', joined(items->get_array(), ", "), ')');
  if (const bj::value* items = schema.if_contains("items"); items != nullptr && items->is_object())
    return enclosed('[', type_summary(*items), ']');
  if (string_or(schema, "pattern", "") == "^[01]*$" || schema.contains("minLength")) return "bitset";
  return "()";  // "items": false and no prefixItems: no elements (a method of no arguments)
}

std::string object_summary(const bj::object& schema) {
  if (const bj::value* properties = schema.if_contains("properties");
      properties != nullptr && properties->is_object()) {
    std::string out = "{";
    for (const auto& [name, member] : properties->get_object()) {
      if (out.size() > 1) out += ", ";
      out += std::string_view(name);
      out += ": ";
      out += type_summary(member);
    }
    return out + "}";
  }
  if (const bj::value* values = schema.if_contains("additionalProperties"); values != nullptr && values->is_object())
    return std::string(schema.contains("propertyNames") ? "map<integer, " : "map<string, ") + type_summary(*values) +
           ">";
  return "{}";
}

// anyOf [null, X] is an optional X; oneOf, a variant of [index, value] forms: their values.
std::string alternatives_summary(const bj::object& schema) {
  if (const bj::value* any_of = schema.if_contains("anyOf"); any_of != nullptr && any_of->is_array()) {
    const bj::array& choices = any_of->get_array();
    if (choices.size() == 2 && type_summary(choices[0]) == "null") return type_summary(choices[1]) + "?";
    return joined(choices, " | ");
  }
  const bj::array& choices = schema.at("oneOf").as_array();
  std::string out;
  for (const bj::value& choice : choices) {
    if (!out.empty()) out += " | ";
    const bj::object* form = choice.if_object();
    const bj::value* pair = form != nullptr ? form->if_contains("prefixItems") : nullptr;
    out += pair != nullptr && pair->is_array() && pair->get_array().size() == 2 ? type_summary(pair->get_array()[1])
                                                                                : type_summary(choice);
  }
  return out;
}

}  // namespace

std::string type_summary(const bj::value& schema) {
  if (schema.is_null()) return "void";
  const bj::object* object = schema.if_object();
  if (object == nullptr) return "any";
  if (object->contains("anyOf") || (object->contains("oneOf") && object->at("oneOf").is_array()))
    return alternatives_summary(*object);
  if (const bj::value* constant = object->if_contains("const")) return bj::serialize(*constant);
  const std::string_view type = string_or(*object, "type", "");
  if (type == "integer") return integer_name(*object);
  if (type == "number") return "double";
  if (type == "boolean") return "bool";
  if (type == "null") return "null";
  if (type == "string") {
    if (string_or(*object, "contentEncoding", "") == "base64") return "bytes";
    if (string_or(*object, "format", "") == "date-time") return "time";
    if (object->contains("pattern")) return "bitset";
    return "string";
  }
  if (type == "array") return array_summary(*object);
  if (type == "object") return object_summary(*object);
  return "any";
}

std::string list_text(const bj::value& document) {
  std::string out;
  const bj::array* methods = methods_of(document);
  if (methods == nullptr) return out;
  for (const bj::value& entry : *methods) {
    const bj::object* method = entry.if_object();
    if (method == nullptr) continue;
    out += string_or(*method, "name", "?");
    const bj::value* params = method->if_contains("params");
    const bj::value* result = method->if_contains("result");
    out += params != nullptr ? type_summary(*params) : std::string("(?)");
    out += " -> ";
    out += result != nullptr ? type_summary(*result) : std::string("?");
    out += '\n';
  }
  return out;
}

std::optional<std::string> describe_text(const bj::value& document, std::string_view name) {
  const bj::array* methods = methods_of(document);
  if (methods == nullptr) return std::nullopt;
  for (const bj::value& entry : *methods) {
    const bj::object* method = entry.if_object();
    if (method != nullptr && string_or(*method, "name", "") == name) return indented(entry) + "\n";
  }
  return std::nullopt;
}

namespace {
void write_indented(std::string& out, const bj::value& value, std::size_t depth) {
  const std::string inner((depth + 1) * 2, ' '), outer(depth * 2, ' ');
  if (const bj::object* object = value.if_object(); object != nullptr && !object->empty()) {
    out += "{\n";
    std::size_t i = 0;
    for (const auto& [key, member] : *object) {
      out += inner + bj::serialize(bj::string_view(key)) + ": ";
      write_indented(out, member, depth + 1);
      out += ++i < object->size() ? ",\n" : "\n";
    }
    out += outer + "}";
  } else if (const bj::array* array = value.if_array(); array != nullptr && !array->empty()) {
    out += "[\n";
    for (std::size_t i = 0; i < array->size(); ++i) {
      out += inner;
      write_indented(out, (*array)[i], depth + 1);
      out += i + 1 < array->size() ? ",\n" : "\n";
    }
    out += outer + "]";
  } else {
    out += bj::serialize(value);
  }
}
}  // namespace

std::string indented(const bj::value& value) {
  std::string out;
  write_indented(out, value, 0);
  return out;
}

}  // namespace geerpc_call
