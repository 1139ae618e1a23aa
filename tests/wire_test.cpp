// The handshake and frame formats byte for byte, the checks that keep a malformed peer out, and the
// frame reader that reassembles frames from whatever pieces recv() returns.
#include <array>
#include <cstddef>
#include <cstdint>
#include <geerpc/net/frame_reader.hpp>
#include <geerpc/wire/frame.hpp>
#include <geerpc/wire/handshake.hpp>
#include <geerpc/wire/metadata.hpp>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "catch.hpp"

namespace wire_test {

namespace {

using byte_vector = std::vector<std::byte>;
using geerpc::wire::frame_header;
using geerpc::wire::frame_kind;
using geerpc::wire::frame_scan;
using geerpc::wire::frame_view;
using scan_state = geerpc::wire::frame_scan::state;

byte_vector bytes_of(std::initializer_list<int> values) {
  byte_vector out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

byte_vector slice(std::span<const std::byte> bytes, std::size_t at, std::size_t size) {
  const auto part = bytes.subspan(at, size);
  return byte_vector(part.begin(), part.end());
}

// Little-endian reads written independently of the library's byte_order.hpp.
std::uint64_t read_le(std::span<const std::byte> bytes, std::size_t at, std::size_t size) {
  std::uint64_t value = 0;
  for (std::size_t i = size; i > 0; --i) value = (value << 8) | static_cast<std::uint8_t>(bytes[at + i - 1]);
  return value;
}

void write_le(std::span<std::byte> bytes, std::size_t at, std::size_t size, std::uint64_t value) {
  for (std::size_t i = 0; i < size; ++i) bytes[at + i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
}

std::string text_of(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

byte_vector make_frame(const frame_header& header, std::string_view text, const byte_vector& body) {
  byte_vector out;
  const std::size_t start = geerpc::wire::begin_frame(out, header, text);
  out.insert(out.end(), body.begin(), body.end());
  geerpc::wire::finish_frame(out, start);
  return out;
}

byte_vector body_of_size(std::size_t size) {
  byte_vector body(size);
  for (std::size_t i = 0; i < size; ++i) body[i] = static_cast<std::byte>(i * 31 + 7);
  return body;
}

// A feed or parse result as text, so that a nullptr (success) compares instead of crashing.
std::string outcome(const char* error) { return error == nullptr ? std::string("ok") : std::string(error); }

std::string parse_error(std::span<const std::byte> frame) {
  frame_view view;
  const char* error = geerpc::wire::parse_frame(frame, view);
  return error == nullptr ? std::string("parsed") : std::string(error);
}

constexpr std::uint64_t seq_pattern = 0x0807060504030201;
constexpr std::uint64_t budget_pattern = 0x1817161514131211;

// The frames a connection carries, of several sizes, for the reassembly tests.
std::vector<byte_vector> sample_frames() {
  return {
      make_frame({frame_kind::request, 0, 1, 250000}, "Foo.Sum", body_of_size(8)),
      make_frame({frame_kind::cancel, 0, 1, 0}, "", {}),
      make_frame({frame_kind::response, 0, 1, 0}, "", body_of_size(300)),
      make_frame({frame_kind::response, 8, 2, 0}, "remote error: boom", {}),
  };
}

byte_vector joined(const std::vector<byte_vector>& frames) {
  byte_vector out;
  for (const auto& frame : frames) out.insert(out.end(), frame.begin(), frame.end());
  return out;
}

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

// ============================================================================ handshake

TEST_CASE("a hello is 20 bytes: magic, version, codec, flags, handle timeout, response size limit",
          "[wire][handshake]") {
  std::array<std::byte, geerpc::wire::hello_size> bytes{};
  geerpc::wire::encode_hello({1, 7, 0x0102030405060708, 0x0a0b0c0d}, bytes);
  CHECK(byte_vector(bytes.begin(), bytes.end()) ==
        bytes_of({0x5c, 0xef, 0x3b, 0x00,  // magic 0x3bef5c
                  0x01, 0x07,              // version, codec
                  0x00, 0x00,              // flags
                  0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x0d, 0x0c, 0x0b, 0x0a}));

  geerpc::wire::hello parsed{0, 0, 0, 0};
  REQUIRE(geerpc::wire::parse_hello(bytes, parsed) == nullptr);
  CHECK(parsed.version == 1);
  CHECK(parsed.codec_id == 7);
  CHECK(parsed.handle_timeout_us == 0x0102030405060708);
  CHECK(parsed.max_response_size == 0x0a0b0c0d);
}

TEST_CASE("a hello round trips, and its version and codec are left for the server to judge", "[wire][handshake]") {
  for (const geerpc::wire::hello original :
       {geerpc::wire::hello{geerpc::wire::protocol_version, 1, 0, 4096}, geerpc::wire::hello{99, 255, ~0ull, ~0u},
        geerpc::wire::hello{0, 0, 1, 0}}) {
    std::array<std::byte, geerpc::wire::hello_size> bytes{};
    geerpc::wire::encode_hello(original, bytes);
    geerpc::wire::hello parsed{42, 42, 42};
    REQUIRE(geerpc::wire::parse_hello(bytes, parsed) == nullptr);
    CHECK(parsed.version == original.version);
    CHECK(parsed.codec_id == original.codec_id);
    CHECK(parsed.handle_timeout_us == original.handle_timeout_us);
    CHECK(parsed.max_response_size == original.max_response_size);
  }
}

TEST_CASE("a hello with the wrong magic or unknown flags is refused", "[wire][handshake]") {
  std::array<std::byte, geerpc::wire::hello_size> good{};
  geerpc::wire::encode_hello({}, good);
  geerpc::wire::hello parsed;

  for (std::size_t at = 0; at < 4; ++at) {
    auto bad = good;
    bad[at] ^= std::byte{0x01};
    CHECK(outcome(geerpc::wire::parse_hello(bad, parsed)) == "invalid magic number");
  }
  // Not a geerpc peer at all: an HTTP request's first bytes.
  std::array<std::byte, geerpc::wire::hello_size> http{};
  const std::string_view get = "GET / HTTP/1.1\r\nHost: example\r\n\r\n";
  REQUIRE(get.size() >= http.size());
  for (std::size_t i = 0; i < http.size(); ++i) http[i] = static_cast<std::byte>(get[i]);
  CHECK(geerpc::wire::parse_hello(http, parsed) != nullptr);

  for (std::uint16_t flags : {0x0001, 0x0100, 0x8000, 0xffff}) {
    auto bad = good;
    write_le(bad, 6, 2, flags);
    CHECK(outcome(geerpc::wire::parse_hello(bad, parsed)) == "unknown handshake flags");
  }
}

TEST_CASE("an accepting hello reply is 12 bytes: magic, version, status 0, no reason, frame limit",
          "[wire][handshake]") {
  byte_vector out = bytes_of({0xaa});  // encoding appends
  geerpc::wire::encode_hello_reply({true, 0x00400000, ""}, out);
  CHECK(out == bytes_of({0xaa, 0x5c, 0xef, 0x3b, 0x00, geerpc::wire::protocol_version, 0x00, 0x00, 0x00, 0x00, 0x00,
                         0x40, 0x00}));

  geerpc::wire::hello_reply parsed{false, 0, "stale"};
  std::size_t reason_size = 99;
  REQUIRE(geerpc::wire::parse_hello_reply_header(std::span(out).subspan(1).first<12>(), parsed, reason_size) ==
          nullptr);
  CHECK(parsed.accepted);
  CHECK(parsed.max_frame_size == 0x00400000);
  CHECK(reason_size == 0);
}

TEST_CASE("a rejecting hello reply carries its reason after the header", "[wire][handshake]") {
  byte_vector out;
  geerpc::wire::encode_hello_reply({false, 0, "unsupported codec 9"}, out);
  REQUIRE(out.size() == geerpc::wire::hello_reply_header_size + 19);
  CHECK(static_cast<int>(out[5]) == 1);
  CHECK(read_le(out, 6, 2) == 19);
  CHECK(text_of(std::span(out).subspan(12)) == "unsupported codec 9");

  geerpc::wire::hello_reply parsed{true, 77, ""};
  std::size_t reason_size = 0;
  REQUIRE(geerpc::wire::parse_hello_reply_header(std::span(out).first<12>(), parsed, reason_size) == nullptr);
  CHECK_FALSE(parsed.accepted);
  CHECK(parsed.max_frame_size == 0);
  CHECK(reason_size == 19);
}

TEST_CASE("a reject reason is cut at 1024 bytes", "[wire][handshake]") {
  for (const std::size_t size : {std::size_t{1023}, std::size_t{1024}, std::size_t{1025}, std::size_t{5000}}) {
    CAPTURE(size);
    std::string reason(size, 'r');
    reason[0] = 'R';
    byte_vector out;
    geerpc::wire::encode_hello_reply({false, 0, reason}, out);
    const std::size_t kept = std::min<std::size_t>(size, geerpc::wire::max_reject_reason);
    REQUIRE(out.size() == geerpc::wire::hello_reply_header_size + kept);
    CHECK(read_le(out, 6, 2) == kept);
    CHECK(text_of(std::span(out).subspan(12)) == reason.substr(0, kept));

    geerpc::wire::hello_reply parsed;
    std::size_t reason_size = 0;
    CHECK(geerpc::wire::parse_hello_reply_header(std::span(out).first<12>(), parsed, reason_size) == nullptr);
    CHECK(reason_size == kept);
  }
}

TEST_CASE("a hello reply with the wrong magic, an unknown status or an overlong reason is refused",
          "[wire][handshake]") {
  byte_vector good;
  geerpc::wire::encode_hello_reply({false, 0, "no"}, good);
  const auto error_of = [](const byte_vector& bytes) {
    geerpc::wire::hello_reply parsed;
    std::size_t reason_size = 0;
    const char* error = geerpc::wire::parse_hello_reply_header(std::span(bytes).first<12>(), parsed, reason_size);
    return error == nullptr ? std::string("parsed") : std::string(error);
  };
  REQUIRE(error_of(good) == "parsed");

  byte_vector bad_magic = good;
  bad_magic[3] = std::byte{0x01};
  CHECK(error_of(bad_magic) == "invalid magic number in the handshake reply");

  for (int status : {2, 0x80, 0xff}) {
    byte_vector bad_status = good;
    bad_status[5] = static_cast<std::byte>(status);
    CHECK(error_of(bad_status) == "unknown handshake reply status");
  }
  for (std::uint64_t size : {1025u, 0xffffu}) {
    byte_vector long_reason = good;
    write_le(long_reason, 6, 2, size);
    CHECK(error_of(long_reason) == "handshake reject reason too long");
  }
  byte_vector longest = good;
  write_le(longest, 6, 2, 1024);
  CHECK(error_of(longest) == "parsed");  // the header alone is fine: the caller then reads 1024 bytes
}

// ============================================================================ frames

TEST_CASE("a request frame puts each header field at its documented offset", "[wire][frame]") {
  const byte_vector body = bytes_of({0xb0, 0xb1, 0xb2});
  const byte_vector frame = make_frame({frame_kind::request, 0, seq_pattern, budget_pattern}, "Foo.Sum", body);

  REQUIRE(frame.size() == geerpc::wire::frame_size(7, 3));
  REQUIRE(frame.size() == 24 + 7 + 3);
  CHECK(read_le(frame, 0, 4) == frame.size() - 4);  // the length counts everything after itself
  CHECK(static_cast<int>(frame[4]) == 1);
  CHECK(static_cast<int>(frame[5]) == 0);
  CHECK(read_le(frame, 6, 2) == 7);
  CHECK(slice(frame, 8, 8) == bytes_of({0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08}));
  CHECK(slice(frame, 16, 8) == bytes_of({0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18}));
  CHECK(text_of(slice(frame, 24, 7)) == "Foo.Sum");
  CHECK(slice(frame, 31, 3) == body);

  CHECK(geerpc::wire::offset::length == 0);
  CHECK(geerpc::wire::offset::kind == 4);
  CHECK(geerpc::wire::offset::status == 5);
  CHECK(geerpc::wire::offset::text_size == 6);
  CHECK(geerpc::wire::offset::seq == 8);
  CHECK(geerpc::wire::offset::budget == 16);
  CHECK(geerpc::wire::offset::text == 24);
}

TEST_CASE("request, response, error response and cancel frames round trip through scan and parse", "[wire][frame]") {
  struct sample {
    frame_header header;
    std::string text;
    byte_vector body;
  };
  const std::vector<sample> samples{
      {{frame_kind::request, 0, seq_pattern, budget_pattern}, "Foo.Sum", body_of_size(40)},
      {{frame_kind::request, 0, 0, 0}, "", {}},
      {{frame_kind::response, 0, ~0ull, 0}, "", body_of_size(1000)},
      {{frame_kind::response, 8, 5, 0}, "rpc server: boom", {}},
      {{frame_kind::cancel, 0, 12345, 0}, "", {}},
  };
  for (const sample& s : samples) {
    CAPTURE(static_cast<int>(s.header.kind), s.text);
    const byte_vector frame = make_frame(s.header, s.text, s.body);
    CHECK(static_cast<int>(frame[4]) == static_cast<int>(s.header.kind));
    CHECK(static_cast<int>(frame[5]) == s.header.status);

    const frame_scan scan = geerpc::wire::scan_frame(frame, geerpc::wire::default_max_frame_size);
    CHECK(scan.what == scan_state::complete);
    CHECK(scan.size == frame.size());

    frame_view view;
    REQUIRE(geerpc::wire::parse_frame(frame, view) == nullptr);
    CHECK(view.header.kind == s.header.kind);
    CHECK(view.header.status == s.header.status);
    CHECK(view.header.seq == s.header.seq);
    CHECK(view.header.budget_us == s.header.budget_us);
    CHECK(view.text == s.text);
    CHECK(byte_vector(view.body.begin(), view.body.end()) == s.body);
    // Views into the frame, not copies.
    CHECK(view.body.data() == frame.data() + 24 + s.text.size());
  }
}

TEST_CASE("begin_frame appends after what the buffer holds and finish_frame fills in that frame's length",
          "[wire][frame]") {
  byte_vector out = bytes_of({0xee, 0xee, 0xee});
  const std::size_t first = geerpc::wire::begin_frame(out, {frame_kind::request, 0, 1, 0}, "A.b");
  out.push_back(std::byte{0x42});
  geerpc::wire::finish_frame(out, first);
  const std::size_t second = geerpc::wire::begin_frame(out, {frame_kind::cancel, 0, 1, 0}, "");
  geerpc::wire::finish_frame(out, second);

  CHECK(first == 3);
  CHECK(second == 3 + 24 + 3 + 1);
  CHECK(read_le(out, first, 4) == 20 + 3 + 1);
  CHECK(read_le(out, second, 4) == 20);
  CHECK(out.size() == second + 24);
  CHECK(slice(out, 0, 3) == bytes_of({0xee, 0xee, 0xee}));  // untouched

  frame_view view;
  CHECK(geerpc::wire::parse_frame(std::span(out).subspan(first, second - first), view) == nullptr);
  CHECK(view.text == "A.b");
  CHECK(geerpc::wire::parse_frame(std::span(out).subspan(second), view) == nullptr);
  CHECK(view.header.kind == frame_kind::cancel);
}

TEST_CASE("a text longer than 65535 bytes is cut to fit its 16-bit size", "[wire][frame]") {
  const std::string text(70000, 't');
  const byte_vector frame = make_frame({frame_kind::response, 3, 1, 0}, text, {});
  CHECK(read_le(frame, 6, 2) == 0xffff);
  CHECK(frame.size() == geerpc::wire::frame_size(0xffff, 0));
  frame_view view;
  REQUIRE(geerpc::wire::parse_frame(frame, view) == nullptr);
  CHECK(view.text.size() == geerpc::wire::max_text_size);
}

TEST_CASE("a text is cut at a UTF-8 character boundary, never inside a character", "[wire][frame]") {
  using geerpc::wire::cut_text;
  // "é" is 2 bytes, "€" 3, "𝄞" 4: a cut inside any of them steps back to its first byte.
  const std::string text = "ab\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e";
  CHECK(cut_text(text, 100) == text);
  CHECK(cut_text(text, 3) == "ab");
  CHECK(cut_text(text, 4) == "ab\xc3\xa9");
  CHECK(cut_text(text, 5) == "ab\xc3\xa9");
  CHECK(cut_text(text, 6) == "ab\xc3\xa9");
  CHECK(cut_text(text, 7) == "ab\xc3\xa9\xe2\x82\xac");
  CHECK(cut_text(text, 10) == "ab\xc3\xa9\xe2\x82\xac");
  // Bytes that are not UTF-8 are cut where the limit falls, after at most 3 steps back.
  CHECK(cut_text(std::string(8, '\x80'), 6).size() == 3);
  // A frame's text of a 4-byte character straddling 65535 bytes keeps none of it.
  const std::string long_text = std::string(geerpc::wire::max_text_size - 2, 't') + "\xf0\x9d\x84\x9e";
  const byte_vector frame = make_frame({frame_kind::response, 3, 1, 0}, long_text, {});
  frame_view view;
  REQUIRE(geerpc::wire::parse_frame(frame, view) == nullptr);
  CHECK(view.text == std::string(geerpc::wire::max_text_size - 2, 't'));
}

TEST_CASE("scan_frame asks for more until the whole frame is there, then delimits it", "[wire][frame]") {
  const byte_vector frame = make_frame({frame_kind::request, 0, 1, 0}, "X.y", body_of_size(77));
  const std::uint32_t max = geerpc::wire::default_max_frame_size;

  for (std::size_t size = 0; size < 4; ++size) {
    const frame_scan scan = geerpc::wire::scan_frame(std::span(frame).first(size), max);
    CHECK(scan.what == scan_state::need_more);
    CHECK(scan.size == 4);  // first the length prefix
  }
  for (std::size_t size = 4; size < frame.size(); ++size) {
    const frame_scan scan = geerpc::wire::scan_frame(std::span(frame).first(size), max);
    CHECK(scan.what == scan_state::need_more);
    CHECK(scan.size == frame.size());  // then the whole frame the prefix announced
  }
  byte_vector two = frame;
  two.insert(two.end(), frame.begin(), frame.end());
  for (const std::size_t size : {frame.size(), frame.size() + 1, two.size()}) {
    const frame_scan scan = geerpc::wire::scan_frame(std::span(two).first(size), max);
    CHECK(scan.what == scan_state::complete);
    CHECK(scan.size == frame.size());  // only the first frame
  }
}

TEST_CASE("scan_frame judges the claimed length from the 4-byte prefix alone", "[wire][frame]") {
  const auto scan_prefix = [](std::uint32_t length, std::uint32_t max) {
    byte_vector prefix(4);
    write_le(prefix, 0, 4, length);
    return geerpc::wire::scan_frame(prefix, max);
  };
  CHECK(scan_prefix(1001, 1000).what == scan_state::too_large);
  CHECK(scan_prefix(0xffffffff, geerpc::wire::default_max_frame_size).what == scan_state::too_large);
  CHECK(scan_prefix(1000, 1000).what == scan_state::need_more);  // the limit itself is allowed
  CHECK(scan_prefix(1000, 1000).size == 1004);

  CHECK(scan_prefix(0, 1000).what == scan_state::too_small);
  CHECK(scan_prefix(19, 1000).what == scan_state::too_small);
  CHECK(scan_prefix(20, 1000).what == scan_state::need_more);  // a header and nothing else
  CHECK(scan_prefix(20, 1000).size == 24);

  byte_vector header_only(24);
  write_le(header_only, 0, 4, 20);
  CHECK(geerpc::wire::scan_frame(header_only, 1000).what == scan_state::complete);
}

TEST_CASE("parse_frame refuses malformed frames with a reason", "[wire][frame]") {
  const byte_vector request = make_frame({frame_kind::request, 0, 1, 100}, "Foo.Sum", body_of_size(4));
  const byte_vector response = make_frame({frame_kind::response, 0, 1, 0}, "", body_of_size(4));
  const byte_vector error = make_frame({frame_kind::response, 8, 1, 0}, "boom", {});
  const byte_vector cancel = make_frame({frame_kind::cancel, 0, 1, 0}, "", {});
  for (const byte_vector* good : {&request, &response, &error, &cancel}) REQUIRE(parse_error(*good) == "parsed");

  SECTION("unknown kind") {
    for (int kind : {0, 5, 0xff}) {
      byte_vector bad = request;
      bad[4] = static_cast<std::byte>(kind);
      CHECK(parse_error(bad) == "unknown frame kind");
    }
  }
  SECTION("text running past the end of the frame") {
    byte_vector bad = request;
    write_le(bad, 6, 2, 7 + 4 + 1);
    CHECK(parse_error(bad) == "text size exceeds the frame");
    write_le(bad, 6, 2, 0xffff);
    CHECK(parse_error(bad) == "text size exceeds the frame");
    write_le(bad, 6, 2, 7 + 4);  // the text may take the whole rest: no body
    CHECK(parse_error(bad) == "parsed");
  }
  SECTION("a request with unknown flags") {
    byte_vector bad = request;
    bad[5] = std::byte{8};
    CHECK(parse_error(bad) == "request with unknown flags");
    bad[5] = std::byte{0x81};
    CHECK(parse_error(bad) == "request with unknown flags");
  }
  SECTION("a request whose fingerprint flag promises more bytes than it has, or a zero fingerprint") {
    byte_vector bad =
        make_frame({frame_kind::request, geerpc::wire::request_flag::fingerprint, 1, 0}, "A.B", bytes_of({1, 2, 3}));
    CHECK(parse_error(bad) == "request fingerprint exceeds the frame");
    CHECK(parse_error(make_frame({frame_kind::request, geerpc::wire::request_flag::fingerprint, 1, 0}, "A.B",
                                 bytes_of({0, 0, 0, 0, 9}))) == "request with a zero fingerprint");
  }
  SECTION("a request's fingerprint is read from before its body") {
    const byte_vector frame = make_frame({frame_kind::request, geerpc::wire::request_flag::fingerprint, 1, 0}, "A.B",
                                         bytes_of({0x78, 0x56, 0x34, 0x12, 9, 8}));
    geerpc::wire::frame_view view;
    REQUIRE(geerpc::wire::parse_frame(frame, view) == nullptr);
    CHECK(view.fingerprint == 0x12345678u);
    CHECK(view.body.size() == 2);
    CHECK(view.body[0] == std::byte{9});
  }
  SECTION("a request whose metadata block does not fit in the frame") {
    using geerpc::wire::request_flag::metadata;
    CHECK(parse_error(make_frame({frame_kind::request, metadata, 1, 0}, "A.B", bytes_of({1, 0, 0}))) ==
          "request metadata exceeds the frame");
    CHECK(parse_error(make_frame({frame_kind::request, metadata, 1, 0}, "A.B", bytes_of({3, 0, 0, 0, 1, 2}))) ==
          "request metadata exceeds the frame");
    CHECK(parse_error(make_frame({frame_kind::request, metadata, 1, 0}, "A.B",
                                 bytes_of({0xff, 0xff, 0xff, 0xff, 1}))) == "request metadata exceeds the frame");
    CHECK(parse_error(make_frame({frame_kind::request, metadata, 1, 0}, "A.B", bytes_of({2, 0, 0, 0, 1, 2}))) ==
          "parsed");  // exactly the rest: an empty body
  }
  SECTION("a request's metadata block sits after its fingerprint and before its body") {
    const byte_vector frame = make_frame(
        {frame_kind::request, geerpc::wire::request_flag::fingerprint | geerpc::wire::request_flag::metadata, 1, 0},
        "A.B", bytes_of({0x78, 0x56, 0x34, 0x12, 6, 0, 0, 0, 1, 1, 'k', 1, 0, 'v', 9, 8}));
    geerpc::wire::frame_view view;
    REQUIRE(geerpc::wire::parse_frame(frame, view) == nullptr);
    CHECK(view.fingerprint == 0x12345678u);
    CHECK(view.has_metadata);
    CHECK(view.metadata.size() == 6);
    CHECK(geerpc::wire::check_metadata(view.metadata) == nullptr);
    CHECK(geerpc::wire::find_metadata(view.metadata, "k") == "v");
    CHECK(geerpc::wire::find_metadata(view.metadata, "K") == std::nullopt);  // keys are case-sensitive
    CHECK(view.body.size() == 2);
    CHECK(view.body[0] == std::byte{9});
  }
  SECTION("a metadata block written by append_metadata reads back, in order, the first of a repeated key winning") {
    std::vector<std::byte> out;
    const std::vector<std::pair<std::string, std::string>> entries = {
        {"a", "1"}, {"trace", std::string(300, 'x')}, {"a", "2"}, {"empty", ""}};
    geerpc::wire::append_metadata(out, entries);
    CHECK(out.size() == geerpc::wire::metadata_wire_size(entries));
    const auto block = std::span<const std::byte>(out).subspan(4);
    CHECK(geerpc::detail::load_le<std::uint32_t>(out.data()) == block.size());
    REQUIRE(geerpc::wire::check_metadata(block) == nullptr);
    std::vector<std::pair<std::string, std::string>> read;
    geerpc::wire::for_each_metadata(block, [&](std::string_view k, std::string_view v) {
      read.emplace_back(k, v);
      return true;
    });
    CHECK(read == entries);
    CHECK(geerpc::wire::find_metadata(block, "a") == "1");
    CHECK(geerpc::wire::find_metadata(block, "empty") == "");
  }
  SECTION("a goaway frame carries a text and nothing else") {
    const byte_vector good = make_frame({frame_kind::goaway, 0, 0, 0}, "rpc server: shutting down", {});
    geerpc::wire::frame_view view;
    REQUIRE(geerpc::wire::parse_frame(good, view) == nullptr);
    CHECK(view.header.kind == frame_kind::goaway);
    CHECK(view.text == "rpc server: shutting down");
    CHECK(parse_error(make_frame({frame_kind::goaway, 0, 0, 0}, "", {})) == "parsed");
    for (const byte_vector& bad :
         {make_frame({frame_kind::goaway, 1, 0, 0}, "x", {}), make_frame({frame_kind::goaway, 0, 1, 0}, "x", {}),
          make_frame({frame_kind::goaway, 0, 0, 1}, "x", {}),
          make_frame({frame_kind::goaway, 0, 0, 0}, "x", bytes_of({1}))})
      CHECK(parse_error(bad) == "goaway frame with a payload");
    byte_vector unknown = good;
    unknown[4] = std::byte{5};
    CHECK(parse_error(unknown) == "unknown frame kind");
  }
  SECTION("a response with a deadline budget") {
    byte_vector bad = response;
    write_le(bad, 16, 8, 1);
    CHECK(parse_error(bad) == "response with a deadline budget");
  }
  SECTION("an error response with a body") {
    CHECK(parse_error(make_frame({frame_kind::response, 8, 1, 0}, "boom", bytes_of({0x00}))) ==
          "error response with a body");
  }
  SECTION("a cancel with anything in it") {
    byte_vector with_status = cancel;
    with_status[5] = std::byte{3};
    byte_vector with_budget = cancel;
    write_le(with_budget, 16, 8, 1ull << 63);
    for (const byte_vector& bad : {with_status, with_budget, make_frame({frame_kind::cancel, 0, 1, 0}, "x", {}),
                                   make_frame({frame_kind::cancel, 0, 1, 0}, "", bytes_of({0x00}))})
      CHECK(parse_error(bad) == "cancel frame with a payload");
  }
  SECTION("a length that does not match the frame") {
    byte_vector longer = request;
    longer.push_back(std::byte{0});  // one byte more than the prefix says
    CHECK(parse_error(longer) == "frame length mismatch");
    CHECK(parse_error(std::span(request).first(request.size() - 1)) == "frame length mismatch");
    byte_vector lying = request;
    write_le(lying, 0, 4, 20);
    CHECK(parse_error(lying) == "frame length mismatch");
  }
  SECTION("fewer bytes than a header") {
    CHECK(parse_error(std::span(cancel).first(23)) == "frame shorter than its header");
    CHECK(parse_error(byte_vector{}) == "frame shorter than its header");
  }
}

// ============================================================================ frame_reader

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

}  // namespace wire_test
