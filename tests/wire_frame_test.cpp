// The frame format byte for byte: each header field at its offset, round trips, texts cut to fit,
// and the checks that keep a malformed frame out.
#include <array>
#include <cstddef>
#include <cstdint>
#include <geerpc/wire/frame.hpp>
#include <geerpc/wire/metadata.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "wire_bytes.hpp"

namespace wire_frame_test {

using namespace wire_bytes;

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

}  // namespace wire_frame_test
