// The write side of a connection: held frames wait for a flush or the next write, and go out in
// order with it; holding never grows past its bound.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <vector>

#include "catch.hpp"
#include "geerpc/net/frame_writer.hpp"
#include "geerpc/net/socket.hpp"

namespace {

struct socket_pair {
  geerpc::net::unique_fd writer_end, reader_end;
  socket_pair() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
    writer_end = geerpc::net::unique_fd(fds[0]);
    reader_end = geerpc::net::unique_fd(fds[1]);
  }
  // Everything the reader end holds now (the writer never blocks, so it is all there already).
  std::vector<std::byte> drain() {
    std::vector<std::byte> got;
    std::byte buffer[4096];
    for (;;) {
      const long n = ::recv(reader_end.get(), buffer, sizeof buffer, 0);
      if (n <= 0) return got;
      got.insert(got.end(), buffer, buffer + n);
    }
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
  frame_writer writer(pair.writer_end.get(), 1u << 20);
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
  frame_writer writer(pair.writer_end.get(), 1u << 20);
  const auto held = bytes(10, 1), written = bytes(5, 2);
  REQUIRE(writer.hold(held) == frame_writer::status::done);
  CHECK(writer.write(written) == frame_writer::status::done);
  CHECK(pair.drain() == joined({held, written}));
  CHECK_FALSE(writer.has_pending());
}

TEST_CASE("holding past the batch limit sends instead", "[writer]") {
  socket_pair pair;
  frame_writer writer(pair.writer_end.get(), 1u << 20);
  const auto most = bytes(frame_writer::batch_limit - 8, 1), more = bytes(16, 2);
  REQUIRE(writer.hold(most) == frame_writer::status::done);
  CHECK(pair.drain().empty());
  CHECK(writer.hold(more) == frame_writer::status::done);  // over the limit: all of it goes now
  CHECK(pair.drain() == joined({most, more}));
  CHECK_FALSE(writer.has_pending());
}

TEST_CASE("a frame held on a broken connection reports it", "[writer]") {
  socket_pair pair;
  frame_writer writer(pair.writer_end.get(), 1u << 20);
  pair.reader_end.reset();
  const auto frame = bytes(10, 1);
  REQUIRE(writer.hold(frame) == frame_writer::status::done);  // not sent yet: nothing known
  CHECK(writer.flush() == frame_writer::status::broken);
  CHECK(writer.hold(frame) == frame_writer::status::broken);
}
