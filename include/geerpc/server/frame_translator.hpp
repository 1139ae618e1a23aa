// geerpc: the seam through which a server connection speaks another stream protocol on its port
// (JSON-RPC 1.0, as Go's net/rpc/jsonrpc writes it: json/jsonrpc_stream.hpp): a translator turns the
// peer's bytes into geerpc request frames and the server's response frames into the peer's bytes, so
// that everything between (the engines, the request ledger, interceptors, statistics, the debug
// page) works unchanged. The core knows nothing of the protocol: a codec that brings one says so
// with two static members, make_frame_translator() and stream_first_byte (the byte a stream of
// its protocol begins with, and no hello, HTTP request or TLS record does), which basic_server
// finds among its codecs. A codec may also bring make_http_rpc_translator(): the translator of
// one HTTP request's body (POST /rpc, JSON-RPC 2.0: server/http_door.hpp), whose one answer is
// the connection's last words.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "../codecs.hpp"
#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// One per connection, made when the connection's first byte says the peer speaks the protocol.
// inbound() runs on the connection's reader only; outbound() on any thread that answers one of its
// requests (handler threads, the deadline scheduler, the reader), at the same time as inbound() and
// as each other: an implementation guards what the two share (which request is whose) itself.
class frame_translator {
 public:
  enum class verdict {
    more,    // every whole message became a frame or a reply; wait for more bytes
    broken,  // the stream is out of step (no message can begin where it stands): send `replies`
             // (its last words), then close
  };
  // What inbound() made of a read: the verdict, and how many messages in it were longer than the
  // server's max_frame_size (each answered in `replies`, the stream still in step).
  struct intake {
    verdict outcome = verdict::more;
    std::size_t too_large = 0;
  };

  virtual ~frame_translator() = default;

  // The peer's bytes, in order. Appends to `frames` a geerpc request frame (wire/frame.hpp: kind
  // request, no flags, no deadline, a seq of the translator's choosing, unique on the connection)
  // for each whole message, and to `replies` the bytes of whatever it answers itself (a message
  // that is no call, or that cannot be read), to be sent as they are. Keeps the start of an
  // unfinished message.
  virtual intake inbound(std::span<const std::byte> bytes, std::vector<std::byte>& frames,
                         std::vector<std::byte>& replies) = 0;

  // A whole frame the server would send (a response; a goaway, which the peer has no word for,
  // becomes nothing), as the bytes to send instead, appended to `text`.
  virtual void outbound(std::span<const std::byte> frame, std::vector<std::byte>& text) = 0;

  // Bytes of an unfinished message held: nonzero means the peer stopped mid-message (the
  // connection's frame timeout then runs, as for a frame begun and not finished).
  virtual std::size_t buffered() const noexcept = 0;

  // A translator of one request (HTTP's): the first text outbound() gives is its whole answer,
  // which the session sends as its last words and then closes; once inbound() has given frames,
  // what the peer sends is not read any more. A stream's translator answers each call on its own.
  virtual bool one_answer() const noexcept { return false; }
};

// What a translator is made with: the server's limit on a request, which also bounds a message.
struct frame_translator_terms {
  std::uint32_t max_frame_size = 0;
};

using frame_translator_factory = std::unique_ptr<frame_translator> (*)(const frame_translator_terms&);

// What a translator of one HTTP request's body is made with: the server's limit, the body's
// length (Content-Length) and the deadline budget of its calls (Geerpc-Timeout; 0: none), which
// it writes into each request frame.
struct http_rpc_terms {
  std::uint32_t max_frame_size = 0;
  std::size_t content_length = 0;
  std::uint64_t budget_us = 0;
  std::size_t max_calls = 0;         // a batch of more calls is refused whole (max_inflight_per_connection)
  std::size_t max_answer_bytes = 0;  // the answer's entries, at most (max_pending_output)
};
using http_rpc_translator_factory = std::unique_ptr<frame_translator> (*)(const http_rpc_terms&);

// A server's translator, if one of its codecs brings one: how to make it, the first byte of a
// stream it translates, and the slot of that codec (codecs.hpp), which decodes the requests.
struct frame_translation {
  frame_translator_factory make = nullptr;
  char first_byte = 0;
  std::size_t codec_slot = 0;
  http_rpc_translator_factory make_http = nullptr;  // null: the codec serves no POST /rpc
};

template <class Codec>
constexpr frame_translation translation_by(std::size_t slot) noexcept {
  frame_translation found;
  if constexpr (requires(const frame_translator_terms& terms) {
                  Codec::make_frame_translator(terms);
                  { Codec::stream_first_byte } -> std::convertible_to<char>;
                })
    found = {&Codec::make_frame_translator, Codec::stream_first_byte, slot};
  if constexpr (requires(const http_rpc_terms& terms) { Codec::make_http_rpc_translator(terms); }) {
    found.make_http = &Codec::make_http_rpc_translator;
    found.codec_slot = slot;
  }
  return found;
}

// The first of a server's codecs that brings a translator; none: make is null.
template <class... Codecs>
constexpr frame_translation translation_of(codecs<Codecs...>) noexcept {
  std::size_t slot = 0;
  const frame_translation found[] = {translation_by<Codecs>(slot++)...};
  for (const frame_translation& translation : found)
    if (translation.make != nullptr || translation.make_http != nullptr) return translation;
  return {};
}

}  // namespace detail
GEERPC_END_NAMESPACE
