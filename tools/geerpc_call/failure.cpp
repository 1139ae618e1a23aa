// geerpc-call's failures: every geerpc::errc named as error.hpp spells it. The switch has no default,
// so that -Wswitch points at a new errc; the test over every errc (tests/cli) fails on one left out.
#include "failure.hpp"

namespace geerpc_call {

const char* errc_name(geerpc::errc code) {
  using geerpc::errc;
  switch (code) {
    case errc::connect_timeout:
      return "connect_timeout";
    case errc::deadline_exceeded:
      return "deadline_exceeded";
    case errc::canceled:
      return "canceled";
    case errc::handle_timeout:
      return "handle_timeout";
    case errc::unknown_service:
      return "unknown_service";
    case errc::unknown_method:
      return "unknown_method";
    case errc::bad_request:
      return "bad_request";
    case errc::remote_error:
      return "remote_error";
    case errc::connection_closed:
      return "connection_closed";
    case errc::busy:
      return "busy";
    case errc::protocol_error:
      return "protocol_error";
    case errc::connect_failed:
      return "connect_failed";
    case errc::handshake_rejected:
      return "handshake_rejected";
    case errc::bad_response:
      return "bad_response";
    case errc::invalid_argument:
      return "invalid_argument";
    case errc::type_mismatch:
      return "type_mismatch";
    case errc::unauthenticated:
      return "unauthenticated";
    case errc::permission_denied:
      return "permission_denied";
    case errc::going_away:
      return "going_away";
    case errc::aborted:
      return "aborted";
    case errc::no_servers:
      return "no_servers";
  }
  return nullptr;
}

std::string code_name(std::error_code code) {
  if (code.category() == geerpc::category() && code.value() > 0 && code.value() <= 255)
    if (const char* name = errc_name(static_cast<geerpc::errc>(code.value()))) return name;
  return std::string(code.category().name()) + ":" + std::to_string(code.value());
}

failure failure_of(const geerpc::error& e) { return {code_name(e.code), e.message}; }

failure failure_of(geerpc::errc code, std::string message) {
  return {code_name(geerpc::make_error_code(code)), std::move(message)};
}

std::string failure_line(const failure& f) { return "geerpc-call: " + f.code_name + ": " + f.message + "\n"; }

}  // namespace geerpc_call
