// geerpc: what a server connection reads before its first frame (wire_session.hpp owns one): the
// first bytes, which send an HTTP request through the HTTP door (http_door.hpp); the geerpc hello,
// accepted with the terms it asks for or refused in a hello reply; and the refusal of a plaintext
// peer on a port that requires TLS, which names the address to dial with TLS instead; and a
// stream of another protocol that a codec of the server translates (frame_translator.hpp: JSON-RPC,
// whose first byte is `{`), which needs no hello: its translator then stands between the session
// and the peer.
//
// It keeps what those bytes told: the hello, what the stream's session saw of the peer and proved
// about it (its identity), and the hello's terms. It acts through the session it is given (a
// template parameter, so that no call is virtual): its writer for the answers, its close(), and
// its stall timer, which the hello disarms. The session's hot path asks it one thing, done().
#pragma once

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../detail/scratch.hpp"
#include "../net/peer_identity.hpp"
#include "../net/socket.hpp"
#include "../net/stream.hpp"
#include "../wire/frame.hpp"
#include "../wire/handshake.hpp"
#include "../wire/http.hpp"
#include "context.hpp"
#include "frame_translator.hpp"
#include "http_door.hpp"
#include "scratch_tags.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

class session_opening {
 public:
  static constexpr std::size_t max_discarded = 64u << 10;  // bytes dropped after the last words (discard())

  // The opening is over: the whole hello arrived, or a translated stream began (which has none).
  bool done() const noexcept { return hello_size_ == wire::hello_size; }
  // What the stream layer proved about the peer (call_context::identity()): taken from the stream
  // once, when the peer's first bytes arrive (after any TLS handshake: they came through it), and
  // unchanged after; nothing before. A pointer into the stream's session, which lives as long as
  // the connection: no call copies it or takes a lock for it.
  const net::peer_identity& identity() const noexcept { return *identity_.load(std::memory_order_acquire); }
  // Its first bytes began an HTTP request for the debug page, /metrics or another path, not one
  // that turns the connection to RPC (CONNECT, POST /rpc): the page does not list it as an RPC
  // connection. Relaxed: a gauge the page reads from another thread.
  bool web() const noexcept { return web_.load(std::memory_order_relaxed); }
  // The hello was accepted, or a translated stream began.
  bool greeted() const noexcept { return greeted_.load(std::memory_order_relaxed); }
  // What the hello asked for: the handle timeout (0: none), and the largest response it reads.
  std::chrono::nanoseconds handle_timeout() const noexcept { return handle_timeout_; }
  std::uint32_t max_response_size() const noexcept { return max_response_size_; }
  // The server's codec the hello chose (its slot in the server's codecs.hpp list).
  std::size_t codec_slot() const noexcept { return codec_slot_; }

  // Before the hello: a connection whose first byte begins an HTTP request goes through the HTTP
  // door (http_door.hpp) first. Returns true when what is left of `data` is for the hello: a
  // connection that never spoke HTTP, or one whose CONNECT was answered; false while the head is
  // incomplete, or when the door answered and the connection is closing.
  template <class Session>
  bool past_http_door(Session& session, std::span<const std::byte>& data) {
    if (session.closing_after_output_.load(std::memory_order_relaxed)) {
      discard(session, data.size());  // the wait for EOF (last_words::eof_wait()) bounds it
      return false;
    }
    if (!door_checked_ && !data.empty()) {
      door_checked_ = true;
      // The first bytes came through the stream: its session (TLS) is established, and knows who.
      identity_.store(&session.stream_.identity(), std::memory_order_release);
      if (!session.stream_.plain()) seen_ = session.stream_.seen();  // a TLS peer, or a plaintext one past the session
      const frame_translation& translation = session.context_.config.translation();
      translatable_ = translation.make != nullptr && static_cast<char>(data[0]) == translation.first_byte &&
                      (seen_ == net::peer_seen::plain || seen_ == net::peer_seen::layered);
      if (wire::http::starts_request(static_cast<char>(data[0])))
        http_ = seen_ == net::peer_seen::plain_refused
                    ? std::make_unique<http_door>(tls_address(session.fd(), "https://"))
                    : std::make_unique<http_door>();
      web_.store(http_ != nullptr, std::memory_order_relaxed);
    }
    if (!http_) return true;
    std::size_t used = 0;
    std::string reply;
    const http_door::verdict verdict =
        http_->feed(data, used, reply, session.context_, session.owner().peer(), identity());
    data = data.subspan(used);
    if (verdict == http_door::verdict::pending) return false;
    if (verdict == http_door::verdict::rpc) {
      web_.store(false, std::memory_order_relaxed);
      const wire::http::rpc_terms terms = http_->rpc_terms();
      http_.reset();
      begin_http_rpc(session, terms);
      return !session.closed();  // what is left of `data` is the body's
    }
    http_.reset();
    const auto bytes = std::as_bytes(std::span(reply));
    if (verdict == http_door::verdict::connected) {
      web_.store(false, std::memory_order_relaxed);
      session.send(bytes);
      return !session.closed();
    }
    session.send_and_close(bytes);
    return false;
  }

  // The last words to a peer are going out, or have (an HTTP answer, a translator's reply to a
  // broken message): what the peer still sends is dropped unread until its EOF (closing before
  // would reset the connection and could lose the answer), up to a bound. Returns false when the
  // connection is closed.
  template <class Session>
  bool discard(Session& session, std::size_t bytes) {
    discarded_ += bytes;
    if (discarded_ > max_discarded) session.close();
    return !session.closed();
  }

  // A connection whose first byte begins a message of the protocol a codec of the server translates
  // (frame_translator.hpp) is accepted at once, without a hello, as a hello would accept it: with
  // that codec, no handle timeout (such a peer sends none), responses up to the server's
  // max_frame_size. Returns true when it did, having given the session its translator.
  // A POST /rpc (http_door.hpp) has a translator too, given when its head ended: true for it.
  template <class Session>
  bool begin_translated(Session& session) {
    if (session.translator_ != nullptr) return true;
    if (!translatable_ || hello_size_ != 0) return false;
    const std::uint32_t max_frame_size = session.context_.config.options().limits.max_frame_size;
    accept_translated(session, session.context_.config.translation().make({max_frame_size}));
    return true;
  }

  // Takes the hello's bytes from the front of `data`; true once all of them are here.
  bool take_hello(std::span<const std::byte>& data) noexcept {
    const std::size_t take = std::min(wire::hello_size - hello_size_, data.size());
    std::copy_n(data.begin(), take, hello_.begin() + static_cast<std::ptrdiff_t>(hello_size_));
    hello_size_ += take;
    data = data.subspan(take);
    return done();
  }

  // The whole hello: accepted with its terms, and answered, or refused (session.reject()). Returns
  // false when the connection must be closed.
  template <class Session>
  bool accept_hello(Session& session) {
    const server_context& context = session.context_;
    wire::hello hello;
    std::string refusal;
    if (seen_ == net::peer_seen::plain_refused) {
      const std::string address = tls_address(session.fd(), "tls@");
      refusal = "rpc server: this port requires TLS: " +
                (address.empty() ? std::string("dial it with a TLS session (options::session)") : "dial " + address);
    } else if (seen_ == net::peer_seen::layered_http)
      refusal = "rpc server: this TLS connection agreed on HTTP (ALPN http/1.1), not geerpc/1";
    else if (const char* bad = wire::parse_hello(hello_, hello))
      refusal = std::string("rpc server: ") + bad;
    else if (hello.version != wire::protocol_version)
      refusal = "rpc server: the client speaks geerpc protocol version " + std::to_string(hello.version) +
                ", this server " + std::to_string(wire::protocol_version) +
                ": both sides need a geerpc of the same protocol version (docs/protocol.md 2.3)";
    else if (const int slot = context.config.codecs().slot_of(hello.codec_id); slot >= 0)
      codec_slot_ = static_cast<std::size_t>(slot);
    else
      refusal = "rpc server: unsupported codec " + std::to_string(hello.codec_id) + ": this server speaks " +
                context.config.codecs().text();
    session.disarm_stall_timer();
    if (!refusal.empty()) {
      session.reject(refusal);
      return false;
    }
    constexpr std::uint64_t max_us = std::uint64_t{1} << 50;  // ~35 years: fits in nanoseconds
    handle_timeout_ = std::chrono::microseconds(std::min(hello.handle_timeout_us, max_us));
    greeted_.store(true, std::memory_order_relaxed);
    // The smaller of what the client reads (0: it set no limit) and what this server sends.
    max_response_size_ = hello.max_response_size == 0
                             ? context.config.options().limits.max_frame_size
                             : std::min(hello.max_response_size, context.config.options().limits.max_frame_size);
    std::vector<std::byte>& reply = frame_scratch<server_frames_tag>();
    wire::encode_hello_reply({true, context.config.options().limits.max_frame_size, {}}, reply);
    session.send(reply);
    session.hello_reply_sent();
    return !session.closed();
  }

 private:
  // A translated connection begins, as a hello would accept it: with the translating codec, no
  // handle timeout (such a peer sends none), responses up to the server's max_frame_size.
  template <class Session>
  void accept_translated(Session& session, std::unique_ptr<frame_translator> translator) {
    session.translator_ = std::move(translator);
    codec_slot_ = session.context_.config.translation().codec_slot;
    handle_timeout_ = std::chrono::nanoseconds::zero();
    max_response_size_ = session.context_.config.options().limits.max_frame_size;
    greeted_.store(true, std::memory_order_relaxed);
    hello_size_ = wire::hello_size;  // done(): there is no hello to wait for
    // No hello reply goes out, nor, at a graceful shutdown, a goaway (the peer has no word for
    // it): its requests are refused with going_away instead, in its own words. The stall timer
    // now watches the translator's unfinished message (timeouts.frame), not the handshake.
    session.disarm_stall_timer();
  }

  // The head of a POST /rpc was good: its body goes to the translator the codec brings.
  template <class Session>
  void begin_http_rpc(Session& session, const wire::http::rpc_terms& terms) {
    const server_limits& limits = session.context_.config.options().limits;
    accept_translated(session, session.context_.config.translation().make_http(
                                   {limits.max_frame_size, terms.content_length, terms.budget_us,
                                    limits.max_inflight_per_connection, limits.max_pending_output}));
  }

  // The address a refused plaintext peer reaches this port at with TLS ("tls@127.0.0.1:7000",
  // "https://127.0.0.1:7000"), as it dialed it; empty for a Unix socket, which has no such form.
  static std::string tls_address(int fd, std::string_view scheme) {
    sockaddr_storage local{};
    socklen_t size = sizeof local;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &size) != 0 || local.ss_family == AF_UNIX) return {};
    return std::string(scheme) + net::endpoint_text(local, size);
  }

  std::unique_ptr<http_door> http_;                                            // while an HTTP request's head arrives
  std::atomic<const net::peer_identity*> identity_{&net::no_peer_identity()};  // set with door_checked_
  std::size_t hello_size_ = 0;
  std::size_t discarded_ = 0;
  std::chrono::nanoseconds handle_timeout_{0};
  std::uint32_t max_response_size_ = 0;          // set by the hello, before any request
  std::size_t codec_slot_ = 0;                   // likewise
  net::peer_seen seen_ = net::peer_seen::plain;  // what a session saw of the peer (set with door_checked_)
  std::array<std::byte, wire::hello_size> hello_{};
  bool door_checked_ = false;         // the first byte was looked at (the reader's alone)
  bool translatable_ = false;         // it began a translated stream's message (set with door_checked_)
  std::atomic<bool> greeted_{false};  // the hello was accepted
  std::atomic<bool> web_{false};  // its first bytes began an HTTP request that no CONNECT or POST /rpc turned to RPC
};

}  // namespace detail
GEERPC_END_NAMESPACE
