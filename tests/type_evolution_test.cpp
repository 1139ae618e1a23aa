// Services that evolve (docs/protocol.md 4.2 and 5.7): a client whose structs have more or fewer
// trailing fields than the server's calls it; a change that is not compatible is refused naming the
// field and both types; the server decides once per connection from the call's schema.
#include <set>
#include <string>

#include "catch.hpp"
#include "support.hpp"

namespace type_evolution_test {

using namespace std::chrono_literals;

namespace {

// The server's types: "v2", each with a field at its end that v1 lacks.
struct item {
  std::string name;
  std::int32_t quantity = 1;
};
struct order {
  std::string customer;
  std::vector<item> items;
  std::string note = "none";
};
struct receipt {
  std::int64_t count = 0;
  std::string summary;
  std::string clerk;
};

// A client built before those fields were added: "v1".
struct old_item {
  std::string name;
};
struct old_order {
  std::string customer;
  std::vector<old_item> items;
};
struct old_receipt {
  std::int64_t count = 0;
  std::string summary;
};

// A client built after a field beyond the server's was added.
struct new_item {
  std::string name;
  std::int32_t quantity = 1;
  bool gift = false;
};
struct new_order {
  std::string customer;
  std::vector<new_item> items;
  std::string note = "none";
  std::int32_t priority = 0;
};
struct new_receipt {
  std::int64_t count = 0;
  std::string summary;
  std::string clerk;
  std::string stamp = "unstamped";
};

// Not compatible: the second field changed type.
struct bad_order {
  std::string customer;
  std::string items;
};

receipt place(const order& o) {
  std::int64_t count = 0;
  std::string summary = o.customer + ":";
  for (const item& i : o.items) {
    count += i.quantity;
    summary += " " + i.name + "x" + std::to_string(i.quantity);
  }
  return {count, summary + " (" + o.note + ")", "ann"};
}

receipt quote(const order& o) { return {static_cast<std::int64_t>(o.items.size()), "quote", "bob"}; }
old_receipt legacy(const old_order& o) { return {static_cast<std::int64_t>(o.items.size()), "legacy"}; }
std::string echo(const std::string& text) { return text; }

using ShopApi = geerpc::service<"Shop", geerpc::method<"Place", &place>, geerpc::method<"Quote", &quote>,
                                geerpc::method<"Legacy", &legacy>, geerpc::method<"Echo", &echo>>;

template <class Transport>
struct shop_server {
  geerpc::basic_server<Transport> server;
  std::string address;
  explicit shop_server(geerpc::server_options opts = {}) : server(std::move(opts)) {
    server.template add<ShopApi>();
    address = server.listen("127.0.0.1:0");
  }
};

}  // namespace

TEMPLATE_TEST_CASE("a client whose structs lack the server's trailing fields calls it, and they take their defaults",
                   "[evolution]", GEERPC_TRANSPORTS) {
  shop_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  const old_order o{"bo", {{"pen"}, {"ink"}}};
  for (int round = 0; round < 3; ++round) {  // the first carries the schema; the later ones need none
    const auto r = client.template try_call<old_receipt>("Shop.Place", o);
    REQUIRE(r.has_value());
    CHECK(r->count == 2);  // each item's missing quantity is its default, 1
    CHECK(r->summary == "bo: penx1 inkx1 (none)");
  }
}

TEMPLATE_TEST_CASE("a client whose structs have trailing fields the server lacks calls it, which skips them",
                   "[evolution]", GEERPC_TRANSPORTS) {
  shop_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  const new_order o{"cy", {{"cup", 3, true}}, "fragile", 9};
  for (int round = 0; round < 3; ++round) {
    const auto r = client.template try_call<new_receipt>("Shop.Place", o);
    REQUIRE(r.has_value());
    CHECK(r->count == 3);
    CHECK(r->summary == "cy: cupx3 (fragile)");
    CHECK(r->clerk == "ann");
    CHECK(r->stamp == "unstamped");  // the server sent none: the client's default
  }
}

TEMPLATE_TEST_CASE("the schema is remembered per method: two methods of the same types each get it first",
                   "[evolution]", GEERPC_TRANSPORTS) {
  shop_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  const old_order o{"di", {{"x"}}};
  // Legacy's types are the client's own: its calls succeed without the server needing the schema.
  CHECK(client.template try_call<old_receipt>("Shop.Legacy", o).has_value());
  // Place and Quote have the same (newer) types: each needs the schema, once.
  for (int round = 0; round < 2; ++round) {
    const auto placed = client.template try_call<old_receipt>("Shop.Place", o);
    REQUIRE(placed.has_value());
    CHECK(placed->summary == "di: xx1 (none)");
    const auto quoted = client.template try_call<old_receipt>("Shop.Quote", o);
    REQUIRE(quoted.has_value());
    CHECK(quoted->summary == "quote");
  }
}

TEMPLATE_TEST_CASE("a request that fits the server's frame limit without its schema is sent without it", "[evolution]",
                   GEERPC_TRANSPORTS) {
  geerpc::server_options opts;
  opts.limits.max_frame_size = 256;
  shop_server<TestType> s(opts);
  auto client = geerpc::dial<TestType>(s.address);
  // The types are the server's own, so the server needs no schema: the largest text that fits.
  const std::size_t overhead = geerpc::wire::header_size + std::string_view("Shop.Echo").size() +
                               geerpc::wire::fingerprint_size + 2;  // the string's count: 2 bytes
  const std::string text(256 - overhead, 'e');
  for (int round = 0; round < 2; ++round) CHECK(client.template call<std::string>("Shop.Echo", text) == text);
  const auto too_long = client.template try_call<std::string>("Shop.Echo", text + "e");
  CHECK(too_long.code() == geerpc::errc::invalid_argument);
}

TEMPLATE_TEST_CASE("asynchronous first calls of an evolved type all succeed, and later ones too", "[evolution]",
                   GEERPC_ASYNC_TRANSPORTS) {
  shop_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  for (int round = 0; round < 2; ++round) {
    std::vector<geerpc::call_future<old_receipt, geerpc::binary_codec, TestType>> calls;
    for (int i = 0; i < 8; ++i)
      calls.push_back(client.template async_call<old_receipt>("Shop.Place", old_order{"q", {{std::to_string(i)}}}));
    for (int i = 0; i < 8; ++i) {
      const auto r = calls[static_cast<std::size_t>(i)].try_get();
      REQUIRE(r.has_value());
      CHECK(r->summary == "q: " + std::to_string(i) + "x1 (none)");
    }
  }
}

TEMPLATE_TEST_CASE("a field whose type changed is refused before decoding, naming the field and both types",
                   "[evolution]", GEERPC_TRANSPORTS) {
  shop_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  const auto r = client.template try_call<receipt>("Shop.Place", bad_order{"x", "y"});
  REQUIRE_FALSE(r.has_value());
  CHECK(r.code() == geerpc::errc::type_mismatch);
  CHECK_THAT(r.message(), Catch::Matchers::Contains("Shop.Place") && Catch::Matchers::Contains("items") &&
                              Catch::Matchers::Contains("string") && Catch::Matchers::Contains("list<"));
  // The connection goes on serving, and a compatible call on it works.
  CHECK(client.template try_call<old_receipt>("Shop.Place", old_order{"z", {}}).has_value());
}

TEMPLATE_TEST_CASE("a result whose struct changed incompatibly is refused too", "[evolution]", GEERPC_TRANSPORTS) {
  shop_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  const auto r = client.template try_call<std::string>("Shop.Place", order{});
  REQUIRE_FALSE(r.has_value());
  CHECK(r.code() == geerpc::errc::type_mismatch);
  CHECK_THAT(r.message(), Catch::Matchers::Contains("result"));
}

}  // namespace type_evolution_test

namespace type_evolution_test {
namespace {

// A request for Shop.Place carrying `fingerprint`, the schema when given, and an old_order.
std::vector<std::byte> place_request(std::uint64_t seq, std::uint32_t fingerprint, const std::string* schema) {
  std::vector<std::byte> frame;
  const std::uint8_t flags = geerpc::wire::request_flag::fingerprint |
                             (schema != nullptr ? geerpc::wire::request_flag::schema : std::uint8_t{0});
  const std::size_t start =
      geerpc::wire::begin_frame(frame, {geerpc::wire::frame_kind::request, flags, seq, 0}, "Shop.Place", fingerprint);
  if (schema != nullptr) geerpc::wire::append_schema(frame, *schema);
  geerpc::binary_codec::encode(old_order{"raw", {{"a"}}}, frame);
  geerpc::wire::finish_frame(frame, start);
  return frame;
}

const std::string& old_schema() { return geerpc::binary_codec::schema<std::tuple<old_order>, old_receipt>(); }
constexpr std::uint32_t old_fingerprint = geerpc::binary_codec::fingerprint<std::tuple<old_order>, old_receipt>;

}  // namespace

TEMPLATE_TEST_CASE(
    "the server takes a differing fingerprint without a schema only after its schema agreed on that "
    "connection",
    "[evolution]", GEERPC_TRANSPORTS) {
  shop_server<TestType> s;
  test::raw_peer first(s.address);
  first.send_hello();
  REQUIRE(first.read_hello_reply());
  first.send(place_request(1, old_fingerprint, nullptr));  // no schema yet: refused
  auto refused = first.read_frame();
  REQUIRE(refused);
  CHECK(refused->header.status == static_cast<std::uint8_t>(geerpc::errc::type_mismatch));
  first.send(place_request(2, old_fingerprint, &old_schema()));  // with it: taken
  auto taken = first.read_frame();
  REQUIRE(taken);
  CHECK(taken->header.status == 0);
  first.send(place_request(3, old_fingerprint, nullptr));  // remembered
  auto again = first.read_frame();
  REQUIRE(again);
  CHECK(again->header.status == 0);

  test::raw_peer second(s.address);  // another connection remembers nothing
  second.send_hello();
  REQUIRE(second.read_hello_reply());
  second.send(place_request(1, old_fingerprint, nullptr));
  auto other = second.read_frame();
  REQUIRE(other);
  CHECK(other->header.status == static_cast<std::uint8_t>(geerpc::errc::type_mismatch));
}

// A client schema for Shop.Place whose item has `extra` more trailing fields than the server's:
// a different type each, all agreeing with the server's, or none of them when `quantity` is not
// the server's int32.
std::string item_schema(std::size_t extra, const char* quantity = "i4;") {
  std::string text = std::string("({customer:s,items:v[{name:s,quantity:") + quantity;
  for (std::size_t i = 0; i < extra; ++i) text += ",f" + std::to_string(i) + ":b";
  return text + "}]})>{count:i8;,summary:s}";
}

TEST_CASE("a connection may have a bounded number of differing call types judged, taken or refused", "[evolution]") {
  CHECK(geerpc::codec::schema_fingerprint(old_schema()) == old_fingerprint);  // the pass and the walk agree
  shop_server<geerpc::threaded> s;
  struct greeted_peer {
    test::raw_peer peer;
    std::uint64_t seq = 0;
    explicit greeted_peer(const std::string& address) : peer(address) {
      peer.send_hello();
      REQUIRE(peer.read_hello_reply());
    }
    test::raw_peer::frame send(const std::string& schema, std::uint32_t fingerprint) {
      peer.send(place_request(++seq, fingerprint, &schema));
      auto reply = peer.read_frame();
      REQUIRE(reply);
      return std::move(*reply);
    }
    test::raw_peer::frame send(const std::string& schema) {
      return send(schema, geerpc::codec::schema_fingerprint(schema));
    }
  };
  constexpr std::size_t refused_limit = geerpc::detail::accepted_types::refused_limit;
  constexpr std::size_t limit = geerpc::detail::accepted_types::limit;
  const auto mismatch = static_cast<std::uint8_t>(geerpc::errc::type_mismatch);

  SECTION("refused types: each judged once, then answered from memory, up to their own limit") {
    greeted_peer p(s.address);
    for (std::size_t i = 1; i <= 8; ++i) REQUIRE(p.send(item_schema(i)).header.status == 0);
    for (std::size_t i = 1; i <= refused_limit; ++i) {
      auto reply = p.send(item_schema(i, "s"));
      REQUIRE(reply.header.status == mismatch);
      REQUIRE_THAT(reply.text, Catch::Matchers::Contains("quantity: int32 on the server, string from the client"));
    }
    auto again = p.send(item_schema(1, "s"));  // judged before: its reason, no parse
    CHECK_THAT(again.text, Catch::Matchers::Contains("quantity: int32 on the server"));
    CHECK(p.send(item_schema(1)).header.status == 0);  // and a type taken before is still taken
    // Past the limit nothing new is parsed, not even a type that would agree.
    for (const std::string& schema : {item_schema(refused_limit + 1, "s"), item_schema(9)}) {
      auto reply = p.send(schema);
      CHECK(reply.header.status == mismatch);
      CHECK_THAT(reply.text, Catch::Matchers::Contains("64 call types refused (the limit)"));
    }
    // A schema that is not its fingerprint's is refused before anything else.
    const std::string schema = item_schema(1);
    auto forged = p.send(schema, geerpc::codec::schema_fingerprint(schema) + 1);
    CHECK_THAT(forged.text, Catch::Matchers::Contains("not the one its fingerprint was made from"));
  }
  SECTION("taken types: up to the limit") {
    greeted_peer p(s.address);
    for (std::size_t i = 1; i <= limit; ++i) REQUIRE(p.send(item_schema(i)).header.status == 0);
    auto past = p.send(item_schema(limit + 1));
    CHECK(past.header.status == mismatch);
    CHECK_THAT(past.text, Catch::Matchers::Contains("1024 call types that differ"));
  }
  auto client = geerpc::dial(s.address);  // and the server serves others
  CHECK(client.try_call<old_receipt>("Shop.Place", old_order{"ok", {}}).has_value());
}

}  // namespace type_evolution_test

namespace type_evolution_test {

TEST_CASE("a schema block is parsed after the fingerprint, and one that is malformed breaks the frame",
          "[evolution][wire]") {
  const std::string schema = "({a:i4;})>x";
  auto parse = [](const std::vector<std::byte>& frame, geerpc::wire::frame_view& view) {
    const char* why = geerpc::wire::parse_frame(frame, view);
    return why == nullptr ? std::string("parsed") : std::string(why);
  };
  auto build = [&](std::uint8_t flags, std::uint32_t fingerprint, bool with_schema) {
    std::vector<std::byte> frame;
    const std::size_t start =
        geerpc::wire::begin_frame(frame, {geerpc::wire::frame_kind::request, flags, 7, 0}, "A.B", fingerprint);
    if (with_schema) geerpc::wire::append_schema(frame, schema);
    frame.push_back(std::byte{0x2a});  // the body
    geerpc::wire::finish_frame(frame, start);
    return frame;
  };
  using namespace geerpc::wire;
  geerpc::wire::frame_view view;
  const auto good = build(request_flag::fingerprint | request_flag::schema, 99, true);  // the view points into it
  REQUIRE(parse(good, view) == "parsed");
  CHECK(view.fingerprint == 99);
  CHECK(view.schema == schema);
  CHECK(view.body.size() == 1);

  CHECK(parse(build(request_flag::schema, 0, true), view) == "request schema without a fingerprint");
  auto empty = build(request_flag::fingerprint | request_flag::schema, 99, false);  // the body byte as a size
  CHECK(parse(empty, view) == "request schema exceeds the frame");
  auto overlong = build(request_flag::fingerprint | request_flag::schema, 99, true);
  geerpc::detail::store_le<std::uint16_t>(overlong.data() + offset::text + 3 + fingerprint_size, 0xffff);
  CHECK(parse(overlong, view) == "request schema exceeds the frame");
  auto zero = build(request_flag::fingerprint | request_flag::schema, 99, true);
  geerpc::detail::store_le<std::uint16_t>(zero.data() + offset::text + 3 + fingerprint_size, 0);
  CHECK(parse(zero, view) == "request schema exceeds the frame");
}

TEST_CASE("a client remembers each method and type fingerprint apart, by a key that is never an empty slot",
          "[evolution]") {
  using geerpc::detail::announced_types;
  // Names of every length from 1 to 40 bytes, and each of them with one byte changed at each
  // position: the word-wise key must tell every one apart, the overlapping last word included.
  std::set<std::uint64_t> keys;
  std::size_t names = 0;
  for (std::size_t length = 1; length <= 40; ++length) {
    const std::string name(length, 'm');
    for (std::size_t at = 0; at <= length; ++at) {
      std::string changed = name;
      if (at < length) changed[at] = 'n';
      for (const std::uint32_t fingerprint : {0x1234u, 0x1235u}) {
        const std::uint64_t key = announced_types::key(changed, fingerprint);
        CHECK(key != 0);
        keys.insert(key);
        ++names;
      }
    }
  }
  CHECK(keys.size() == names);
  // The length and the fingerprint are not folded into one another.
  CHECK(announced_types::key(std::string(10, 'm'), 0x1235) != announced_types::key(std::string(11, 'm'), 0x1234));
  // A name under 8 bytes and the same name with a zero byte after it differ by their length.
  CHECK(announced_types::key(std::string_view("Arith.S"), 7) !=
        announced_types::key(std::string_view("Arith.S\0", 8), 7));

  announced_types table;
  const std::uint64_t sum = announced_types::key("Arith.Sum", 9), echo = announced_types::key("Arith.Echo", 9);
  CHECK_FALSE(table.contains(sum));
  table.insert(sum);
  CHECK(table.contains(sum));
  CHECK_FALSE(table.contains(echo));
  // A full table keeps what it has and finds no room for more, which then keep sending schemas.
  for (std::uint64_t k = 1; k <= 4 * announced_types::slots; ++k) table.insert(k * 0x10001);
  CHECK(table.contains(sum));
}

}  // namespace type_evolution_test
