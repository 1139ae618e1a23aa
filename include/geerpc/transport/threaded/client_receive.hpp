// geerpc: the threaded client's receiving side (the engine is client.hpp): the receiving thread's
// loop, which waits for replies, for writability and for a wake-up; reading the socket, by that
// thread or by a caller that reads its own reply; and handing each reply to its call.
#pragma once

#include <poll.h>

#include <cerrno>
#include <cstddef>
#include <mutex>
#include <span>

#include "../../config.hpp"
#include "../../net/frame_writer.hpp"
#include "../../net/stream.hpp"
#include "../../wire/frame.hpp"
#include "client.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// The receiving thread: waits for replies (or, while a caller watches the socket, only for the
// connection's end), for writability while requests wait for the socket, and for a wake-up.
// With a session (stream.hpp's rules 2 and 3), bytes it holds are read without waiting, it waits
// for what the session wants too, and any readiness retries both the flush and, while it
// watches, the read. While a caller watches, that caller reads, and waits for what the session's
// read wants itself: the receiving thread must then go on flushing, never wait for the caller's
// reading_ (a large request would never finish going out).
template <class Tuning>
void threaded_client_engine<Tuning>::receive() {
  std::byte buffer[threaded_client_sizes::receive_buffer];  // on this thread's stack: pages are touched only as data
                                                            // arrives
  for (;;) {
    const bool watching = wait_.receiver_watches();
    const bool want_write = want_write_.load(std::memory_order_acquire);
    auto events = (watching ? POLLIN : POLLRDHUP) | (want_write ? POLLOUT : 0);
    const bool plain = stream_.plain();
    const bool held = !plain && watching && stream_.buffered();
    if (!plain && (watching || want_write)) events |= stream_.wants();
    pollfd fds[2] = {{stream_.fd(), static_cast<short>(events), 0}, {wake_.get(), POLLIN, 0}};
    if (::poll(fds, 2, held ? 0 : -1) < 0 && errno != EINTR) return fail_all();
    if (fds[1].revents & POLLIN) {
      wake_.drain();
      if (stopping_.load(std::memory_order_acquire)) return;
    }
    const bool retry_both = !plain && (held || fds[0].revents != 0);
    if ((retry_both || (fds[0].revents & POLLOUT)) && writer_.flush() == net::frame_writer::status::broken)
      return fail_all();
    const short read_on = static_cast<short>((watching ? POLLIN : 0) | POLLRDHUP | POLLHUP | POLLERR);
    if ((retry_both && watching) || (fds[0].revents & read_on)) {
      std::unique_lock lock(reading_);  // a caller reading its own reply holds it until done
      if (!read_ready(buffer, sizeof buffer, true)) {
        lock.unlock();
        return fail_all();
      }
      lock.unlock();
      if constexpr (waiting::callers_read) {
        std::lock_guard table(mutex_);
        wait_.receiver_read(!pending_.empty());
      }
    }
  }
}

// Reads and hands out replies; returns false once the connection is over. The receiving thread
// reads until the socket is empty; a caller spinning for its reply reads once, so that it never
// stays past its spin however fast replies come; `wait` lets the first recv wait for data (a
// caller reading its own reply). Whoever reads holds reading_.
template <class Tuning>
bool threaded_client_engine<Tuning>::read_ready(std::byte* buffer, std::size_t size, bool until_empty, bool wait) {
  if (!reading_over_ && !read_socket(buffer, size, until_empty, wait)) reading_over_ = true;
  return !reading_over_;
}

// Reads once, or until the socket is empty; with `wait`, the first read waits for data (the
// socket is in blocking mode then). Either way it goes on while the stream's session holds bytes
// (rule 1): nobody would wait on the socket for those. Returns false when the connection is over.
template <class Tuning>
bool threaded_client_engine<Tuning>::read_socket(std::byte* buffer, std::size_t size, bool until_empty, bool wait) {
  for (;;) {
    const net::io_result r = stream_.read_some(std::span<std::byte>(buffer, size), wait);
    if (r.status != net::io_status::data) return r.status == net::io_status::would_block;
    const std::size_t got = r.bytes;
    wait = false;
    bool valid = true;
    const char* broken = nullptr;
    {
      // One recv's replies at a time, so that a peer keeping the socket full never keeps
      // requests held (tuning/request_batching.hpp).
      [[maybe_unused]] const auto turn = send_.reading();
      broken = reader_.feed(std::span<const std::byte>(buffer, got), [&](std::span<const std::byte> bytes) {
        valid = deliver(bytes);
        return valid;
      });
    }
    if (broken != nullptr || !valid) return false;
    if (stream_.buffered()) continue;
    if (!until_empty || got < size) return true;  // a short read emptied the socket: no recv for EAGAIN
  }
}

// Hands a reply to its call. Returns false when the frame breaks the protocol.
template <class Tuning>
bool threaded_client_engine<Tuning>::deliver(std::span<const std::byte> bytes) {
  wire::frame_view frame;
  if (wire::parse_frame(bytes, frame) != nullptr) return false;
  if (frame.header.kind == wire::frame_kind::goaway) {  // the calls in flight still get their replies
    std::lock_guard lock(mutex_);
    going_away_ = true;
    return true;
  }
  if (frame.header.kind != wire::frame_kind::response) return false;
  pending_call* call = take(frame.header.seq);
  if (call == nullptr) return true;  // its caller gave up: drop the late reply
  if (frame.header.status == 0) {
    (*call->reply)(frame.body);
    finish(*call, {});
  } else {
    finish(*call, response_outcome(frame.header.status, frame.text));
  }
  return true;
}

}  // namespace detail
GEERPC_END_NAMESPACE
