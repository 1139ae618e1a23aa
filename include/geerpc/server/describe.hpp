// geerpc: a server described to other programs (docs/protocol.md 10): every method with the JSON
// Schemas of its arguments and result (codec/json_schema.hpp), as one JSON document,
//
//   {"schema_dialect":"https://json-schema.org/draft/2020-12/schema",
//    "methods":[{"name":"Arith.Sum","params":{...},"result":{...}},...]}
//
// served at GET /debug/geerpc/services.json (server/http_door.hpp) and by the built-in method
// geerpc.Describe, to the peers the debug page's policy admits, and to no other.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../service.hpp"
#include "dispatcher.hpp"
#include "page_text.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

inline constexpr std::string_view json_schema_dialect = "https://json-schema.org/draft/2020-12/schema";

// The document, its methods sorted by name (byte order). A method that returns nothing has
// "result": null: no value travels, so no schema describes one. No dispatcher: no methods.
inline std::string services_json(const dispatcher* handlers) {
  std::vector<const handler_entry*> sorted;
  if (handlers != nullptr)
    for (const handler_entry& entry : handlers->methods()) sorted.push_back(&entry);
  std::sort(sorted.begin(), sorted.end(),
            [](const handler_entry* a, const handler_entry* b) { return a->name < b->name; });
  std::string out = "{\"schema_dialect\":\"";
  out += json_schema_dialect;
  out += "\",\"methods\":[";
  for (const handler_entry* entry : sorted) {
    if (entry != sorted.front()) out += ',';
    out += "{\"name\":";
    append_json_string(out, entry->name);
    out += ",\"params\":";
    out += entry->json_schema->params;
    out += ",\"result\":";
    out += entry->json_schema->result.empty() ? std::string_view("null") : std::string_view(entry->json_schema->result);
    out += '}';
  }
  out += "]}\n";
  return out;
}

// geerpc.Describe's handler: the document of the server whose methods it is given.
class describer {
 public:
  explicit describer(const dispatcher& handlers) noexcept : handlers_(&handlers) {}
  std::string describe() const { return services_json(handlers_); }

 private:
  const dispatcher* handlers_;
};

// The server's own methods, which dispatcher::add_builtin registers.
using builtin_service = service<"geerpc", method<"Describe", &describer::describe>>;

}  // namespace detail
GEERPC_END_NAMESPACE
