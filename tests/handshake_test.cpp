// The handshake's formats byte for byte: the hello and its reply, and the checks that refuse a
// malformed or foreign one.
#include <array>
#include <cstddef>
#include <cstdint>
#include <geerpc/wire/handshake.hpp>
#include <string>
#include <vector>

#include "catch.hpp"
#include "wire_bytes.hpp"

namespace handshake_test {

using namespace wire_bytes;

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

}  // namespace handshake_test
