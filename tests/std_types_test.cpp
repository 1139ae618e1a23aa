// The standard types beyond the first few (durations, system_clock time points, variants, sets,
// deques, lists, unique_ptr, bitsets), views as handler parameters, and the serializer
// customization point: their bytes, round trips, hostile encodings and decode budget charges.
#include <algorithm>
#include <array>
#include <bitset>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <geerpc/codec/binary.hpp>
#include <list>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "catch.hpp"
#include "codec_bytes.hpp"
#include "support.hpp"

using namespace std::chrono_literals;

namespace {

using geerpc::binary_codec;
using test::byte_vector;
using test::bytes_of;
using test::encode;

template <class T>
T decoded(const byte_vector& bytes) {
  T value{};
  const auto status = binary_codec::decode(bytes, value);
  INFO(status.message());
  REQUIRE(status);
  return value;
}

template <class T>
std::string failure(const byte_vector& bytes) {
  T value{};
  const auto status = binary_codec::decode(bytes, value);
  return status ? std::string("decoded") : std::string(status.error);
}

// Every strict prefix of an encoding fails, and so does the encoding with a byte more.
template <class T>
void check_prefixes_and_trailing(const T& value) {
  const byte_vector full = encode(value);
  for (std::size_t n = 0; n < full.size(); ++n) {
    INFO("prefix of " << n << " bytes of " << full.size());
    CHECK(failure<T>(byte_vector(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n))) != "decoded");
  }
  byte_vector longer = full;
  longer.push_back(std::byte{0});
  CHECK(failure<T>(longer) == "trailing bytes after the value");
}

// A class that keeps an invariant with a constructor: no aggregate, so it travels through a
// serializer of its own.
class money {
 public:
  money() = default;
  money(std::string currency, std::int64_t cents) : currency_(std::move(currency)), cents_(cents) {
    if (currency_.size() != 3) throw std::invalid_argument("currency codes have three letters");
  }
  const std::string& currency() const { return currency_; }
  std::int64_t cents() const { return cents_; }
  bool operator==(const money&) const = default;

 private:
  std::string currency_ = "EUR";
  std::int64_t cents_ = 0;
};

}  // namespace

template <>
struct geerpc::codec::serializer<money> {
  using wire_type = std::pair<std::string, std::int64_t>;
  static wire_type to_wire(const money& m) { return {m.currency(), m.cents()}; }
  static money from_wire(wire_type&& w) { return money(std::move(w.first), w.second); }
};

namespace {

struct everything {
  std::chrono::milliseconds timeout;
  std::chrono::duration<double, std::ratio<1, 3>> thirds;
  std::chrono::system_clock::time_point when;
  std::variant<std::monostate, int, std::string> choice;
  std::set<std::string> tags;
  std::multiset<int> votes;
  std::unordered_set<std::uint32_t> ids;
  std::unordered_multiset<std::string> words;
  std::deque<std::string> queue;
  std::list<std::vector<int>> chunks;
  std::unique_ptr<std::string> maybe;
  std::bitset<12> flags;
  money price;
};

}  // namespace

TEST_CASE("durations travel as their count, exactly, whatever the rep and period", "[codec][std]") {
  CHECK(encode(std::chrono::milliseconds(0x0102)) == bytes_of({0x02, 0x01, 0, 0, 0, 0, 0, 0}));
  CHECK(encode(std::chrono::duration<std::int16_t, std::milli>(-2)) == bytes_of({0xfe, 0xff}));
  CHECK(decoded<std::chrono::nanoseconds>(encode(std::chrono::nanoseconds::max())) == std::chrono::nanoseconds::max());
  CHECK(decoded<std::chrono::hours>(encode(-5h)) == -5h);
  using thirds = std::chrono::duration<double, std::ratio<1, 3>>;
  CHECK(decoded<thirds>(encode(thirds(2.5))).count() == 2.5);
  check_prefixes_and_trailing(std::chrono::seconds(7));
}

TEST_CASE("system_clock time points travel as their count since the epoch", "[codec][std]") {
  const auto now = std::chrono::system_clock::now();
  CHECK(decoded<std::chrono::system_clock::time_point>(encode(now)) == now);
  const std::chrono::sys_seconds second{std::chrono::seconds(1'700'000'000)};
  CHECK(encode(second) == encode(std::int64_t{1'700'000'000}));
  CHECK(decoded<std::chrono::sys_seconds>(encode(second)) == second);
}

TEST_CASE("a variant is its index as a varint, then the alternative's value", "[codec][std]") {
  using choice = std::variant<std::monostate, std::int32_t, std::string>;
  CHECK(encode(choice{}) == bytes_of({0, 0}));  // std::monostate is an empty struct: its length, 0
  CHECK(encode(choice{std::int32_t{5}}) == bytes_of({1, 5, 0, 0, 0}));
  CHECK(encode(choice{std::string("ab")}) == bytes_of({2, 2, 'a', 'b'}));
  CHECK(std::get<2>(decoded<choice>(encode(choice{std::string("ab")}))) == "ab");
  CHECK(std::get<1>(decoded<choice>(encode(choice{std::int32_t{-9}}))) == -9);
  // The same type twice: the index says which.
  using twice = std::variant<int, int>;
  CHECK(decoded<twice>(encode(twice{std::in_place_index<1>, 3})).index() == 1);
  CHECK(failure<choice>(bytes_of({3})) == "variant index out of range");
  CHECK(failure<choice>(bytes_of({0x80, 0x01})) == "variant index out of range");
  CHECK(failure<choice>(bytes_of({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})) ==
        "variant index out of range");
  check_prefixes_and_trailing(choice{std::string("xyz")});
}

TEST_CASE("sets are a count then the elements: a duplicate in a set is refused", "[codec][std]") {
  CHECK(encode(std::set<std::uint8_t>{3, 1, 2}) == bytes_of({3, 1, 2, 3}));
  CHECK(decoded<std::set<std::string>>(encode(std::set<std::string>{"b", "a"})) == std::set<std::string>{"a", "b"});
  CHECK(decoded<std::multiset<int>>(encode(std::multiset<int>{1, 1, 2})) == std::multiset<int>{1, 1, 2});
  const std::unordered_set<std::uint32_t> ids{7, 8, 9};
  CHECK(decoded<std::unordered_set<std::uint32_t>>(encode(ids)) == ids);
  const std::unordered_multiset<std::string> words{"a", "a", "b"};
  CHECK(decoded<std::unordered_multiset<std::string>>(encode(words)) == words);
  CHECK(failure<std::set<std::uint8_t>>(bytes_of({2, 1, 1})) == "duplicate set element");
  CHECK(failure<std::unordered_set<std::uint8_t>>(bytes_of({2, 4, 4})) == "duplicate set element");
  CHECK(decoded<std::multiset<std::uint8_t>>(bytes_of({2, 4, 4})).count(4) == 2);
  CHECK(failure<std::set<std::uint32_t>>(bytes_of({2, 1, 0, 0, 0})) == "element count exceeds the remaining bytes");
  check_prefixes_and_trailing(std::set<std::string>{"one", "two"});
}

TEST_CASE("deques and lists are a count then the elements, replacing what was there", "[codec][std]") {
  CHECK(encode(std::deque<std::uint8_t>{1, 2}) == bytes_of({2, 1, 2}));
  CHECK(encode(std::list<std::uint8_t>{1, 2}) == encode(std::vector<std::uint8_t>{1, 2}));
  std::deque<std::string> many;
  for (int i = 0; i < 1000; ++i) many.push_back(std::to_string(i));
  CHECK(decoded<std::deque<std::string>>(encode(many)) == many);
  std::deque<std::string> into{"old", "values"};
  REQUIRE(binary_codec::decode(encode(std::deque<std::string>{"new"}), into));
  CHECK(into == std::deque<std::string>{"new"});
  std::list<std::vector<int>> chunks{{1}, {}, {2, 3}};
  CHECK(decoded<std::list<std::vector<int>>>(encode(chunks)) == chunks);
  check_prefixes_and_trailing(std::deque<int>{1, 2, 3});
  check_prefixes_and_trailing(std::list<std::string>{"a", "b"});
}

TEST_CASE("a unique_ptr is nullable like an optional: a tag, then the value", "[codec][std]") {
  CHECK(encode(std::unique_ptr<std::int16_t>{}) == bytes_of({0}));
  CHECK(encode(std::make_unique<std::int16_t>(3)) == bytes_of({1, 3, 0}));
  CHECK(encode(std::make_unique<std::string>("hi")) == encode(std::optional<std::string>("hi")));
  CHECK(*decoded<std::unique_ptr<std::string>>(encode(std::make_unique<std::string>("hi"))) == "hi");
  CHECK(decoded<std::unique_ptr<std::string>>(bytes_of({0})) == nullptr);
  CHECK(failure<std::unique_ptr<std::uint8_t>>(bytes_of({2, 0})) == "unique_ptr tag is neither 0 nor 1");
  check_prefixes_and_trailing(std::make_unique<std::vector<int>>(std::vector<int>{1, 2}));
}

TEST_CASE("a bitset is its bits, low first, in whole bytes: a bit beyond its size is refused", "[codec][std]") {
  CHECK(encode(std::bitset<12>(0b1000'0000'0101)) == bytes_of({0b0000'0101, 0b1000}));
  CHECK(encode(std::bitset<8>(0xa5)) == bytes_of({0xa5}));
  CHECK(decoded<std::bitset<12>>(bytes_of({0xff, 0x0f})).all());
  const std::bitset<70> wide = (std::bitset<70>(1) << 69) | std::bitset<70>(0x1234);
  CHECK(decoded<std::bitset<70>>(encode(wide)) == wide);
  CHECK(encode(wide).size() == 9);
  CHECK(failure<std::bitset<12>>(bytes_of({0x00, 0x10})) == "bitset has a bit set beyond its size");
  check_prefixes_and_trailing(std::bitset<20>(0xabcde));
}

TEST_CASE("a class with a serializer travels as its wire type, and may refuse a value", "[codec][std]") {
  const money price("USD", 1999);
  CHECK(encode(price) == encode(std::pair<std::string, std::int64_t>("USD", 1999)));
  CHECK(decoded<money>(encode(price)) == price);
  CHECK(failure<money>(encode(std::pair<std::string, std::int64_t>("DOLLARS", 1))) ==
        "value refused by its geerpc::codec::serializer");
  check_prefixes_and_trailing(price);
}

TEST_CASE("all of them nested in one struct round trip, and every prefix fails", "[codec][std]") {
  everything value{250ms,
                   std::chrono::duration<double, std::ratio<1, 3>>(1.5),
                   std::chrono::system_clock::now(),
                   std::string("chosen"),
                   {"x", "y"},
                   {2, 2, 3},
                   {10, 20},
                   {"w", "w"},
                   {"q1", "q2"},
                   {{1, 2}, {}},
                   std::make_unique<std::string>("owned"),
                   std::bitset<12>(0xabc),
                   money("JPY", 500)};
  const byte_vector bytes = encode(value);
  const auto back = decoded<everything>(bytes);
  CHECK(back.timeout == value.timeout);
  CHECK(back.thirds == value.thirds);
  CHECK(back.when == value.when);
  CHECK(back.choice == value.choice);
  CHECK(back.tags == value.tags);
  CHECK(back.votes == value.votes);
  CHECK(back.ids == value.ids);
  CHECK(back.words == value.words);
  CHECK(back.queue == value.queue);
  CHECK(back.chunks == value.chunks);
  REQUIRE(back.maybe != nullptr);
  CHECK(*back.maybe == "owned");
  CHECK(back.flags == value.flags);
  CHECK(back.price == value.price);
  check_prefixes_and_trailing(value);
}

TEST_CASE("serializable: what the new kinds accept and refuse", "[codec][std]") {
  using geerpc::codec::is_serializable_v;
  STATIC_REQUIRE(is_serializable_v<std::chrono::microseconds>);
  STATIC_REQUIRE(is_serializable_v<std::chrono::duration<float>>);
  STATIC_REQUIRE_FALSE(is_serializable_v<std::chrono::duration<bool>>);
  STATIC_REQUIRE(is_serializable_v<std::chrono::system_clock::time_point>);
  STATIC_REQUIRE_FALSE(is_serializable_v<std::chrono::steady_clock::time_point>);
  STATIC_REQUIRE(is_serializable_v<std::variant<int, std::string>>);
  STATIC_REQUIRE_FALSE(is_serializable_v<std::variant<int, int*>>);
  STATIC_REQUIRE_FALSE(is_serializable_v<std::set<test::Args*>>);
  STATIC_REQUIRE_FALSE(is_serializable_v<std::deque<std::tuple<>>>);  // elements of no bytes
  STATIC_REQUIRE_FALSE(is_serializable_v<std::unique_ptr<int[]>>);
  STATIC_REQUIRE_FALSE(is_serializable_v<std::shared_ptr<int>>);
  STATIC_REQUIRE(is_serializable_v<std::bitset<1>>);
  STATIC_REQUIRE(is_serializable_v<money>);
  STATIC_REQUIRE_FALSE(geerpc::binary_codec::cheap_to_decode<std::set<int>>);
  STATIC_REQUIRE(geerpc::binary_codec::cheap_to_decode<std::chrono::milliseconds>);
}

// ---------------------------------------------------------------- the decode budget

namespace {
// A count of `n`, then `n` times `element`.
byte_vector repeated(std::size_t n, const byte_vector& element) {
  byte_vector out;
  std::size_t v = n;
  while (v >= 0x80) {
    out.push_back(static_cast<std::byte>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::byte>(v));
  for (std::size_t i = 0; i < n; ++i) out.insert(out.end(), element.begin(), element.end());
  return out;
}
constexpr std::string_view over_budget = "decoded value would need more memory than its limit";
}  // namespace

TEST_CASE("decode budget: unique_ptrs, lists, sets and deques of small elements are charged what they cost",
          "[codec][std][budget]") {
  using page = std::array<char, 4096>;
  // Two bytes (`1`, then an empty optional) for an allocated 4 KiB page: 30,000 of them would take
  // ~120 MiB if they were not charged.
  CHECK(failure<std::vector<std::unique_ptr<std::optional<page>>>>(repeated(30'000, bytes_of({1, 0}))) == over_budget);
  // Nodes of 40 or more bytes for one byte each: a list, a multiset; a deque's blocks.
  CHECK(failure<std::list<std::uint8_t>>(repeated(60'000, bytes_of({0}))) == over_budget);
  CHECK(failure<std::multiset<std::uint8_t>>(repeated(60'000, bytes_of({0}))) == over_budget);
  CHECK(failure<std::vector<std::deque<std::uint8_t>>>(repeated(60'000, bytes_of({0}))) == over_budget);
  // Values of ordinary shape pass.
  CHECK(failure<std::list<std::uint64_t>>(repeated(5'000, byte_vector(8, std::byte{1}))) == "decoded");
  CHECK(failure<std::deque<std::uint32_t>>(repeated(50'000, byte_vector(4, std::byte{1}))) == "decoded");
}

TEST_CASE("decode budget: what the decoder charges for the new containers covers what they allocate",
          "[codec][std][budget]") {
  const auto check = [](const auto& original, auto into) {
    const byte_vector body = encode(original);
    geerpc::codec::reader in(body, std::size_t(-1));
    test::allocation_log::reset();
    REQUIRE(geerpc::codec::decode_value(in, into));
    const std::size_t allocated = test::allocation_log::bytes;
    const std::size_t charged = std::size_t(-1) - in.memory_left();
    INFO("allocated " << allocated << ", charged " << charged);
    CHECK(allocated > 0);
    CHECK(allocated <= charged);
  };
  using test::counted_string;
  std::set<int, std::less<>, test::counting_allocator<int>> numbers;
  for (int i = 0; i < 500; ++i) numbers.insert(i * 7);
  check(numbers, decltype(numbers){});
  std::unordered_multiset<std::uint16_t, std::hash<std::uint16_t>, std::equal_to<>,
                          test::counting_allocator<std::uint16_t>>
      hashed;
  for (std::uint16_t i = 0; i < 700; ++i) hashed.insert(static_cast<std::uint16_t>(i % 300));
  check(hashed, decltype(hashed){});
  std::list<counted_string, test::counting_allocator<counted_string>> words;
  for (int i = 0; i < 300; ++i) words.emplace_back(static_cast<std::size_t>(i % 40), 'w');
  check(words, decltype(words){});
  for (std::size_t n : {0u, 1u, 127u, 128u, 129u, 5000u}) {
    std::deque<std::uint32_t, test::counting_allocator<std::uint32_t>> queue(n, 9u);
    INFO("deque of " << n);
    check(queue, decltype(queue){});
  }
  std::deque<std::array<char, 700>, test::counting_allocator<std::array<char, 700>>> big(5);
  check(big, decltype(big){});
}

// ---------------------------------------------------------------- over RPC

namespace {
struct Views {
  // Views of what was decoded, valid for the call.
  std::size_t count(std::string_view text, std::span<const std::int32_t> numbers, char c) const {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), c)) +
           static_cast<std::size_t>(std::accumulate(numbers.begin(), numbers.end(), 0));
  }
  money add(const money& a, const money& b) const {
    if (a.currency() != b.currency()) throw std::invalid_argument("different currencies");
    return money(a.currency(), a.cents() + b.cents());
  }
  std::chrono::system_clock::time_point later(std::chrono::system_clock::time_point t, std::chrono::seconds by) const {
    return t + by;
  }
  std::variant<int, std::string> parse(const std::string& text) const {
    if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) return std::stoi(text);
    return text;
  }
};
using ViewsApi = geerpc::service<"Views",                                 //
                                 geerpc::method<"Count", &Views::count>,  //
                                 geerpc::method<"Add", &Views::add>,      //
                                 geerpc::method<"Later", &Views::later>,  //
                                 geerpc::method<"Parse", &Views::parse>>;
static_assert(
    std::is_same_v<ViewsApi::fn<"Count">::argument_types, std::tuple<std::string, std::vector<std::int32_t>, char>>);
}  // namespace

TEMPLATE_TEST_CASE("handlers take string_views, spans, the new types and classes with serializers", "[std]",
                   GEERPC_TRANSPORTS) {
  Views views;
  geerpc::basic_server<TestType> server;
  server.template add<ViewsApi>(views);
  auto client = geerpc::dial<TestType>(server.listen("127.0.0.1:0"));

  const std::vector<std::int32_t> numbers{1, 2, 3};
  CHECK(client.template call<ViewsApi::fn<"Count">>("banana", numbers, 'a') == 9);
  CHECK(client.template call<ViewsApi::fn<"Count">>(std::string_view("aa"), std::span<const std::int32_t>(numbers),
                                                    'a') == 8);
  CHECK(client.template call<std::size_t>("Views.Count", "x", std::span<const std::int32_t>(numbers), 'x') == 7);
  CHECK(client.template call<ViewsApi::fn<"Add">>(money("EUR", 150), money("EUR", 250)) == money("EUR", 400));
  auto mixed = client.template try_call<ViewsApi::fn<"Add">>(money("EUR", 1), money("USD", 1));
  REQUIRE_FALSE(mixed.has_value());
  CHECK(mixed.error().code == geerpc::errc::remote_error);
  // A value its serializer refuses is a bad request, before the handler runs.
  auto refused = client.template try_call<money>("Views.Add", std::pair<std::string, std::int64_t>("EURO", 1),
                                                 std::pair<std::string, std::int64_t>("EUR", 1));
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == geerpc::errc::bad_request);
  const auto now = std::chrono::system_clock::now();
  CHECK(client.template call<ViewsApi::fn<"Later">>(now, 5s) == now + 5s);
  CHECK(std::get<int>(client.template call<ViewsApi::fn<"Parse">>("42")) == 42);
  CHECK(std::get<std::string>(client.template call<ViewsApi::fn<"Parse">>("forty")) == "forty");
}
