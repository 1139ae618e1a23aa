// geerpc-call's ARGs, checked here with the JSON codec's own reader (json::check_value_text), so that
// a value the server would refuse as malformed JSON is refused before anything is sent.
#include "call_arguments.hpp"

#include <iterator>
#include <string_view>

#include <geerpc/json.hpp>

namespace geerpc_call {
namespace {

bool opens_array(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '[';
}

}  // namespace

std::variant<std::string, usage_error> arguments_text(const std::vector<std::string>& values,
                                                      std::istream& stdin_stream) {
  if (values.size() == 1 && values[0] == "-") {
    std::string text((std::istreambuf_iterator<char>(stdin_stream)), std::istreambuf_iterator<char>());
    if (auto status = geerpc::json::check_value_text(text); !status)
      return usage_error{"stdin is not one JSON value: " + status.message()};
    if (!opens_array(text)) return usage_error{"stdin must hold one JSON array of the arguments, [a, b]"};
    return text;
  }
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (auto status = geerpc::json::check_value_text(values[i]); !status)
      return usage_error{"ARG " + std::to_string(i + 1) + " is not one JSON value (" + status.message() +
                         "): a string is quoted, '\"text\"'"};
    if (i != 0) text += ',';
    text += values[i];
  }
  text += ']';
  return text;
}

}  // namespace geerpc_call
