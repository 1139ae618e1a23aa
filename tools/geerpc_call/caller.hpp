// geerpc-call: the connection to the server and the two calls it makes, through the library's own
// JSON client (json::raw_value: no C++ types), so that deadlines, metadata, TLS and every address
// form work as they do for any geerpc caller.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include <geerpc/json.hpp>

#include "command_line.hpp"
#include "failure.hpp"

namespace geerpc_call {

class caller {
 public:
  // Connects as the invocation says (its address, connect timeout and TLS options).
  static std::variant<caller, failure> connect(const invocation& how);

  // A call of `method` with the arguments array `arguments_json`, under the invocation's deadline
  // and metadata: the result's JSON text (empty for a void method).
  std::variant<std::string, failure> call(const std::string& method, const std::string& arguments_json);

  // geerpc.Describe's document (docs/protocol.md 10).
  std::variant<std::string, failure> describe();

 private:
  using json_client = geerpc::basic_client<geerpc::threaded, geerpc::json_codec>;
  caller(json_client client, const invocation& how);

  geerpc::context call_context() const;

  json_client client_;
  std::chrono::nanoseconds timeout_;
  std::vector<std::pair<std::string, std::string>> metadata_;
};

}  // namespace geerpc_call
