// geerpc-call's command line: options anywhere (a JSON ARG never begins with "--"; after "--",
// everything is positional), each value of an option in the next argument or after '='.
#include "command_line.hpp"

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>

namespace geerpc_call {
namespace {

constexpr std::string_view usage_lines =
    "usage: geerpc-call [options] ADDRESS [list]\n"
    "       geerpc-call [options] ADDRESS describe Service.Method\n"
    "       geerpc-call [options] ADDRESS Service.Method [ARG...]\n"
    "       (--unix PATH in place of ADDRESS: a Unix socket)\n";

// Where to connect, as the options said: --unix PATH replaces ADDRESS, --http prefixes it.
struct address_choice {
  std::string unix_path;
  bool http = false;
};

// The options that take a value.
bool takes_value(std::string_view name) {
  return name == "--timeout" || name == "--connect-timeout" || name == "--metadata" || name == "--ca" ||
         name == "--cert" || name == "--key" || name == "--unix";
}

// The options that take none; false when `name` is none of them.
bool apply_flag(invocation& out, address_choice& where, std::string_view name) {
  if (name == "--insecure-skip-verify")
    out.tls.insecure_skip_verify = true;
  else if (name == "--http")
    where.http = true;
  else if (name == "--pretty")
    out.layout = reply_layout::pretty;
  else if (name == "--compact")
    out.layout = reply_layout::compact;
  else
    return false;
  return true;
}

std::optional<usage_error> apply_option(invocation& out, address_choice& where, std::string_view name,
                                        const std::string& value) {
  if (name == "--unix") {
    if (value.empty()) return usage_error{"--unix wants the socket's path"};
    where.unix_path = value;
  } else if (name == "--timeout" || name == "--connect-timeout") {
    std::chrono::nanoseconds d{};
    if (!parse_duration(value, d))
      return usage_error{std::string(name) + " wants a positive duration such as 200ms, 10s or 1.5s, not \"" + value +
                         "\""};
    (name == "--timeout" ? out.timeout : out.connect_timeout) = d;
  } else if (name == "--metadata") {
    const std::size_t equals = value.find('=');
    if (equals == std::string::npos || equals == 0)
      return usage_error{"--metadata wants key=value, not \"" + value + "\""};
    out.metadata.emplace_back(value.substr(0, equals), value.substr(equals + 1));
  } else if (name == "--ca") {
    out.tls.ca_file = value;
  } else if (name == "--cert") {
    out.tls.certificate_file = value;
  } else if (name == "--key") {
    out.tls.key_file = value;
  }
  return std::nullopt;
}

// The address geerpc dials: ADDRESS, unix@PATH for --unix, http@ADDRESS for --http; or the usage
// error of a contradiction.
std::optional<usage_error> choose_address(invocation& out, const address_choice& where,
                                          std::vector<std::string>& positional) {
  if (!where.unix_path.empty()) {
    if (where.http) return usage_error{"--http is for TCP (HTTP CONNECT), not --unix"};
    out.address = "unix@" + where.unix_path;
    return std::nullopt;
  }
  if (positional.empty()) return usage_error{"an ADDRESS (or --unix PATH) is needed"};
  out.address = positional.front();
  positional.erase(positional.begin());
  if (where.http) {
    if (out.address.find('@') != std::string::npos)
      return usage_error{"--http takes a TCP host:port, not \"" + out.address + "\""};
    out.address.insert(0, "http@");
  }
  return std::nullopt;
}

// The positional arguments after the address: nothing or list, describe and its method, or the
// method and its values.
parsed read_positionals(invocation out, const std::vector<std::string>& positional) {
  const std::string verb_or_method = positional.empty() ? "list" : positional[0];
  if (verb_or_method == "list") {
    if (positional.size() > 1) return usage_error{"list takes nothing after it"};
    out.what = verb::list;
  } else if (verb_or_method == "describe") {
    if (positional.size() != 2) return usage_error{"describe takes one Service.Method"};
    out.what = verb::describe;
    out.method = positional[1];
  } else {
    if (verb_or_method.find('.') == std::string::npos)
      return usage_error{"\"" + verb_or_method + "\" is neither list, describe nor a Service.Method"};
    out.what = verb::call;
    out.method = verb_or_method;
    out.values.assign(positional.begin() + 1, positional.end());
    for (const std::string& value : out.values)
      if (value == "-" && out.values.size() != 1) return usage_error{"\"-\" (the ARGs from stdin) must be alone"};
  }
  if (!out.tls.certificate_file.empty() != !out.tls.key_file.empty())
    return usage_error{"--cert and --key go together"};
  return out;
}

}  // namespace

bool parse_duration(const std::string& text, std::chrono::nanoseconds& out) {
  double count = 0;
  const char* end = text.data() + text.size();
  const auto [unit, ec] = std::from_chars(text.data(), end, count);
  if (ec != std::errc{} || unit == text.data() || !std::isfinite(count) || count <= 0) return false;
  const std::string_view suffix(unit, static_cast<std::size_t>(end - unit));
  double nanoseconds_each = 0;
  if (suffix == "ns")
    nanoseconds_each = 1;
  else if (suffix == "us")
    nanoseconds_each = 1e3;
  else if (suffix == "ms")
    nanoseconds_each = 1e6;
  else if (suffix == "s")
    nanoseconds_each = 1e9;
  else if (suffix == "m")
    nanoseconds_each = 60e9;
  else if (suffix == "h")
    nanoseconds_each = 3600e9;
  else
    return false;
  const double total = count * nanoseconds_each;
  if (total < 1 || total > 1e18) return false;
  out = std::chrono::nanoseconds(static_cast<std::int64_t>(total));
  return true;
}

parsed parse_command_line(const std::vector<std::string>& arguments) {
  invocation out;
  address_choice where;
  std::vector<std::string> positional;
  bool options_done = false;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string& argument = arguments[i];
    if (options_done || !argument.starts_with("--")) {  // "-" alone (stdin) and -1 are ARGs
      positional.push_back(argument);
      continue;
    }
    if (argument == "--") {
      options_done = true;
      continue;
    }
    if (argument == "--help") return help_asked{};
    if (apply_flag(out, where, argument)) continue;
    const std::size_t equals = argument.find('=');
    const std::string name = argument.substr(0, equals);
    if (!takes_value(name)) return usage_error{"unknown option " + name};
    std::string value;
    if (equals != std::string::npos) {
      value = argument.substr(equals + 1);
    } else {
      if (i + 1 == arguments.size()) return usage_error{name + " wants a value"};
      value = arguments[++i];
    }
    if (auto bad = apply_option(out, where, name, value)) return *bad;
  }
  if (auto bad = choose_address(out, where, positional)) return *bad;
  return read_positionals(std::move(out), positional);
}

std::string help_text() {
  std::string text(usage_lines);
  text +=
      "\n"
      "Calls a geerpc server's method from the shell, through the JSON codec: no C++ types needed.\n"
      "\n"
      "  list (or nothing)       every method the server serves, with its argument and result types\n"
      "  describe Svc.Method     the JSON Schemas of the method's arguments and result\n"
      "  Svc.Method [ARG...]     a call: each ARG one JSON value, one per argument (a string is\n"
      "                          quoted: '\"text\"'); '-' alone reads them from stdin as one JSON array.\n"
      "                          The result is printed as JSON on stdout (nothing for a void method):\n"
      "                          indented on a terminal, the server's one line when piped.\n"
      "\n"
      "ADDRESS: host:port, [v6]:port, unix@/path, unix@@name, http@host:port or tls@host:port.\n"
      "\n"
      "options (anywhere; after --, everything is an ARG):\n"
      "  --unix PATH             call over the Unix socket PATH (unix@PATH), in place of ADDRESS\n"
      "  --http                  connect to ADDRESS's RPC port through HTTP CONNECT (http@ADDRESS)\n"
      "  --pretty, --compact     print the result indented, or as one line, wherever stdout goes\n"
      "  --timeout D             the call's deadline, sent with it (default 10s); D: 200ms, 1.5s, 2m...\n"
      "  --connect-timeout D     connecting and the handshake (default 5s)\n"
      "  --metadata k=v          metadata sent with the call (repeatable)\n"
      "  --ca FILE               tls@: the CA certificates to trust (default: the system's)\n"
      "  --cert FILE --key FILE  tls@: this client's certificate and key (mutual TLS)\n"
      "  --insecure-skip-verify  tls@: trust any server certificate (insecure: testing only)\n"
      "  --help                  this text\n"
      "\n"
      "exit status: 0 done; 1 the call failed, whatever the errc (stderr, one line:\n"
      "'geerpc-call: errc: message', errc as geerpc::errc spells it, e.g. deadline_exceeded); 2 usage error.\n";
  return text;
}

}  // namespace geerpc_call
