// geerpc-call: calls a geerpc server's methods from the shell (README, "Trying a method from the
// shell"). Reads the command line (command_line.cpp), connects and calls (caller.cpp), prints what
// came back (describe_format.cpp, reply_format.cpp). Exit status: 0 done, 1 the call failed
// (failure.hpp's line on stderr), 2 a usage error.
#include <unistd.h>

#include <exception>
#include <iostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <boost/json/parse.hpp>

#include "call_arguments.hpp"
#include "caller.hpp"
#include "command_line.hpp"
#include "describe_format.hpp"
#include "failure.hpp"
#include "reply_format.hpp"

namespace {

using namespace geerpc_call;

constexpr int exit_ok = 0, exit_failed = 1, exit_usage = 2;

int report(const failure& f) {
  std::cerr << failure_line(f);
  return exit_failed;
}

bool pretty(reply_layout layout) {
  return layout == reply_layout::pretty || (layout == reply_layout::automatic && ::isatty(STDOUT_FILENO) == 1);
}

int usage(const usage_error& e) {
  std::cerr << "geerpc-call: " << e.message << "\n(geerpc-call --help for the usage)\n";
  return exit_usage;
}

// geerpc.Describe's document, parsed; or the failure that stopped it.
std::variant<boost::json::value, failure> described(caller& server) {
  auto document = server.describe();
  if (auto* failed = std::get_if<failure>(&document)) {
    if (failed->code_name ==
        errc_name(geerpc::errc::unknown_service))  // what a peer the server does not describe itself to is told
      failed->message += " (geerpc.Describe answers only the peers the server's debug page policy admits)";
    return *failed;
  }
  boost::json::error_code ec;
  boost::json::value parsed = boost::json::parse(std::get<std::string>(document), ec);
  if (ec) return failure_of(geerpc::errc::bad_response, "geerpc.Describe returned no JSON document: " + ec.message());
  return parsed;
}

// `arguments`: a call's arguments array, checked.
int run(const invocation& how, const std::string& arguments, caller& server) {
  if (how.what == verb::call) {
    auto reply = server.call(how.method, arguments);
    if (auto* failed = std::get_if<failure>(&reply)) return report(*failed);
    const std::string& text = std::get<std::string>(reply);
    if (!text.empty()) std::cout << (pretty(how.layout) ? reindented(text) : text) << '\n';
    return exit_ok;
  }
  auto document = described(server);
  if (auto* failed = std::get_if<failure>(&document)) return report(*failed);
  const boost::json::value& services = std::get<boost::json::value>(document);
  if (how.what == verb::list) {
    std::cout << list_text(services);
    return exit_ok;
  }
  auto text = describe_text(services, how.method);
  if (!text)
    return report(failure_of(geerpc::errc::unknown_method, "the server describes no method \"" + how.method + "\""));
  std::cout << *text;
  return exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> arguments(argv + (argc > 0 ? 1 : 0), argv + argc);
  parsed command = parse_command_line(arguments);
  if (std::holds_alternative<help_asked>(command)) {
    std::cout << help_text();
    return exit_ok;
  }
  if (auto* bad = std::get_if<usage_error>(&command)) return usage(*bad);
  const invocation& how = std::get<invocation>(command);
  // The ARGs are checked before connecting: a bad one sends nothing, and needs no server.
  std::string arguments_json;
  if (how.what == verb::call) {
    auto checked = arguments_text(how.values, std::cin);
    if (auto* bad = std::get_if<usage_error>(&checked)) return usage(*bad);
    arguments_json = std::move(std::get<std::string>(checked));
  }
  try {
    auto connected = caller::connect(how);
    if (auto* failed = std::get_if<failure>(&connected)) return report(*failed);
    return run(how, arguments_json, std::get<caller>(connected));
  } catch (const std::exception& e) {  // bad_alloc and the like, no errc: still exit 1, one line
    return report({"error", e.what()});
  }
}
