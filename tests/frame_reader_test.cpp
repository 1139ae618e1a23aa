// The frame reader, which reassembles frames from whatever pieces recv() returns.
#include <cstddef>
#include <cstdint>
#include <geerpc/net/frame_reader.hpp>
#include <span>
#include <vector>

#include "catch.hpp"
#include "wire_bytes.hpp"

namespace frame_reader_test {

using namespace wire_bytes;

namespace {

// Feeds chunks to a reader and keeps copies of the frames it hands out.
struct collector {
  geerpc::net::frame_reader reader;
  std::vector<byte_vector> frames;

  explicit collector(std::uint32_t max_frame_size) : reader(max_frame_size) {}

  const char* feed(std::span<const std::byte> chunk) {
    return reader.feed(chunk, [this](std::span<const std::byte> frame) {
      frames.emplace_back(frame.begin(), frame.end());
      return true;
    });
  }
};

}  // namespace

TEST_CASE("frame_reader reassembles frames fed one byte at a time", "[frame_reader]") {
  const std::vector<byte_vector> frames = sample_frames();
  const byte_vector stream = joined(frames);
  collector c(geerpc::wire::default_max_frame_size);

  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < stream.size(); ++i) {
    REQUIRE(c.feed(std::span(stream).subspan(i, 1)) == nullptr);
    // Whatever is not yet a whole frame is held, and nothing more.
    std::size_t delivered = 0;
    for (std::size_t f = 0; f < c.frames.size(); ++f) delivered += frames[f].size();
    if (c.reader.buffered() != i + 1 - delivered) ++mismatches;
  }
  CHECK(mismatches == 0);
  CHECK(c.frames == frames);
  CHECK(c.reader.buffered() == 0);
}

TEST_CASE("frame_reader reassembles a stream cut at every pair of points", "[frame_reader]") {
  const std::vector<byte_vector> frames{
      make_frame({frame_kind::request, 0, 7, 0}, "S.m", body_of_size(5)),
      make_frame({frame_kind::cancel, 0, 7, 0}, "", {}),
      make_frame({frame_kind::response, 0, 7, 0}, "", body_of_size(11)),
  };
  const byte_vector stream = joined(frames);
  std::size_t wrong = 0;
  std::string first_wrong;
  for (std::size_t a = 0; a <= stream.size(); ++a) {
    for (std::size_t b = a; b <= stream.size(); ++b) {
      collector c(1024);
      const std::span<const std::byte> all(stream);
      const bool fed = c.feed(all.first(a)) == nullptr && c.feed(all.subspan(a, b - a)) == nullptr &&
                       c.feed(all.subspan(b)) == nullptr;
      if ((!fed || c.frames != frames || c.reader.buffered() != 0) && wrong++ == 0)
        first_wrong = "cut at " + std::to_string(a) + " and " + std::to_string(b);
    }
  }
  INFO(first_wrong);
  CHECK(wrong == 0);
}

TEST_CASE("frame_reader hands out many frames from one buffer without copying them", "[frame_reader]") {
  std::vector<byte_vector> frames;
  for (std::uint64_t seq = 0; seq < 1000; ++seq)
    frames.push_back(make_frame({frame_kind::response, 0, seq, 0}, "", body_of_size(seq % 50)));
  const byte_vector stream = joined(frames);

  geerpc::net::frame_reader reader(geerpc::wire::default_max_frame_size);
  std::vector<byte_vector> seen;
  std::size_t outside = 0;
  const char* error = reader.feed(stream, [&](std::span<const std::byte> frame) {
    if (frame.data() < stream.data() || frame.data() + frame.size() > stream.data() + stream.size()) ++outside;
    seen.emplace_back(frame.begin(), frame.end());
    return true;
  });
  CHECK(error == nullptr);
  CHECK(outside == 0);
  CHECK(seen == frames);
  CHECK(reader.buffered() == 0);
}

TEST_CASE("frame_reader refuses a too-large length before buffering the frame", "[frame_reader]") {
  byte_vector huge(4 + 4096);
  write_le(huge, 0, 4, 1001);

  SECTION("the prefix and body arrive together") {
    collector c(1000);
    CHECK(outcome(c.feed(huge)) == "frame larger than the limit");
    CHECK(c.reader.buffered() == 0);
    CHECK(c.frames.empty());
  }
  SECTION("the prefix arrives in two pieces") {
    collector c(1000);
    CHECK(c.feed(std::span(huge).first(2)) == nullptr);
    CHECK(outcome(c.feed(std::span(huge).subspan(2))) == "frame larger than the limit");
    CHECK(c.reader.buffered() <= 4);  // at most the prefix, never the claimed body
  }
  SECTION("after a good frame in the same buffer") {
    byte_vector stream = make_frame({frame_kind::cancel, 0, 1, 0}, "", {});
    stream.insert(stream.end(), huge.begin(), huge.end());
    collector c(1000);
    CHECK(outcome(c.feed(stream)) == "frame larger than the limit");
    CHECK(c.frames.size() == 1);
  }
  SECTION("a length below the header size") {
    collector c(1000);
    CHECK(outcome(c.feed(bytes_of({19, 0, 0, 0}))) == "frame shorter than its header");
  }
  SECTION("the limit itself is accepted") {
    const byte_vector biggest = make_frame({frame_kind::response, 0, 1, 0}, "", body_of_size(1000 - 20));
    collector c(1000);
    CHECK(c.feed(biggest) == nullptr);
    CHECK(c.frames.size() == 1);
  }
}

TEST_CASE("frame_reader stops when the callback returns false", "[frame_reader]") {
  const std::vector<byte_vector> frames = sample_frames();
  const byte_vector stream = joined(frames);

  SECTION("frames straight from the caller's buffer") {
    geerpc::net::frame_reader reader(geerpc::wire::default_max_frame_size);
    std::size_t calls = 0;
    CHECK(reader.feed(stream, [&](std::span<const std::byte>) { return ++calls < 2; }) == nullptr);
    CHECK(calls == 2);
    CHECK(reader.buffered() == 0);  // the rest was dropped, not kept
  }
  SECTION("a frame completed from held bytes") {
    geerpc::net::frame_reader reader(geerpc::wire::default_max_frame_size);
    std::size_t calls = 0;
    const auto stop_at_once = [&](std::span<const std::byte>) {
      ++calls;
      return false;
    };
    CHECK(reader.feed(std::span(stream).first(5), stop_at_once) == nullptr);
    CHECK(calls == 0);
    CHECK(reader.buffered() == 5);
    CHECK(reader.feed(std::span(stream).subspan(5), stop_at_once) == nullptr);
    CHECK(calls == 1);
    CHECK(reader.buffered() == 0);
  }
}

TEST_CASE("frame_reader reports the bytes of an unfinished frame it holds", "[frame_reader]") {
  const byte_vector frame = make_frame({frame_kind::request, 0, 1, 0}, "A.b", body_of_size(100));
  collector c(geerpc::wire::default_max_frame_size);
  CHECK(c.reader.buffered() == 0);
  CHECK(c.feed(byte_vector{}) == nullptr);
  CHECK(c.reader.buffered() == 0);
  CHECK(c.feed(std::span(frame).first(3)) == nullptr);
  CHECK(c.reader.buffered() == 3);
  CHECK(c.feed(std::span(frame).subspan(3, 50)) == nullptr);
  CHECK(c.reader.buffered() == 53);
  CHECK(c.frames.empty());
  CHECK(c.feed(std::span(frame).subspan(53)) == nullptr);
  CHECK(c.reader.buffered() == 0);
  REQUIRE(c.frames.size() == 1);
  CHECK(c.frames[0] == frame);
}

}  // namespace frame_reader_test
