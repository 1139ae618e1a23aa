// geerpc: what a server does with a connection whose first byte begins an HTTP request instead of
// the geerpc hello (docs/protocol.md, "HTTP on the RPC port"):
//
//   CONNECT /_geerpc_ HTTP/1.x     "HTTP/1.0 200 Connected to Gee RPC", then the geerpc protocol,
//                                  hello first, as GeeRPC's DialHTTP expects (its /_geeprc_ too)
//   GET /debug/geerpc              the debug page (server/debug_page.hpp); HEAD too
//   GET /debug/geerpc/stats.json   the same as JSON
//   GET /debug/geerpc/services.json  every method with its types' JSON Schemas (server/describe.hpp)
//   GET /metrics                   the counters in Prometheus's text format (server/metrics_text.hpp)
//   POST /rpc                      JSON-RPC 2.0 (docs/protocol.md section 11), on a server whose
//                                  codecs bring its translator (json_codec): the head is checked
//                                  (wire/http_rpc.hpp: 405, 411, 413, 415, 400), the body goes to
//                                  the translator, whose one answer ends the connection
//   another path                   404; another method on one of these paths: 405
//   anything, in plaintext on a    400, "geerpc: this port requires TLS: use https://host:port/"
//   port that requires TLS
//
// The debug paths (/metrics among them) answer only the peers server_options.observability.debug_page admits
// (debug_page_policy.hpp, asked here and only here); to any other they are 404, whatever the
// method, as a path that does not exist: nothing says the page is there. /rpc likewise answers
// only the peers observability.http_rpc admits (the same policy type, local by default).
//
// Every answer but CONNECT's is a whole HTTP/1.0 response after which the server closes the
// connection. The head (at most 8 KiB) must arrive within server_options.timeouts.handshake,
// which, after a CONNECT, also covers the hello that follows; a POST /rpc's body, once begun
// awaited, is bounded by timeouts.frame as a frame is.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "../config.hpp"
#include "../debug_page_policy.hpp"
#include "../net/peer_identity.hpp"
#include "../wire/http.hpp"
#include "../wire/http_rpc.hpp"
#include "context.hpp"
#include "debug_page.hpp"
#include "describe.hpp"
#include "metrics_text.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class http_door {
 public:
  enum class verdict {
    pending,    // the head has not ended: more bytes, please
    connected,  // a CONNECT: send `reply`, then the hello follows
    answered,   // send `reply`, then close
    rpc,        // a POST /rpc whose head is good: its body follows, for the translator rpc_terms() is for
  };

  inline static constexpr std::string_view connected_reply = "HTTP/1.0 200 Connected to Gee RPC\n\n";

  http_door() = default;
  // The door of a plaintext peer on a port that requires TLS (tls::server_settings::required):
  // every request, once its head is in, is answered 400 with a text that says to use
  // `https_address` ("https://127.0.0.1:7000"; empty for a Unix socket).
  explicit http_door(std::string https_address) : https_address_(std::move(https_address)), refuse_(true) {}

  // Feeds bytes received; `used` says how many of them were the head's (the rest, after a CONNECT,
  // are the hello's). `peer` is the connection's address text (net::endpoint_text) and `proven`
  // what its stream layer proved (TLS), for the debug page's policy. Once it has returned anything
  // but pending, it is not fed again.
  verdict feed(std::span<const std::byte> data, std::size_t& used, std::string& reply, const server_context& context,
               std::string_view peer, const net::peer_identity& proven = net::no_peer_identity()) {
    const std::size_t before = head_.size();
    const std::size_t take = std::min(data.size(), wire::http::max_head - before);
    head_.append(reinterpret_cast<const char*>(data.data()), take);
    used = take;
    wire::http::request_head head;
    const char* why = nullptr;
    switch (parser_.feed(head_, head, why)) {
      case wire::http::head_status::incomplete:
        return verdict::pending;
      case wire::http::head_status::bad:
        reply = plain(400, "Bad Request", "geerpc: bad request: " + std::string(why) + "\n");
        return verdict::answered;
      case wire::http::head_status::too_large:
        reply = plain(431, "Request Header Fields Too Large", "geerpc: " + std::string(why) + "\n");
        return verdict::answered;
      case wire::http::head_status::complete:
        break;
    }
    used = head.size - before;
    if (refuse_) {
      reply = plain(400, "Bad Request",
                    "geerpc: this port requires TLS" +
                        (https_address_.empty() ? std::string() : ": use " + https_address_ + "/") + "\n");
      return verdict::answered;
    }
    const verdict answer = route(head, reply, context, debug_peer_of(peer, &proven));
    std::string().swap(head_);  // the head is done with: its memory goes
    return answer;
  }

  // What the head of a POST /rpc said of its body (after verdict::rpc).
  const wire::http::rpc_terms& rpc_terms() const noexcept { return rpc_terms_; }

 private:
  static std::string plain(int status, std::string_view reason, const std::string& body,
                           std::string_view extra_headers = {}, bool head_only = false) {
    return wire::http::response(status, reason, "text/plain; charset=utf-8", body, extra_headers, head_only);
  }

  verdict route(const wire::http::request_head& head, std::string& reply, const server_context& context,
                const debug_peer& peer) {
    const std::string_view path = wire::http::target_path(head.target);
    if (path == wire::http::rpc_path && context.config.translation().make_http != nullptr &&
        context.config.options().observability.http_rpc.allows(peer)) {
      wire::http::rpc_refusal refusal;
      if (wire::http::check_rpc_head(head, std::string_view(head_).substr(0, head.size),
                                     context.config.options().limits.max_frame_size, peer.loopback, rpc_terms_,
                                     refusal))
        return verdict::rpc;
      reply = plain(refusal.status, refusal.reason, refusal.text, refusal.extra_headers);
      return verdict::answered;
    }
    const bool get = head.method == "GET" || head.method == "HEAD";
    const bool head_only = head.method == "HEAD";
    if (path == "/_geerpc_" || path == "/_geeprc_") {  // GeeRPC's defaultRPCPath has the typo
      if (head.method == "CONNECT") {
        reply = connected_reply;
        return verdict::connected;
      }
      reply = plain(405, "Method Not Allowed", "geerpc: " + std::string(path) + " takes CONNECT only\n",
                    "Allow: CONNECT\r\n", head_only);
      return verdict::answered;
    }
    const bool page = path == "/debug/geerpc";
    const bool services = path == "/debug/geerpc/services.json";
    const bool metrics = path == "/metrics";
    if ((page || services || metrics || path == "/debug/geerpc/stats.json") &&
        context.config.options().observability.debug_page.allows(peer)) {
      if (!get) {
        reply = plain(405, "Method Not Allowed", "geerpc: " + std::string(path) + " takes GET or HEAD only\n",
                      "Allow: GET, HEAD\r\n");
        return verdict::answered;
      }
      if (metrics)
        reply = wire::http::response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", metrics_text(context), {},
                                     head_only);
      else if (page)
        reply = wire::http::response(200, "OK", "text/html; charset=utf-8", debug_page_html(context), {}, head_only);
      else
        reply = wire::http::response(200, "OK", "application/json",
                                     services ? services_json(context.config.handlers()) : debug_page_json(context), {},
                                     head_only);
      return verdict::answered;
    }
    reply = plain(404, "Not Found", "geerpc: nothing at " + std::string(path) + "\n", {}, head_only);
    return verdict::answered;
  }

  std::string head_;  // the bytes of the head so far (at most wire::http::max_head)
  std::string https_address_;
  wire::http::rpc_terms rpc_terms_;
  bool refuse_ = false;  // plaintext on a port that requires TLS: every request is refused
  wire::http::head_parser parser_;
};

}  // namespace detail
GEERPC_END_NAMESPACE
