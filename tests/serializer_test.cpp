// The serializer customisation point (codec/type_kind.hpp) in its lower-level form, where a class
// writes and reads its own bytes through the codec's writer and reader as the built-in kinds do
// (codec/kind_codec.hpp): its bytes, its refusals, its memory charges, its minimum size in the
// count check and the fingerprint, a serializer for every instance of a class template, the check
// on the codec's invariants around it, and values nested 16 and 32 deep.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <geerpc/codec/binary.hpp>
#include <initializer_list>
#include <iterator>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "codec_bytes.hpp"

namespace {

// An address kept as 32 bits behind a constructor: 4 bytes on the wire, all-ones refused.
class ip4 {
 public:
  ip4() = default;
  explicit ip4(std::uint32_t bits) : bits_(bits) {}
  std::uint32_t bits() const { return bits_; }
  auto operator<=>(const ip4&) const = default;

 private:
  std::uint32_t bits_ = 0;
};

// A label whose decode allocates: it charges its buffer, as the codec's strings do.
class label {
 public:
  label() = default;
  explicit label(std::string text) : text_(std::move(text)) {}
  const std::string& text() const { return text_; }
  std::string& text() { return text_; }
  bool operator==(const label&) const = default;

 private:
  std::string text_;
};

// Each instance of a class template, through one partial specialization of the wire form.
template <class T>
class tagged {
 public:
  tagged() = default;
  tagged(char tag, T value) : tag_(tag), value_(std::move(value)) {}
  char tag() const { return tag_; }
  const T& value() const { return value_; }
  bool operator==(const tagged&) const = default;

 private:
  char tag_ = 0;
  T value_{};
};

// Encodes nothing, while claiming the default minimum of 1 byte: a broken serializer.
struct claims_too_much {};

}  // namespace

template <>
struct geerpc::codec::serializer<ip4> {
  static constexpr std::size_t min_encoded_size = 4;
  static void encode(writer& out, const ip4& a) { out.fixed(a.bits()); }
  static bool decode(reader& in, ip4& a) {
    std::uint32_t bits = 0;
    if (!in.fixed(bits)) return false;
    if (bits == 0xffffffffu) return false;  // refused: the reader fails with the serializer's reason
    a = ip4(bits);
    return true;
  }
};

template <>
struct geerpc::codec::serializer<label> {
  static void encode(writer& out, const label& l) {
    out.varint(l.text().size());
    out.raw(l.text().data(), l.text().size());
  }
  static bool decode(reader& in, label& l) {
    const std::byte* start = in.position();
    std::size_t size = 0;
    if (!in.count(size, 1) || !in.charge(size + 16, start)) return false;
    const std::byte* at = in.take(size);
    if (at == nullptr) return false;
    l.text().assign(reinterpret_cast<const char*>(at), size);
    return true;
  }
};

template <class T>
struct geerpc::codec::serializer<tagged<T>> {
  using wire_type = std::pair<char, T>;
  static wire_type to_wire(const tagged<T>& t) { return {t.tag(), t.value()}; }
  static tagged<T> from_wire(wire_type&& w) { return tagged<T>(w.first, std::move(w.second)); }
};

template <>
struct geerpc::codec::serializer<claims_too_much> {
  static void encode(writer&, const claims_too_much&) {}
  static bool decode(reader&, claims_too_much&) { return true; }
};

namespace {

using geerpc::binary_codec;
using geerpc::codec::decode_status;
using geerpc::codec::min_encoded_size;
using test::byte_vector;
using test::bytes_of;
using test::encode;

byte_vector little_endian_42() { return bytes_of({42, 0, 0, 0}); }

template <class T>
std::string decode_error(const byte_vector& in) {
  T value{};
  const decode_status status = binary_codec::decode(in, value);
  return status ? std::string("ok") : status.message();
}

TEST_CASE("a serializer of the lower-level form writes and reads its own bytes", "[codec][serializer]") {
  STATIC_REQUIRE(geerpc::codec::kind_of<ip4>() == geerpc::codec::type_kind::custom);
  STATIC_REQUIRE(geerpc::serializable<ip4>);
  STATIC_REQUIRE(geerpc::serializable<std::map<ip4, std::vector<ip4>>>);
  CHECK(encode(ip4(0x01020304)) == bytes_of({0x04, 0x03, 0x02, 0x01}));

  const std::map<ip4, std::vector<ip4>> routes = {{ip4(1), {ip4(2), ip4(3)}}, {ip4(4), {}}};
  std::map<ip4, std::vector<ip4>> back;
  REQUIRE(binary_codec::decode(encode(routes), back));
  CHECK(back == routes);
}

TEST_CASE("its decode refuses a value by returning false, and a failed read keeps the reader's reason",
          "[codec][serializer]") {
  CHECK(decode_error<ip4>(bytes_of({0xff, 0xff, 0xff, 0xff})) ==
        "value refused by its geerpc::codec::serializer at byte 0");
  CHECK(decode_error<std::pair<std::int8_t, ip4>>(bytes_of({7, 0xff, 0xff, 0xff, 0xff})) ==
        "value refused by its geerpc::codec::serializer at byte 1");
  CHECK(decode_error<ip4>(bytes_of({1, 2, 3})) == "truncated input at byte 0");
  CHECK(decode_error<ip4>(bytes_of({1, 2, 3, 4, 5})) == "trailing bytes after the value at byte 4");
}

TEST_CASE("its minimum size bounds a peer's counts: without one it is a byte", "[codec][serializer]") {
  STATIC_REQUIRE(min_encoded_size<ip4>() == 4);
  STATIC_REQUIRE(min_encoded_size<std::pair<ip4, std::int16_t>>() == 6);
  STATIC_REQUIRE(min_encoded_size<label>() == 1);
  // Two addresses claimed, 7 bytes sent: refused at the count, before anything is made.
  CHECK(decode_error<std::vector<ip4>>(bytes_of({2, 1, 2, 3, 4, 5, 6, 7})) ==
        "element count exceeds the remaining bytes at byte 0");
}

TEST_CASE("what its decode charges counts against the decode's memory limit", "[codec][serializer]") {
  const byte_vector encoded = encode(label(std::string(1000, 'x')));
  label back;
  CHECK(binary_codec::decode(encoded, back));
  CHECK(back.text() == std::string(1000, 'x'));
  const decode_status refused = binary_codec::decode(encoded, back, 500);
  REQUIRE_FALSE(refused);
  CHECK(refused.error == geerpc::codec::memory_limit_reason);
}

TEST_CASE("the fingerprint sees a class that writes its own bytes as opaque, of its minimum size",
          "[codec][serializer][fingerprint]") {
  using geerpc::codec::fingerprint;
  STATIC_REQUIRE(fingerprint<std::tuple<ip4>, void>() != fingerprint<std::tuple<std::uint32_t>, void>());
  STATIC_REQUIRE(fingerprint<std::tuple<ip4>, void>() != fingerprint<std::tuple<label>, void>());
  STATIC_REQUIRE(fingerprint<std::tuple<std::vector<ip4>>, void>() != fingerprint<std::tuple<ip4>, void>());
  // The wire form is its wire type, as before.
  STATIC_REQUIRE(fingerprint<std::tuple<tagged<int>>, void>() == fingerprint<std::tuple<std::pair<char, int>>, void>());
}

TEST_CASE("one partial specialization serves every instance of a class template", "[codec][serializer]") {
  CHECK(encode(tagged<std::int16_t>('a', 0x0102)) == bytes_of({'a', 0x02, 0x01}));
  const std::vector<tagged<std::string>> values = {{'x', "one"}, {'y', ""}};
  std::vector<tagged<std::string>> back;
  REQUIRE(binary_codec::decode(encode(values), back));
  CHECK(back == values);
}

#if GEERPC_ENABLE_ASSERTS
// Runs `body` in a forked child (stderr captured); true when the child aborted.
template <class Body>
bool aborts(Body body, std::string& stderr_text) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDERR_FILENO);
    ::signal(SIGABRT, SIG_DFL);  // not Catch's handler
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    body();
    ::_exit(0);
  }
  ::close(fds[1]);
  char buffer[512];
  for (ssize_t got = 0; (got = ::read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    stderr_text.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

TEST_CASE("a value encoded to fewer bytes than its minimum trips the codec's check", "[codec][serializer][assert]") {
  std::string text;
  CHECK(aborts([] { (void)encode(std::vector<claims_too_much>(3)); }, text));
  CHECK(text.find("a value encoded to fewer bytes than its minimum") != std::string::npos);
  // Its own minimum, honoured, passes.
  text.clear();
  CHECK_FALSE(aborts([] { (void)encode(std::vector<ip4>(3)); }, text));
}
#endif

// Recursion through class templates, and no iterator loops or emplace_back on vectors, keep the
// compile time of nested values down (kind_codec.hpp, sequences.hpp).
template <int Depth>
struct nest {
  using type = std::vector<typename nest<Depth - 1>::type>;
};
template <>
struct nest<0> {
  using type = int;
};

TEST_CASE("a vector nested 16 deep round trips", "[codec][serializer]") {
  using value_type = nest<16>::type;
  value_type value(2);  // two elements at each level down the first one's path, 42 at the bottom
  value_type back;
  {
    byte_vector path;
    for (int level = 0; level < 15; ++level) path.push_back(std::byte{2});
    path.push_back(std::byte{1});
    for (const std::byte b : little_endian_42()) path.push_back(b);
    for (int level = 0; level < 15; ++level) path.push_back(std::byte{0});
    REQUIRE(binary_codec::decode(path, back));
    CHECK(encode(back) == path);  // what was decoded encodes to the same bytes
  }
  CHECK(encode(value) == bytes_of({2, 0, 0}));
}

}  // namespace

// A raw pointer member travels when the pointer type has a serializer of its own: here a pointer
// into a fixed table, sent as its index.
struct colour {
  const char* name;
};
inline constexpr colour colours[] = {{"red"}, {"green"}, {"blue"}};

template <>
struct geerpc::codec::serializer<const colour*> {
  using wire_type = std::uint8_t;
  static wire_type to_wire(const colour* c) { return static_cast<wire_type>(c - colours); }
  static const colour* from_wire(wire_type&& i) {
    if (i >= std::size(colours)) throw std::out_of_range("no such colour");
    return &colours[i];
  }
};

namespace {
struct paint {
  const colour* shade = &colours[0];
  int coats = 0;
};
}  // namespace

TEST_CASE("a raw pointer member with a serializer of its own travels", "[codec][serializer]") {
  static_assert(geerpc::serializable<paint>);
  byte_vector out;
  binary_codec::encode(paint{&colours[2], 3}, out);
  paint back;
  REQUIRE(binary_codec::decode(out, back));
  CHECK(back.shade == &colours[2]);
  CHECK(back.coats == 3);
}
