// geerpc: a server connection's stream of another protocol, once its opening (session_opening.hpp)
// has given it a translator (frame_translator.hpp): the peer's bytes become request frames, which
// go through the connection's framing as a geerpc peer's own would, and the server's response
// frames become the peer's bytes. A stream out of step, and a translator of one request (POST /rpc)
// once it answers, end in the connection's last words (last_words.hpp).
//
// A base of wire_session<Connection>, which `Connection` derives from (a template parameter, so
// that no call is virtual): it feeds the connection's framing, watches its unfinished messages with
// its stall timer (session_timers.hpp) and writes through its writer(). wire_session makes it a
// friend for that.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "../config.hpp"
#include "../detail/scratch.hpp"
#include "frame_translator.hpp"
#include "scratch_tags.hpp"
#include "statistics.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

template <class Connection>
class wire_session;

template <class Connection>
class translated_stream {
 public:
  translated_stream(const translated_stream&) = delete;
  translated_stream& operator=(const translated_stream&) = delete;

 protected:
  translated_stream() = default;
  ~translated_stream() = default;

 private:
  friend class wire_session<Connection>;

  // A translated stream's bytes: the translator's frames go through the reader as the peer's own
  // would; what it answers itself (a message too long, malformed, or no request: the stream still
  // in step) goes straight out. A stream out of step gets its last words, and then the connection
  // ends as after an HTTP answer: the writing side once they are out, the rest at the peer's EOF.
  // A translator of one request (HTTP's: one_answer()) that gave its frames has read all it reads:
  // from then on the peer's bytes are discarded and the reader leaves the stall timer alone, so
  // that whichever thread answers the last call may send the last words (send_translated()).
  template <class Ready>
  bool on_translated(std::span<const std::byte> data, Ready& ready) {
    Connection& owner = connection();
    if (owner.closing_after_output_.load(std::memory_order_relaxed) || translated_input_done_)
      return owner.opening_.discard(owner, data.size());
    std::vector<std::byte>& frames = frame_scratch<translated_requests_tag>();
    std::vector<std::byte>& replies = frame_scratch<translated_answers_tag>();
    const frame_translator::intake intake = translator_->inbound(data, frames, replies);
    for (std::size_t i = 0; i < intake.too_large; ++i) owner.observer().turned_away(limit_kind::frame_size);
    if (!frames.empty() && translator_->one_answer()) {
      translated_input_done_ = true;
      owner.watch_partial(true, 0);  // the body's timer goes before any of its calls can answer
    }
    bool completed = false;
    const bool keep = frames.empty() || owner.on_frames(frames, ready, completed);
    trim_scratch(frames);
    if (keep && !owner.closed()) {
      if (intake.outcome == frame_translator::verdict::broken)
        owner.send_and_close(replies);
      else if (!replies.empty())
        owner.after_write(owner.writer().write(replies));
    }
    if (!owner.closing_after_output_.load(std::memory_order_relaxed) && !translated_input_done_)
      owner.watch_partial(completed || !replies.empty(), translator_->buffered());
    trim_scratch(replies);
    return keep && !owner.closed();
  }

  // A frame the server sends on a translated stream, in the peer's protocol. A translator never
  // changes once set, and is set (by the reader, at the first byte) before any request of its
  // stream exists, so every thread that answers one sees it; the goaway, which other threads send
  // at any time, never goes out on such a stream (session_opening::begin_translated).
  // Past the last words (send_and_close()) nothing goes out: the reply is dropped here, and the
  // writer drops one that raced past this check. A translator of one request gives its whole
  // answer once, for its last call: those are the last words, sent from the thread that answered
  // (the reader no longer arms the stall timer: on_translated()). A closed connection's replies
  // are not translated either: nothing would carry them.
  void send_translated(std::span<const std::byte> frame, bool hold) {
    Connection& owner = connection();
    if (owner.closing_after_output_.load(std::memory_order_relaxed) || owner.closed()) return;
    std::vector<std::byte>& text = frame_scratch<translated_text_tag>();
    translator_->outbound(frame, text);
    if (!text.empty()) {
      if (translator_->one_answer())
        owner.send_and_close(text);
      else
        owner.after_write(hold ? owner.writer().hold(text) : owner.writer().write(text));
    }
    trim_scratch(text);
  }

  std::unique_ptr<frame_translator> translator_;  // a translated stream's (set by the opening), else null

  Connection& connection() noexcept { return static_cast<Connection&>(*this); }

  bool translated_input_done_ = false;  // the reader's: a one-answer translator has its frames
};

}  // namespace detail
GEERPC_END_NAMESPACE
