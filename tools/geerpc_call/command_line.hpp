// geerpc-call: its command line read into an invocation, or the usage error that stops it (exit 2).
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace geerpc_call {

enum class verb { list, describe, call };

// How a call's reply is printed: pretty JSON when stdout is a terminal and the server's one line
// when it is not (automatic), or either, forced (--pretty, --compact).
enum class reply_layout { automatic, pretty, compact };

// What the TLS options asked for (used only with a tls@ address).
struct tls_choice {
  std::string ca_file;           // --ca: the CAs to trust; empty: the system's
  std::string certificate_file;  // --cert: this client's certificate (with --key)
  std::string key_file;          // --key
  bool insecure_skip_verify = false;
};

struct invocation {
  std::string address;  // as geerpc spells it: --unix PATH is unix@PATH, --http ADDRESS http@ADDRESS
  verb what = verb::call;
  std::string method;               // describe's and a call's
  std::vector<std::string> values;  // a call's ARGs as given ("-": read them from stdin)
  std::chrono::nanoseconds timeout = std::chrono::seconds(10);
  std::chrono::nanoseconds connect_timeout = std::chrono::seconds(5);
  std::vector<std::pair<std::string, std::string>> metadata;
  reply_layout layout = reply_layout::automatic;
  tls_choice tls;
};

struct usage_error {
  std::string message;
};
struct help_asked {};

using parsed = std::variant<invocation, usage_error, help_asked>;

// Reads argv (without the program's name).
parsed parse_command_line(const std::vector<std::string>& arguments);

// "200ms", "10s", "1.5s", "2m", "250us": a positive duration; false when the text is none.
bool parse_duration(const std::string& text, std::chrono::nanoseconds& out);

// The text --help prints.
std::string help_text();

}  // namespace geerpc_call
