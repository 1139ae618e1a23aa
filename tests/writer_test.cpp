// The write side of a connection: held frames wait for a flush or the next write, and go out in
// order with it; holding never grows past its bound; the memory it keeps for a peer that does not
// read is bounded by capacity, not by the bytes in it.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <future>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "geerpc/net/frame_writer.hpp"
#include "geerpc/net/socket.hpp"

namespace writer_test {

namespace {

struct socket_pair {
  geerpc::net::stream writer_end;
  geerpc::net::unique_fd reader_end;
  socket_pair() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
    writer_end = geerpc::net::stream(geerpc::net::unique_fd(fds[0]));
    reader_end = geerpc::net::unique_fd(fds[1]);
  }
  // Everything the reader end holds now (the writer never blocks, so it is all there already),
  // or at most `limit` bytes of it.
  std::vector<std::byte> drain(std::size_t limit = static_cast<std::size_t>(-1)) {
    std::vector<std::byte> got;
    std::byte buffer[4096];
    while (got.size() < limit) {
      const long n = ::recv(reader_end.get(), buffer, std::min(sizeof buffer, limit - got.size()), 0);
      if (n <= 0) return got;
      got.insert(got.end(), buffer, buffer + n);
    }
    return got;
  }
};

std::vector<std::byte> bytes(std::size_t count, unsigned char value) {
  return std::vector<std::byte>(count, static_cast<std::byte>(value));
}

std::vector<std::byte> joined(std::initializer_list<std::vector<std::byte>> parts) {
  std::vector<std::byte> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

}  // namespace

using geerpc::net::frame_writer;

TEST_CASE("held frames wait for a flush, then go out in order", "[writer]") {
  socket_pair pair;
  frame_writer writer(pair.writer_end, 1u << 20);
  const auto first = bytes(10, 1), second = bytes(20, 2);
  CHECK(writer.hold(first) == frame_writer::status::done);
  CHECK(writer.hold(second) == frame_writer::status::done);
  CHECK(pair.drain().empty());
  CHECK(writer.has_pending());
  CHECK(writer.flush() == frame_writer::status::done);
  CHECK(pair.drain() == joined({first, second}));
  CHECK_FALSE(writer.has_pending());
}

TEST_CASE("a write sends the held frames ahead of its own", "[writer]") {
  socket_pair pair;
  frame_writer writer(pair.writer_end, 1u << 20);
  const auto held = bytes(10, 1), written = bytes(5, 2);
  REQUIRE(writer.hold(held) == frame_writer::status::done);
  CHECK(writer.write(written) == frame_writer::status::done);
  CHECK(pair.drain() == joined({held, written}));
  CHECK_FALSE(writer.has_pending());
}

TEST_CASE("a write after held frames sends them all, whatever the limit", "[writer]") {
  // Held frames and the frame written after them go out at once: none waits for the peer, so the
  // limit on what waits does not refuse them, though their blocks pass it (8 KiB blocks here).
  socket_pair pair;
  frame_writer writer(pair.writer_end, 100u << 10);
  std::vector<std::vector<std::byte>> held;
  for (unsigned char i = 0; i < 8; ++i) {
    held.push_back(bytes(8000, i));
    REQUIRE(writer.hold(held.back()) == frame_writer::status::done);
  }
  const auto written = bytes(35000, 9);
  REQUIRE(writer.write(written) == frame_writer::status::done);
  std::vector<std::byte> expected;
  for (const auto& frame : held) expected.insert(expected.end(), frame.begin(), frame.end());
  expected.insert(expected.end(), written.begin(), written.end());
  CHECK(pair.drain() == expected);
  CHECK_FALSE(writer.overflowed());
}

TEST_CASE("a writer whose frames went out holds no memory", "[writer]") {
  socket_pair pair;
  frame_writer writer(pair.writer_end, 1u << 20);
  REQUIRE(writer.hold(bytes(100, 1)) == frame_writer::status::done);
  CHECK(writer.held() > 0);
  REQUIRE(writer.flush() == frame_writer::status::done);
  CHECK(writer.held() == 0);
  CHECK(pair.drain().size() == 100);
}

TEST_CASE("holding past the batch limit sends instead", "[writer]") {
  socket_pair pair;
  frame_writer writer(pair.writer_end, 1u << 20);
  const auto most = bytes(frame_writer::batch_limit - 8, 1), more = bytes(16, 2);
  REQUIRE(writer.hold(most) == frame_writer::status::done);
  CHECK(pair.drain().empty());
  CHECK(writer.hold(more) == frame_writer::status::done);  // over the limit: all of it goes now
  CHECK(pair.drain() == joined({most, more}));
  CHECK_FALSE(writer.has_pending());
}

TEST_CASE("a frame held on a broken connection reports it", "[writer]") {
  socket_pair pair;
  frame_writer writer(pair.writer_end, 1u << 20);
  pair.reader_end.reset();
  const auto frame = bytes(10, 1);
  REQUIRE(writer.hold(frame) == frame_writer::status::done);  // not sent yet: nothing known
  CHECK(writer.flush() == frame_writer::status::broken);
  CHECK(writer.hold(frame) == frame_writer::status::broken);
}

// A frame whose bytes say where they belong: frame i, byte j holds (i * 31 + j) mod 251.
std::vector<std::byte> numbered(std::size_t i, std::size_t size) {
  std::vector<std::byte> frame(size);
  for (std::size_t j = 0; j < size; ++j) frame[j] = static_cast<std::byte>((i * 31 + j) % 251);
  return frame;
}

TEST_CASE("a peer that reads nothing costs at most the limit, counted by capacity", "[writer]") {
  socket_pair pair;  // nobody reads: the socket fills, then the writer's queue
  constexpr std::size_t limit = 256u << 10;
  geerpc::net::memory_gauge gauge;
  std::size_t peak = 0;
  {
    frame_writer writer(pair.writer_end, limit, nullptr, nullptr, &gauge);
    // Sizes that do not add up to the limit: a vector grown by doubling would overshoot it.
    for (std::size_t i = 0; i < 10000; ++i) {
      const auto status = writer.write(numbered(i, 1000 + (i * 7919) % 30000));
      peak = std::max(peak, writer.held());
      REQUIRE(gauge.now() == writer.held());
      if (status == frame_writer::status::broken) break;
    }
    CHECK(writer.broken());
    CHECK(writer.held() == 0);  // a broken writer keeps nothing
  }
  CHECK(peak <= limit);
  CHECK(peak >= limit / 2);  // it did fill up
  CHECK(gauge.peak() == peak);
  CHECK(gauge.now() == 0);  // and its share of the gauge went with it
}

TEST_CASE("a frame larger than the limit may wait alone, but nothing joins it", "[writer]") {
  socket_pair pair;
  constexpr std::size_t limit = 64u << 10;
  frame_writer writer(pair.writer_end, limit);
  // Bigger than the socket takes at once, and than the limit: the writer keeps the rest.
  const auto big = numbered(0, 4u << 20);
  CHECK(writer.write(big) == frame_writer::status::pending);
  CHECK(writer.held() <= big.size());
  CHECK(writer.write(numbered(1, 100)) == frame_writer::status::broken);
}

TEST_CASE("a slow reader gets every byte in order, and the writer gives its memory back", "[writer]") {
  socket_pair pair;
  frame_writer writer(pair.writer_end, 64u << 20);
  std::vector<std::byte> sent, got;
  std::size_t max_held = 0;
  for (std::size_t i = 0; i < 400; ++i) {
    const auto frame = numbered(i, 1 + (i * 104729) % 40000);
    sent.insert(sent.end(), frame.begin(), frame.end());
    REQUIRE(writer.write(frame) != frame_writer::status::broken);
    max_held = std::max(max_held, writer.held());
    // Read a little now and then, less than was written: the rest keeps waiting in the writer.
    if (i % 7 == 0) {
      const auto part = pair.drain(20000);
      got.insert(got.end(), part.begin(), part.end());
      REQUIRE(writer.flush() != frame_writer::status::broken);
    }
  }
  CHECK(max_held > (256u << 10));  // the writer did hold a queue
  while (writer.has_pending()) {
    const auto part = pair.drain();
    got.insert(got.end(), part.begin(), part.end());
    REQUIRE(writer.flush() != frame_writer::status::broken);
  }
  const auto last = pair.drain();
  got.insert(got.end(), last.begin(), last.end());
  CHECK(got == sent);
  CHECK(writer.held() <= (128u << 10));  // what a burst grew to is not kept
}

TEST_CASE("the stall clock starts when the socket fills, moves when bytes go out, and stops once drained", "[writer]") {
  using clock = std::chrono::steady_clock;
  socket_pair pair;
  frame_writer writer(pair.writer_end, 8u << 20);
  CHECK_FALSE(writer.stalled_since());
  const auto before = clock::now();
  auto status = frame_writer::status::done;
  for (std::size_t i = 0; status != frame_writer::status::pending; ++i) {
    REQUIRE(i < 10000);
    status = writer.write(numbered(i, 16u << 10));
  }
  const auto first = writer.stalled_since();
  REQUIRE(first);
  CHECK(*first >= before);
  CHECK(writer.flush() == frame_writer::status::pending);  // nothing read: no progress
  CHECK(writer.stalled_since() == first);
  for (std::size_t i = 0; i < 64; ++i)  // queued: no progress either
    CHECK(writer.write(numbered(i, 16u << 10)) == frame_writer::status::pending);
  CHECK(writer.stalled_since() == first);
  while (clock::now() <= *first) {
  }
  pair.drain(64u << 10);  // the peer reads some: the next flush gets bytes out, not all of them
  CHECK(writer.flush() == frame_writer::status::pending);
  REQUIRE(writer.stalled_since());
  CHECK(*writer.stalled_since() > *first);
  while (writer.has_pending()) {
    pair.drain();
    REQUIRE(writer.flush() != frame_writer::status::broken);
  }
  CHECK_FALSE(writer.stalled_since());
}

TEST_CASE("memory held falls a block at a time as the socket drains, down to none", "[writer]") {
  socket_pair pair;
  frame_writer writer(pair.writer_end, 16u << 20);
  auto status = frame_writer::status::done;
  for (std::size_t i = 0; status != frame_writer::status::pending; ++i) {
    REQUIRE(i < 10000);
    status = writer.write(numbered(i, 16u << 10));
  }
  for (std::size_t i = 0; i < 200; ++i) REQUIRE(writer.write(numbered(i, 10000)) == frame_writer::status::pending);
  const std::size_t full = writer.held();
  CHECK(full >= 2000000);  // 200 frames of 10000 bytes wait, in blocks
  CHECK(full <= 2000000 + 2 * geerpc::net::chunk_pool::standard);
  std::size_t last = full;
  bool fell = false;
  while (writer.has_pending()) {
    pair.drain(256u << 10);
    REQUIRE(writer.flush() != frame_writer::status::broken);
    CHECK(writer.held() <= last);  // never grows while nothing is written
    fell = fell || writer.held() < last;
    last = writer.held();
  }
  CHECK(fell);
  CHECK(writer.held() == 0);  // an idle writer holds no block
}

TEST_CASE("frames written by several threads at once arrive whole, each thread's in order", "[writer]") {
  socket_pair pair;
  frame_writer writer(pair.writer_end, 64u << 20);
  constexpr std::size_t threads = 4, frames = 300;
  // A frame: its size (4 bytes), its thread, its index (2 bytes each), then bytes that say both.
  const auto frame = [](std::size_t thread, std::size_t index) {
    const std::size_t size = 8 + (index * 7919 + thread * 104729) % 30000;
    std::vector<std::byte> f(size);
    for (std::size_t j = 0; j < 4; ++j) f[j] = static_cast<std::byte>(size >> (8 * j));
    f[4] = static_cast<std::byte>(thread);
    f[5] = static_cast<std::byte>(thread >> 8);
    f[6] = static_cast<std::byte>(index);
    f[7] = static_cast<std::byte>(index >> 8);
    for (std::size_t j = 8; j < size; ++j) f[j] = static_cast<std::byte>((thread * 31 + index * 7 + j) % 251);
    return f;
  };
  std::atomic<bool> failed{false};
  std::vector<std::thread> writers;
  for (std::size_t t = 0; t < threads; ++t)
    writers.emplace_back([&, t] {
      for (std::size_t i = 0; i < frames; ++i)
        if (writer.write(frame(t, i)) == frame_writer::status::broken) failed = true;
    });
  // The reader is the owner too: it flushes whatever the socket did not take, until all is in.
  std::vector<std::byte> got;
  std::size_t expected = 0;
  for (std::size_t t = 0; t < threads; ++t)
    for (std::size_t i = 0; i < frames; ++i) expected += frame(t, i).size();
  while (got.size() < expected && !failed) {
    if (writer.flush() == frame_writer::status::broken) failed = true;
    pollfd p{pair.reader_end.get(), POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const auto part = pair.drain(1u << 20);
    got.insert(got.end(), part.begin(), part.end());
  }
  for (auto& w : writers) w.join();
  REQUIRE_FALSE(failed);
  REQUIRE(got.size() == expected);
  std::vector<std::size_t> next(threads, 0);
  for (std::size_t at = 0; at < got.size();) {
    std::size_t size = 0;
    for (std::size_t j = 0; j < 4; ++j) size |= std::to_integer<std::size_t>(got[at + j]) << (8 * j);
    const std::size_t t = std::to_integer<std::size_t>(got[at + 4]) | std::to_integer<std::size_t>(got[at + 5]) << 8;
    const std::size_t i = std::to_integer<std::size_t>(got[at + 6]) | std::to_integer<std::size_t>(got[at + 7]) << 8;
    REQUIRE(t < threads);
    REQUIRE(i == next[t]);  // whole, and in this thread's order
    const auto want = frame(t, i);
    REQUIRE(std::equal(want.begin(), want.end(), got.begin() + static_cast<std::ptrdiff_t>(at)));
    ++next[t];
    at += size;
  }
  CHECK(next == std::vector<std::size_t>(threads, frames));
}

namespace {

// A session whose first write waits until the test lets it go: the thread that calls it stays the
// writer's sender, with the lock let go, while another thread writes.
struct held_first_write : geerpc::net::stream_session {
  int fd;
  std::atomic<bool> in_write{false};
  std::atomic<bool> go{false};
  explicit held_first_write(int socket) : fd(socket) {}
  geerpc::net::io_result read(std::span<std::byte>) noexcept override {
    return {geerpc::net::io_status::would_block, 0};
  }
  geerpc::net::io_result write(std::span<const std::byte> data) noexcept override {
    in_write.store(true);
    in_write.notify_all();
    go.wait(false);
    const long n = ::send(fd, data.data(), data.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) return {geerpc::net::io_status::would_block, 0};
    return {geerpc::net::io_status::data, static_cast<std::size_t>(n)};
  }
  bool buffered() const noexcept override { return false; }
  short wants() const noexcept override { return 0; }
  void shutdown() noexcept override {}
};

// A stream over one end of a socket pair, through a held_first_write session, and the other end.
struct held_pair {
  held_first_write* held = nullptr;
  geerpc::net::stream out;
  geerpc::net::unique_fd in;
  held_pair() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
    auto session = std::make_unique<held_first_write>(fds[0]);
    held = session.get();
    out = geerpc::net::stream(geerpc::net::unique_fd(fds[0]), std::move(session));
    in = geerpc::net::unique_fd(fds[1]);
  }
};

}  // namespace

// Found in review: blocks counted whole against a small limit (or one of 64-128 KiB) left no room
// for a second frame while the first thread sent, and the connection was closed as over its limit.
TEST_CASE("a frame written while another thread sends waits behind it, whatever the limit", "[writer]") {
  const auto [limit, size] = GENERATE(table<std::size_t, std::size_t>(
      {{512, 100}, {1000, 200}, {64u << 10, 65500}, {96u << 10, 70000}, {16u << 20, (16u << 20) - 10000}}));
  CAPTURE(limit, size);
  held_pair pair;
  held_first_write& held = *pair.held;
  frame_writer writer(pair.out, limit);
  const auto first = bytes(100, 1);
  const auto second = bytes(size, 2);
  std::thread sender([&] { writer.write(first); });
  held.in_write.wait(false);
  CHECK(writer.write(second) != frame_writer::status::broken);
  held.go.store(true);
  held.go.notify_all();
  sender.join();
}

// Found by the whole suite on one CPU: a graceful shutdown whose last request's reply was queued
// behind another thread's send (or held, and being flushed) closed the connection under that send,
// and the caller saw "connection is shut down" instead of its answer. A close must wait for the
// send in progress. The closer is given 100 ms to return too soon: on a loaded machine a
// regression may go unseen, but this test cannot fail where the writer is right.
TEST_CASE("a close waits for the send in progress, and what was queued behind it goes out", "[writer]") {
  held_pair pair;
  held_first_write& held = *pair.held;
  geerpc::net::stream& out = pair.out;
  const geerpc::net::unique_fd& in = pair.in;
  frame_writer writer(out, 1u << 20);
  const auto first = bytes(100, 1);
  const auto second = bytes(200, 2);
  std::thread sender([&] { writer.write(first); });
  held.in_write.wait(false);
  REQUIRE(writer.write(second) == frame_writer::status::done);  // queued: the sender takes it along
  std::promise<void> closed;
  auto closing = closed.get_future();
  std::thread closer([&] {
    writer.close();
    closed.set_value();
  });
  CHECK(closing.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout);
  held.go.store(true);
  held.go.notify_all();
  sender.join();
  closer.join();
  CHECK(writer.broken());  // nothing more is taken
  CHECK(writer.held() == 0);
  std::vector<std::byte> got(first.size() + second.size() + 1);
  CHECK(::recv(in.get(), got.data(), got.size(), MSG_DONTWAIT) == static_cast<long>(first.size() + second.size()));
  got.resize(first.size() + second.size());
  CHECK(got == joined({first, second}));
}

}  // namespace writer_test
