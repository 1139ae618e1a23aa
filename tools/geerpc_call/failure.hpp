// geerpc-call: how a call failed, and the one line on stderr that says so,
// `geerpc-call: <errc name>: <message>` (exit status 1, whatever the errc).
#pragma once

#include <string>
#include <system_error>

#include <geerpc/error.hpp>

namespace geerpc_call {

// How a connect or a call failed: the errc's name (`deadline_exceeded`) and the library's message.
struct failure {
  std::string code_name;
  std::string message;
};

// The name of a geerpc::errc as the source spells it; nullptr for a value that is no errc.
const char* errc_name(geerpc::errc code);

// The name of a geerpc code (errc_name); other categories' codes, and values that are no errc, as
// "category:value".
std::string code_name(std::error_code code);

failure failure_of(const geerpc::error& e);
failure failure_of(geerpc::errc code, std::string message);

// `geerpc-call: <code name>: <message>` and a newline: what stderr gets for a failure.
std::string failure_line(const failure& f);

}  // namespace geerpc_call
