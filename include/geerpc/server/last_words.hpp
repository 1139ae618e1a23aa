// geerpc: a server connection's last words (an HTTP answer, a translator's reply to a stream out of
// step, the one answer of a POST /rpc): sent after what other threads are sending, then the writing
// side ends and the connection closes at the peer's EOF, or when the wait for it (eof_wait()) runs
// out. Until then what the peer sends is discarded (session_opening::discard()).
//
// A base of wire_session<Connection>, which `Connection` derives from (a template parameter, so
// that no call is virtual): it writes through the connection's writer() and stream, and bounds the
// wait with its stall and write timers (session_timers.hpp). wire_session makes it a friend for that.
#pragma once

#include <atomic>
#include <cstddef>
#include <span>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../net/frame_writer.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

template <class Connection>
class wire_session;
template <class Connection>
class translated_stream;

template <class Connection>
class last_words {
 public:
  last_words(const last_words&) = delete;
  last_words& operator=(const last_words&) = delete;

  // Sends `bytes`, the last words, after what other threads are sending, then closes the
  // connection once the socket has taken them all (or the peer is dropped for not reading them:
  // timeouts.write, or the wait for EOF). Nothing is sent after them; what the peer sends meanwhile
  // is ignored. On the reader's thread, or, for a translator of one request, on the thread that
  // answers its last call.
  void send_and_close(std::span<const std::byte> bytes) {
    Connection& owner = connection();
    closing_after_output_.store(true, std::memory_order_relaxed);
    owner.disarm_stall_timer();  // a frame's or the hello's: the wait for EOF replaces it, once they are out
    owner.forget_partial();
    // Until the words are out, timeouts.write bounds a peer that does not read them; without it,
    // the wait for EOF starts now (answer_sent() then finds it armed).
    if (owner.context_.config.options().timeouts.write <= std::chrono::nanoseconds::zero())
      owner.arm_stall_timer(eof_wait());
    const auto status = owner.writer().write_last(bytes);
    if (status == net::frame_writer::status::pending)
      owner.arm_write_timer();
    else if (status == net::frame_writer::status::broken)
      owner.close();
    else
      answer_sent();
  }
  // The last words are all out: the writing side ends, and the transport closes the connection at
  // the peer's EOF (on_bytes drops what comes before it), or the stall timer at eof_wait(), which
  // starts now: a peer still reading a backlog in front of the words keeps them. Without that
  // bound, it closes now. Once only, from whichever thread saw the words go out (the reader, a
  // handler's flush, the transport's flush when the socket drained).
  void answer_sent() {
    if (words_out_.exchange(true, std::memory_order_acq_rel)) return;
    Connection& owner = connection();
    if (eof_wait() <= std::chrono::nanoseconds::zero()) return owner.close();
    owner.stream().shutdown_write();
    owner.arm_stall_timer(eof_wait());
  }
  // How long a peer has, after the last words, to read them and close its end before the server
  // closes (closing first could reset the connection and lose them): one bound whatever the words
  // were. It is timeouts.handshake, the bound on a connection that serves no call: before its hello,
  // and after its last words, the peer owes the server nothing but bytes it will not act on.
  // timeouts.frame is no fit: the peer owes no frame, and a JSON-RPC peer and an HTTP one, both
  // answered so, should not be held for different times.
  std::chrono::nanoseconds eof_wait() const noexcept {
    return static_cast<const Connection&>(*this).context_.config.options().timeouts.handshake;
  }

 protected:
  last_words() = default;
  ~last_words() = default;

 private:
  friend class wire_session<Connection>;
  friend class translated_stream<Connection>;

  std::atomic<bool> closing_after_output_{false};  // send_and_close() was called

  Connection& connection() noexcept { return static_cast<Connection&>(*this); }

  std::atomic<bool> words_out_{false};  // answer_sent() ran: the last words are out
};

}  // namespace detail
GEERPC_END_NAMESPACE
