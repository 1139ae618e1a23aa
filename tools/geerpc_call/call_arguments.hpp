// geerpc-call: a call's ARGs (each one JSON value, or "-": one JSON array of them read from a
// stream) as the text of the arguments array the JSON codec sends, or why they are not.
#pragma once

#include <istream>
#include <string>
#include <variant>
#include <vector>

#include "command_line.hpp"

namespace geerpc_call {

// `[a,b,...]`, each value checked to be one JSON value; a usage_error naming the ARG that is not.
std::variant<std::string, usage_error> arguments_text(const std::vector<std::string>& values,
                                                      std::istream& stdin_stream);

}  // namespace geerpc_call
