// Fuzzes what a server does with the bytes a client sends: the hello, then frames, through a real
// server_connection over a socketpair, with requests dispatched to real handlers. Also the client's
// parser of the hello reply, and the HTTP head parser of the RPC port. Nothing may crash, hang or
// leak.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <geerpc/geerpc.hpp>
#include <memory>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

struct Args {
  int num1;
  int num2;
};

int sum(const Args& a) { return static_cast<int>(static_cast<unsigned>(a.num1) + static_cast<unsigned>(a.num2)); }
std::string echo(const std::string& s) { return s; }
int stop_aware(const Args& a, std::stop_token stop) { return stop.stop_requested() ? 0 : a.num1; }

using Api = geerpc::service<"Arith", geerpc::method<"Sum", &sum>, geerpc::method<"Echo", &echo>,
                            geerpc::method<"Stop", &stop_aware>>;

struct server_under_test {
  geerpc::detail::dispatcher handlers;
  geerpc::detail::server_context context;
  server_under_test() {
    handlers.add<geerpc::binary_codec, Api, void>(nullptr);
    geerpc::server_options options;
    options.limits.max_frame_size = 4096;
    options.limits.max_pending_output = 64u << 10;
    options.timeouts.handshake = std::chrono::nanoseconds{0};  // no timers firing mid-input
    options.timeouts.frame = std::chrono::nanoseconds{0};
    context.config.set_options(std::move(options));
    context.config.set_handlers(&handlers, geerpc::detail::codec_ids::of(geerpc::codecs<geerpc::binary_codec>{}));
    context.config.bind_runtime();  // the default runtime
  }
};

server_under_test& server() {
  static server_under_test instance;
  return instance;
}

void drain(int fd) {
  std::byte sink[4096];
  while (::recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = std::as_bytes(std::span(data, size));

  // The client's side: any bytes as a hello reply header.
  if (size >= geerpc::wire::hello_reply_header_size) {
    geerpc::wire::hello_reply reply;
    std::size_t reason_size = 0;
    if (geerpc::wire::parse_hello_reply_header(input.first<geerpc::wire::hello_reply_header_size>(), reply,
                                               reason_size) == nullptr &&
        reason_size > geerpc::wire::max_reject_reason)
      std::abort();
  }

  // The HTTP head parser: a head fed in pieces gets the verdict it gets whole, at the same size.
  {
    namespace http = geerpc::wire::http;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    http::request_head whole;
    http::request_head pieces;
    const char* why = nullptr;
    const http::head_status once = http::parse_request_head(text, whole, why);
    http::head_parser parser;
    http::head_status fed = http::head_status::incomplete;
    const std::size_t step = size == 0 ? 1 : 1 + data[size - 1] % 61;
    for (std::size_t at = 0; at < size && fed == http::head_status::incomplete;) {
      at = std::min(size, at + step);
      fed = parser.feed(text.substr(0, at), pieces, why);
    }
    if (once != fed) std::abort();
    if (once == http::head_status::complete && (whole.size != pieces.size || whole.size > http::max_head ||
                                                whole.method != pieces.method || whole.target != pieces.target))
      std::abort();
    // A POST /rpc head's checks (wire/http_rpc.hpp): a body within the limit, or a refusal of theirs.
    if (once == http::head_status::complete) {
      http::rpc_terms terms;
      http::rpc_refusal refusal;
      constexpr std::size_t limit = 1000;
      if (http::check_rpc_head(whole, text.substr(0, whole.size), limit, (data[0] & 1) != 0, terms, refusal)) {
        if (terms.content_length > limit || terms.budget_us > (std::uint64_t{1} << 50)) std::abort();
      } else if (std::string_view("400 403 405 411 413 415").find(std::to_string(refusal.status)) ==
                     std::string_view::npos ||
                 refusal.text.empty()) {
        std::abort();
      }
    }
  }

  // The server's side.
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) return 0;
  const int peer = fds[1];
  auto connection =
      std::make_shared<geerpc::detail::server_connection>(server().context, geerpc::net::unique_fd(fds[0]), nullptr);
  std::vector<geerpc::detail::server_request*> ready;
  const std::size_t chunk = size == 0 ? 1 : 1 + data[0] % 97;
  for (std::size_t at = 0; at < size; at += chunk) {
    const bool alive = connection->on_bytes(input.subspan(at, std::min(chunk, size - at)), ready);
    for (auto* request : ready) geerpc::detail::server_connection::run(request);
    ready.clear();
    drain(peer);
    if (!alive) break;
  }
  connection->close();
  ::close(peer);
  return 0;
}
