// The decode budget: decoding charges what a value costs in memory, not only what it takes on the
// wire, against a limit proportional to the input, so that no body can make a server (or a client)
// allocate much more than the body's own size. Each hostile shape below once decoded, allocating
// tens or hundreds of times its size; each now fails before allocating, and honest values still
// decode.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <geerpc/codec/binary.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "catch.hpp"
#include "codec_bytes.hpp"
#include "support.hpp"

namespace decode_budget_test {

using namespace std::chrono_literals;

namespace {

using byte_vector = std::vector<std::byte>;
using geerpc::binary_codec;
using geerpc::codec::decode_status;

constexpr std::string_view budget_reason = "decoded value would need more memory than its limit";

// ---- building hostile bodies by hand: a count, then the cheapest encoding of each element

void put_varint(byte_vector& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<std::byte>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<std::byte>(value));
}

std::size_t varint_size(std::uint64_t value) {
  byte_vector out;
  put_varint(out, value);
  return out.size();
}

// A count of `n`, then `n` zero bytes: n empty strings, vectors or optionals.
byte_vector empties(std::size_t n) {
  byte_vector out;
  put_varint(out, n);
  out.resize(out.size() + n, std::byte{0});
  return out;
}

// The largest count of empties whose body fits in `size` bytes.
std::size_t empties_in(std::size_t size) {
  std::size_t n = size - 1;
  while (varint_size(n) + n > size) --n;
  return n;
}

// A map of `n` entries: distinct little-endian u16 keys 0, 1, 2, ..., each followed by `value`.
byte_vector u16_keyed(std::size_t n, const byte_vector& value) {
  byte_vector out;
  put_varint(out, n);
  for (std::size_t key = 0; key < n; ++key) {
    out.push_back(static_cast<std::byte>(key & 0xff));
    out.push_back(static_cast<std::byte>(key >> 8));
    out.insert(out.end(), value.begin(), value.end());
  }
  return out;
}

template <class T>
using counted_vector = std::vector<T, test::counting_allocator<T>>;
using counted_string = test::counted_string;
using test::allocation_log;
using test::counting_allocator;

using page = std::array<char, 4096>;
using pages = std::vector<std::optional<page>>;  // the shape that made a server allocate ~480 MiB

std::string reason(const decode_status& status) { return status ? std::string("decoded") : std::string(status.error); }

template <class T>
std::string reason_of(const byte_vector& body) {
  T value{};
  const decode_status status = binary_codec::decode(body, value);
  return status ? std::string("decoded") : std::string(status.error);
}

// Runs `work` in a forked child and returns by how much the child's peak resident memory grew while
// it ran, in KiB (-1 if the child failed), and what `work` returned. A child, because peak RSS only
// ever grows: measured in this process, an earlier test's peak would hide this one's.
struct child_report {
  long rss_growth_kib = -1;
  bool result = false;
};
child_report in_child(const std::function<bool()>& work) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    rusage before{}, after{};
    ::getrusage(RUSAGE_SELF, &before);
    const bool result = work();
    ::getrusage(RUSAGE_SELF, &after);
    const long report[2] = {after.ru_maxrss - before.ru_maxrss, result ? 1 : 0};
    const bool written = ::write(fds[1], report, sizeof report) == static_cast<ssize_t>(sizeof report);
    ::_exit(written ? 0 : 1);
  }
  ::close(fds[1]);
  long report[2] = {-1, 0};
  const bool got = ::read(fds[0], report, sizeof report) == static_cast<ssize_t>(sizeof report);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  return {report[0], report[1] == 1};
}

}  // namespace

// ============================================================================ the codec alone

TEST_CASE("decode budget: 64 KiB of empty optional<array<char, 4096>> is refused before allocating",
          "[codec][budget]") {
  const byte_vector body = empties(empties_in(64u << 10));
  REQUIRE(body.size() == 64u << 10);

  allocation_log::reset();
  counted_vector<std::optional<page>> value;
  const decode_status status = binary_codec::decode(body, value);
  INFO("allocated " << allocation_log::bytes << " bytes for a " << body.size() << "-byte body");
  CHECK_FALSE(status);
  CHECK(reason(status) == budget_reason);
  CHECK(status.offset == 0);  // the count that asked for the memory
  CHECK(allocation_log::bytes == 0);
}

TEST_CASE("decode budget: the same body into a plain std::vector leaves peak memory where it was", "[codec][budget]") {
  const byte_vector body = empties(empties_in(64u << 10));
  const child_report report = in_child([&] {
    pages value;
    return static_cast<bool>(binary_codec::decode(body, value));
  });
  REQUIRE(report.rss_growth_kib >= 0);
  CHECK_FALSE(report.result);                 // refused
  CHECK(report.rss_growth_kib < 16L * 1024);  // it grew by about 480 MiB; the limit is about 1 MiB
}

TEST_CASE("decode budget: many empty inner vectors are refused", "[codec][budget]") {
  const byte_vector body = empties(64u << 10);
  allocation_log::reset();
  counted_vector<counted_vector<int>> value;
  const decode_status status = binary_codec::decode(body, value);
  INFO("allocated " << allocation_log::bytes << " bytes for a " << body.size() << "-byte body");
  CHECK(reason(status) == budget_reason);
  CHECK(allocation_log::bytes == 0);
  CHECK(reason_of<std::vector<std::vector<int>>>(body) == budget_reason);
}

TEST_CASE("decode budget: many empty strings are refused", "[codec][budget]") {
  const byte_vector body = empties(64u << 10);
  allocation_log::reset();
  counted_vector<counted_string> value;
  const decode_status status = binary_codec::decode(body, value);
  INFO("allocated " << allocation_log::bytes << " bytes for a " << body.size() << "-byte body");
  CHECK(reason(status) == budget_reason);
  CHECK(allocation_log::bytes == 0);
  CHECK(reason_of<std::vector<std::string>>(body) == budget_reason);
}

TEST_CASE("decode budget: maps of many small entries are charged per node", "[codec][budget]") {
  // 65536 entries of 3 bytes each (a u16 key, an empty string): each costs a tree or hash node
  // holding a 2-byte key and a 32-byte string, over 20 times its encoding.
  const byte_vector body = u16_keyed(1u << 16, {std::byte{0}});
  CHECK(reason_of<std::map<std::uint16_t, std::string>>(body) == budget_reason);
  CHECK(reason_of<std::unordered_map<std::uint16_t, std::string>>(body) == budget_reason);
  CHECK(reason_of<std::map<std::uint16_t, std::vector<std::uint64_t>>>(body) == budget_reason);

  using counted_map = std::map<std::uint16_t, counted_string, std::less<>,
                               counting_allocator<std::pair<const std::uint16_t, counted_string>>>;
  allocation_log::reset();
  counted_map value;
  CHECK_FALSE(binary_codec::decode(body, value));
  CHECK(allocation_log::bytes == 0);
}

TEST_CASE("decode budget: nested optionals in a vector cost their whole size", "[codec][budget]") {
  const byte_vector body = empties(64u << 10);
  CHECK(reason_of<std::vector<std::optional<std::optional<std::array<char, 1024>>>>>(body) == budget_reason);
  CHECK(reason_of<std::vector<std::optional<std::array<std::optional<std::uint64_t>, 64>>>>(body) == budget_reason);
}

TEST_CASE("decode budget: the limit is 16 bytes per input byte plus 64 KiB, and a value within it decodes",
          "[codec][budget]") {
  using geerpc::codec::default_memory_limit;
  STATIC_REQUIRE(geerpc::codec::memory_per_input_byte == 16);
  STATIC_REQUIRE(geerpc::codec::memory_base == 65536);
  STATIC_REQUIRE(default_memory_limit(0) == 65536);
  STATIC_REQUIRE(default_memory_limit(1000) == 16000 + 65536);
  STATIC_REQUIRE(default_memory_limit(std::size_t(-1)) == std::size_t(-1));  // saturates

  // The most empty inner vectors whose buffer the limit pays for decode; one more does not.
  constexpr std::size_t element = sizeof(std::vector<int>);
  std::size_t most = 1;
  while ((most + 1) * element <= default_memory_limit(varint_size(most + 1) + most + 1)) ++most;
  CHECK(reason_of<std::vector<std::vector<int>>>(empties(most)) == "decoded");
  CHECK(reason_of<std::vector<std::vector<int>>>(empties(most + 1)) == budget_reason);

  // The same for pages: the 64 KiB lets a few through, whatever the shape.
  std::size_t pages_most = 1;
  while ((pages_most + 1) * sizeof(std::optional<page>) <= default_memory_limit(pages_most + 2)) ++pages_most;
  CHECK(pages_most >= 15);
  CHECK(reason_of<pages>(empties(pages_most)) == "decoded");
  CHECK(reason_of<pages>(empties(pages_most + 1)) == budget_reason);

  // The message gives the numbers; the offset names the count that asked.
  std::vector<std::vector<int>> value;
  const byte_vector body = empties(1u << 16);
  CHECK(binary_codec::decode(body, value).message() ==
        "decoded value would need more than 1114160 bytes of memory (limit: 16 x 65539 input bytes + 65536) at "
        "byte 0");
  std::pair<std::uint8_t, std::vector<std::vector<int>>> nested;
  const byte_vector nested_body = [&] {
    byte_vector out{std::byte{7}};
    out.insert(out.end(), body.begin(), body.end());
    return out;
  }();
  const decode_status status = binary_codec::decode(nested_body, nested);
  CHECK(reason(status) == budget_reason);
  CHECK(status.offset == 1);
}

TEST_CASE("decode budget: a caller may set its own limit", "[codec][budget]") {
  std::vector<std::uint32_t> numbers(300, 7);
  byte_vector body;
  binary_codec::encode(numbers, body);
  std::vector<std::uint32_t> value;
  CHECK(binary_codec::decode(body, value, 1199).message() ==
        "decoded value would need more than 1199 bytes of memory (limit set by the caller) at byte 0");
  CHECK(binary_codec::decode(body, value, 1200));  // 300 x 4 bytes, exactly
  CHECK(value == numbers);

  // What allocates nothing needs no budget: scalars, structs of them, a short string kept inline,
  // empty containers, and a vector that already has the room.
  CHECK(binary_codec::decode(test::encode(test::Args{1, 2}), *std::make_unique<test::Args>(), 0));
  std::string text;
  CHECK(binary_codec::decode(test::encode(std::string("short")), text, 0));
  CHECK(text == "short");
  CHECK_FALSE(binary_codec::decode(test::encode(std::string(100, 'x')), text, 0));
  std::map<std::string, std::vector<int>> empty_map;
  CHECK(binary_codec::decode(test::encode(empty_map), empty_map, 0));
  CHECK(binary_codec::decode(body, value, 0));  // into the 300 it already holds
}

TEST_CASE("decode budget: what the decoder charges covers what it allocates", "[codec][budget]") {
  // Decodes `value` through counting allocators and compares the bytes they were asked for with
  // what the decoder charged.
  const auto check = [](const auto& original, auto decoded) {
    byte_vector body;
    binary_codec::encode(original, body);
    geerpc::codec::reader in(body, std::size_t(-1));
    allocation_log::reset();
    REQUIRE(geerpc::codec::decode_value(in, decoded));
    const std::size_t charged = std::size_t(-1) - in.memory_left();
    INFO("allocated " << allocation_log::bytes << ", charged " << charged);
    CHECK(allocation_log::bytes > 0);
    CHECK(allocation_log::bytes <= charged);
    CHECK(charged <= 2 * allocation_log::bytes + 4096);  // and not wildly more
  };

  counted_vector<counted_string> words;
  for (int i = 0; i < 1000; ++i) words.emplace_back(static_cast<std::size_t>(i % 40), 'w');
  check(words, counted_vector<counted_string>{});

  counted_vector<counted_vector<std::uint16_t>> rows;
  for (int i = 0; i < 300; ++i) rows.emplace_back(static_cast<std::size_t>(i % 7), std::uint16_t{1});
  check(rows, counted_vector<counted_vector<std::uint16_t>>{});

  std::vector<bool, counting_allocator<bool>> bits(1000, true);
  check(bits, std::vector<bool, counting_allocator<bool>>{});

  using tree_map = std::map<counted_string, counted_vector<int>, std::less<>,
                            counting_allocator<std::pair<const counted_string, counted_vector<int>>>>;
  tree_map tree;
  for (int i = 0; i < 500; ++i) {
    counted_string key(static_cast<std::size_t>(i % 30), 'k');
    const std::string number = std::to_string(i);
    key.append(number.data(), number.size());
    tree.emplace(std::move(key), counted_vector<int>(static_cast<std::size_t>(i % 3), i));
  }
  check(tree, tree_map{});

  using hash_map = std::unordered_map<std::uint32_t, counted_string, std::hash<std::uint32_t>, std::equal_to<>,
                                      counting_allocator<std::pair<const std::uint32_t, counted_string>>>;
  hash_map hashed;
  for (std::uint32_t i = 0; i < 1000; ++i) hashed.emplace(i * 2654435761u, counted_string(i % 50, 'v'));
  check(hashed, hash_map{});

  // Into a string that already holds a heap buffer smaller than the new value (libstdc++ would
  // grow it to twice its capacity, more than was charged, were it not released first).
  check(counted_string(100, 'n'), counted_string(60, 'o'));
}

namespace {
struct product {
  std::uint32_t id;
  std::string name;
  std::vector<std::string> tags;
  std::optional<double> price;
  std::map<std::string, std::int32_t> stock;
  bool operator==(const product&) const = default;
};
struct catalog {
  std::string title;
  std::vector<product> products;
  std::unordered_map<std::uint32_t, std::string> notes;
  std::vector<double> history;
  bool operator==(const catalog&) const = default;
};
}  // namespace

TEST_CASE("decode budget: a large, realistic value decodes within the default limit", "[codec][budget]") {
  catalog c;
  c.title = "spring catalogue";
  const std::array<const char*, 5> tags{"red", "xl", "sale", "new", "eco"};
  for (std::uint32_t i = 0; i < 20000; ++i) {
    product p{i, "product-" + std::to_string(i), {tags[i % 5], tags[(i + 2) % 5]}, std::nullopt, {}};
    if (i % 3 != 0) p.price = 9.5 + i;
    p.stock = {{"paris", static_cast<std::int32_t>(i % 11)}, {"lyon", 0}};
    c.products.push_back(std::move(p));
    if (i % 10 == 0) c.notes.emplace(i, "restock " + std::to_string(i));
  }
  c.history.assign(50000, 1.25);
  byte_vector body;
  binary_codec::encode(c, body);
  catalog decoded;
  const decode_status status = binary_codec::decode(body, decoded);
  INFO(status.message() << " (" << body.size() << " bytes)");
  REQUIRE(status);
  CHECK(decoded == c);
}

// ============================================================================ over the wire

namespace {

struct slots {
  std::uint64_t count(const pages& p) { return p.size(); }
  pages get(const test::Args&) { return {}; }  // the fake server below answers for it
  int sum(const test::Args& a) { return a.num1 + a.num2; }
};
using slots_api = geerpc::service<"Slots", geerpc::method<"Count", &slots::count>, geerpc::method<"Get", &slots::get>,
                                  geerpc::method<"Sum", &slots::sum>>;

// A request frame with a body given as bytes.
byte_vector request_with_body(std::uint64_t seq, std::string_view method, const byte_vector& body) {
  byte_vector out;
  const std::size_t start = geerpc::wire::begin_frame(out, {geerpc::wire::frame_kind::request, 0, seq, 0}, method);
  out.insert(out.end(), body.begin(), body.end());
  geerpc::wire::finish_frame(out, start);
  return out;
}

byte_vector response_with_body(std::uint64_t seq, const byte_vector& body) {
  byte_vector out;
  const std::size_t start = geerpc::wire::begin_frame(out, {geerpc::wire::frame_kind::response, 0, seq, 0}, "");
  out.insert(out.end(), body.begin(), body.end());
  geerpc::wire::finish_frame(out, start);
  return out;
}

}  // namespace

TEMPLATE_TEST_CASE("decode budget: a 64 KiB body that would cost ~480 MiB is answered bad_request, and serving goes on",
                   "[budget][hostile]", GEERPC_TRANSPORTS) {
  slots impl;
  geerpc::basic_server<TestType> server;
  server.template add<slots_api>(impl);
  const std::string address = server.listen("127.0.0.1:0");

  test::raw_peer peer(address);
  peer.send_hello();
  auto hello = peer.read_hello_reply();
  REQUIRE(hello);
  REQUIRE(hello->accepted);

  peer.send(request_with_body(1, "Slots.Count", empties(empties_in(64u << 10))));
  auto answer = peer.read_frame();
  REQUIRE(answer);
  CHECK(answer->header.seq == 1);
  CHECK(answer->header.status == static_cast<std::uint8_t>(geerpc::errc::bad_request));
  CHECK(answer->text.rfind("rpc server: bad request body: decoded value would need more than ", 0) == 0);
  CHECK(answer->body.empty());

  // The same connection goes on serving, and so does the server for others.
  peer.send(test::request_frame(2, "Slots.Sum", test::Args{2, 3}));
  auto fine = peer.read_frame();
  REQUIRE(fine);
  CHECK(fine->header.status == 0);
  CHECK(test::decode_body<int>(fine->body) == 5);

  auto client = geerpc::dial<TestType>(address, {.timeouts = {.connect = 2s}});
  CHECK(client.template call<int>(geerpc::with_timeout(2s), "Slots.Sum", test::Args{20, 22}) == 42);
  // An honest value of the same type still decodes.
  pages honest(3);
  honest[1].emplace().fill('x');
  CHECK(client.template call<std::uint64_t>(geerpc::with_timeout(2s), "Slots.Count", honest) == 3);
}

TEMPLATE_TEST_CASE("decode budget: a client refuses a reply that would cost ~480 MiB with bad_response",
                   "[budget][hostile]", GEERPC_TRANSPORTS) {
  test::listener listener;
  std::optional<test::raw_peer> peer;
  test::event answered;
  std::jthread fake_server([&] {
    peer.emplace(test::raw_peer::accepted, ::accept(listener.fd(), nullptr, nullptr));
    if (!peer->read(geerpc::wire::hello_size)) return;
    byte_vector reply;
    geerpc::wire::encode_hello_reply({true, geerpc::wire::default_max_frame_size, {}}, reply);
    peer->send(reply);
    auto request = peer->read_frame();
    if (!request) return;
    peer->send(response_with_body(request->header.seq, empties(empties_in(64u << 10))));
    // Then an honest reply to the next call: the connection stays usable.
    request = peer->read_frame();
    if (!request) return;
    pages honest(2);
    honest[0].emplace().fill('y');
    peer->send(test::response_frame(request->header.seq, honest));
    answered.set();
  });

  auto client = geerpc::dial<TestType>(listener.address(), {.timeouts = {.connect = 5s}});
  auto r = client.template try_call<pages>(geerpc::with_timeout(5s), "Slots.Get", test::Args{});
  REQUIRE_FALSE(r);
  CHECK(r.code() == geerpc::errc::bad_response);
  CHECK(r.message().rfind("rpc client: bad response body: decoded value would need more than ", 0) == 0);

  auto again = client.template try_call<pages>(geerpc::with_timeout(5s), "Slots.Get", test::Args{});
  REQUIRE(again);
  CHECK(again->size() == 2);
  CHECK(answered.wait(5s));
}

}  // namespace decode_budget_test
