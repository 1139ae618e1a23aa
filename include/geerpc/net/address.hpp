// geerpc: the text of an address, parsed without any I/O. The accepted forms:
//
//   host:port  tcp@host:port          a TCP host: an IPv4 literal or a name
//   [v6]:port  tcp@[v6]:port          an IPv6 literal, in brackets
//   http@host:port  http@[v6]:port    TCP, where a client first asks for the RPC protocol with an
//                                     HTTP CONNECT (docs/protocol.md, "HTTP on the RPC port"); a
//                                     server serves both on any port, so it listens on it as TCP
//   tls@host:port  tls@[v6]:port      TCP, where a client speaks TLS (options::session must be a
//                                     TLS client factory, <geerpc/tls.hpp>); a client's form only
//   jsonrpc@host:port                 TCP, to a Go net/rpc server served with jsonrpc.ServeConn: a
//   jsonrpc@[v6]:port                 client of the JSON codec speaks JSON-RPC 1.0 to it
//                                     (docs/protocol.md 9.6); a client's form only
//   unix@/path/to.sock  unix@x.sock   a Unix domain socket: an absolute or relative path
//   unix@@name                        a Linux abstract Unix socket: a name, no file
//
// A port is a number from 0 to 65535 (0: a free one, when listening). A malformed address gets a
// reason and the list of accepted forms, and the common mistakes (a URL such as tcp://host:port,
// the unix:/path of other libraries, a bare path, an unbracketed IPv6 literal) also get the
// accepted form they probably meant.
#pragma once

#include <sys/un.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace net {

struct address {
  enum class family : std::uint8_t {
    tcp,            // host and port
    unix_path,      // path: a socket file (never `unix`: GNU C++ predefines it as a macro)
    unix_abstract,  // path: the name in Linux's abstract namespace, without its leading '@'
  };
  family kind = family::tcp;
  std::string host;  // tcp: without brackets
  std::uint16_t port = 0;
  std::string path;
  bool http_connect = false;  // tcp: "http@", a client sends an HTTP CONNECT before the hello
  bool tls = false;           // tcp: "tls@", a client needs a TLS session (options::session)
  bool jsonrpc = false;       // tcp: "jsonrpc@", a client speaks JSON-RPC 1.0 (Go's net/rpc/jsonrpc)

  bool is_unix() const noexcept { return kind != family::tcp; }
  friend bool operator==(const address&, const address&) = default;
};

// The longest path, or abstract name, a sockaddr_un holds: a path needs room for its terminating NUL,
// an abstract name for the NUL that comes before it.
inline constexpr std::size_t max_unix_path = sizeof(sockaddr_un::sun_path) - 1;
static_assert(max_unix_path == 107, "the messages below say 107");

inline constexpr std::string_view accepted_address_forms =
    "host:port, tcp@host:port, http@host:port, tls@host:port, jsonrpc@host:port, [v6]:port or unix@/path";

// Why a text is not an address.
struct address_error {
  std::string reason;      // what is wrong; empty when `suggestion` says it all
  std::string suggestion;  // a valid address the text probably meant, or empty

  // "bad address: <reason>; use <forms> (did you mean <suggestion>?)"
  std::string message() const {
    std::string out = "bad address: ";
    if (!reason.empty()) out += reason + "; ";
    out += "use ";
    out += accepted_address_forms;
    if (!suggestion.empty()) out += " (did you mean " + suggestion + "?)";
    return out;
  }
};

struct parsed_address {
  std::optional<address> value;  // set when the text is an address
  address_error error;           // otherwise, why not

  explicit operator bool() const noexcept { return value.has_value(); }
};

// The canonical text of an address: host:port, [v6]:port, http@host:port, tls@host:port,
// jsonrpc@host:port, unix@path or unix@@name.
inline std::string to_string(const address& a) {
  switch (a.kind) {
    case address::family::unix_path:
      return "unix@" + a.path;
    case address::family::unix_abstract:
      return "unix@@" + a.path;
    case address::family::tcp:
      break;
  }
  const bool v6 = a.host.find(':') != std::string::npos;
  return (a.http_connect ? "http@"
          : a.tls        ? "tls@"
          : a.jsonrpc    ? "jsonrpc@"
                         : "") +
         (v6 ? "[" + a.host + "]" : a.host) + ":" + std::to_string(a.port);
}

namespace detail {

inline bool starts_with_nocase(std::string_view text, std::string_view prefix) noexcept {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    const char c = text[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != prefix[i]) return false;
  }
  return true;
}

// Parses "host:port" or "[v6]:port" into `out`; returns nullptr or why not, and may set `suggestion`.
inline const char* parse_host_port(std::string_view text, address& out, std::string& suggestion) {
  std::string_view host;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return "missing ']' after an IPv6 host";
    host = text.substr(1, close - 1);
    if (close + 1 == text.size()) return "missing port";
    if (text[close + 1] != ':') return "expected ':' and a port after ']'";
    port = text.substr(close + 2);
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return "missing port";
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      // An IPv6 literal has at least two colons ("::1"): guess the brackets only for such a host.
      address bracketed;
      std::string ignored;
      if (host.find(':') != host.rfind(':') &&
          parse_host_port("[" + std::string(host) + "]:" + std::string(port), bracketed, ignored) == nullptr)
        suggestion = to_string(bracketed);
      return "an IPv6 host must be in brackets";
    }
  }
  if (host.empty()) return "missing host";
  if (host.find('@') != std::string_view::npos) return "the host contains '@'";  // a transport prefix?
  for (const char c : host)
    if (static_cast<unsigned char>(c) <= ' ' || c == '\x7f') return "the host contains a space or control character";
  if (port.empty()) return "missing port";
  unsigned long number = 0;
  for (const char c : port) {
    if (c < '0' || c > '9' || number > 65535) return "the port must be a number from 0 to 65535";
    number = number * 10 + static_cast<unsigned long>(c - '0');
  }
  if (number > 65535) return "the port must be a number from 0 to 65535";
  out.kind = address::family::tcp;
  out.host = std::string(host);
  out.port = static_cast<std::uint16_t>(number);
  return nullptr;
}

// Parses what follows "unix@".
inline const char* parse_unix(std::string_view rest, address& out) {
  const bool abstract = !rest.empty() && rest.front() == '@';
  if (abstract) rest.remove_prefix(1);
  if (rest.empty()) return abstract ? "missing the socket name after unix@@" : "missing the socket path after unix@";
  if (rest.size() > max_unix_path)
    return abstract ? "the abstract socket name is too long (at most 107 bytes)"
                    : "the socket path is too long (at most 107 bytes)";
  out.kind = abstract ? address::family::unix_abstract : address::family::unix_path;
  out.path = std::string(rest);
  return nullptr;
}

// Parses the accepted forms only: no suggestion for a mistake. Returns nullptr or why not.
inline const char* parse_exact(std::string_view text, address& out, std::string& suggestion) {
  if (text.empty()) return "it is empty";
  if (text.find('\0') != std::string_view::npos) return "it contains a NUL byte";
  if (text.starts_with("unix@")) return parse_unix(text.substr(5), out);
  if (text.starts_with("tcp@")) return parse_host_port(text.substr(4), out, suggestion);
  if (text.starts_with("http@")) {
    // The CONNECT is an HTTP request, and HTTP runs over TCP.
    if (text.substr(5).starts_with("unix@")) return "http@ takes a TCP host:port (HTTP CONNECT is for TCP), not unix@";
    const char* bad = parse_host_port(text.substr(5), out, suggestion);
    if (bad == nullptr) out.http_connect = true;
    if (!suggestion.empty()) suggestion.insert(0, "http@");
    return bad;
  }
  if (text.starts_with("tls@")) {
    if (text.substr(4).starts_with("unix@"))
      return "tls@ takes a TCP host:port, not unix@ (over a Unix socket, set the TLS factory alone)";
    const char* bad = parse_host_port(text.substr(4), out, suggestion);
    if (bad == nullptr) out.tls = true;
    if (!suggestion.empty()) suggestion.insert(0, "tls@");
    return bad;
  }
  if (text.starts_with("jsonrpc@")) {
    // Go's jsonrpc.Dial is TCP here; TLS under JSON-RPC is not offered (dial refuses options::session).
    if (text.substr(8).starts_with("unix@")) return "jsonrpc@ takes a TCP host:port, not unix@";
    const char* bad = parse_host_port(text.substr(8), out, suggestion);
    if (bad == nullptr) out.jsonrpc = true;
    if (!suggestion.empty()) suggestion.insert(0, "jsonrpc@");
    return bad;
  }
  return parse_host_port(text, out, suggestion);
}

// For the text of a common mistake, the address in an accepted form that it probably meant (which
// may itself be malformed), or empty.
inline std::string likely_meant(std::string_view text) {
  std::string meant;
  if (starts_with_nocase(text, "unix:")) {
    // The unix:path and unix:///path of other libraries (gRPC, curl, Docker).
    std::string_view path = text.substr(5);
    if (path.starts_with("///")) path.remove_prefix(2);
    meant = "unix@" + std::string(path);
  } else if (starts_with_nocase(text, "unix@") || starts_with_nocase(text, "tcp@") ||
             starts_with_nocase(text, "http@") || starts_with_nocase(text, "tls@") ||
             starts_with_nocase(text, "jsonrpc@")) {
    meant = std::string(text);  // a capital letter in the transport
    for (std::size_t i = 0; meant[i] != '@'; ++i)
      if (meant[i] >= 'A' && meant[i] <= 'Z') meant[i] = static_cast<char>(meant[i] - 'A' + 'a');
  } else if (starts_with_nocase(text, "tcp:")) {
    std::string_view rest = text.substr(4);
    if (rest.starts_with("//")) rest.remove_prefix(2);
    meant = "tcp@" + std::string(rest);
  } else if (starts_with_nocase(text, "http://")) {
    // An HTTP URL: the RPC port through an HTTP CONNECT (any path is dropped: the server's is fixed).
    std::string_view rest = text.substr(7);
    rest = rest.substr(0, rest.find('/'));
    meant = "http@" + std::string(rest);
  } else if (const std::size_t scheme = text.find("://"); scheme != std::string_view::npos && scheme > 0) {
    // Another URL (http://host:port/): the host and port it names.
    std::string_view rest = text.substr(scheme + 3);
    if (rest.ends_with('/')) rest.remove_suffix(1);
    meant = std::string(rest);
  } else if (text.starts_with('/') || text.starts_with("./") || text.starts_with("../")) {
    meant = "unix@" + std::string(text);  // a bare path
  } else {
    return {};
  }
  return meant != text ? meant : std::string();
}

}  // namespace detail

// Parses an address in one of the accepted forms (see the top of this file).
inline parsed_address parse_address(std::string_view text) {
  parsed_address result;
  address a;
  std::string suggestion;
  const char* bad = detail::parse_exact(text, a, suggestion);
  if (bad == nullptr) {
    result.value = std::move(a);
    return result;
  }
  const bool accepted_prefix = text.starts_with("unix@") || text.starts_with("tcp@") || text.starts_with("http@") ||
                               text.starts_with("tls@") || text.starts_with("jsonrpc@");
  if (std::string meant = accepted_prefix ? std::string() : detail::likely_meant(text); !meant.empty()) {
    // The reason found in the text itself would mislead ("unix:/x.sock": a host "unix", a port
    // "/x.sock"): suggest what it meant, or say what is wrong with that.
    address checked;
    suggestion.clear();
    if (const char* also_bad = detail::parse_exact(meant, checked, suggestion))
      result.error.reason = also_bad;
    else
      suggestion = std::move(meant);
    result.error.suggestion = std::move(suggestion);
    return result;
  }
  const std::size_t at = text.find('@');
  if (!accepted_prefix && at != std::string_view::npos &&
      text.substr(0, at).find_first_of(":[") == std::string_view::npos)
    result.error.reason = "unknown transport \"" + std::string(text.substr(0, at)) + "@\"";
  else
    result.error.reason = bad;
  result.error.suggestion = std::move(suggestion);
  return result;
}

}  // namespace net
GEERPC_END_NAMESPACE
