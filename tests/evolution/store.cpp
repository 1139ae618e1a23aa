// One side of the cross-version test, as version SERVICE_VERSION of a program (this file is
// compiled twice, -DSERVICE_VERSION=1 and =2; driver.cpp runs a server of one against a client of
// the other):
//
//   store serve <blocking|threaded>
//       serves Store on 127.0.0.1:0, prints the bound address on one line once listening, and
//       serves until its stdin closes; exits 0.
//   store call <address> <blocking|threaded> --peer-version N
//       calls a Store server of version N and checks every field of every reply against what this
//       version expects of that one; prints one line per check; exits 0 only if all pass.
#include <geerpc/geerpc.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "store_api.hpp"
#include "wire_tap.hpp"

using namespace std::chrono_literals;
using namespace evolution;

namespace {

// ---- serve

template <class Transport>
int serve() {
  Store store;
  geerpc::basic_server<Transport> server;
  server.template add<StoreApi>(store);
  const std::string address = server.listen("127.0.0.1:0");
  std::printf("%s\n", address.c_str());
  std::fflush(stdout);
  char sink[256];
  while (std::fread(sink, 1, sizeof sink, stdin) > 0) {
  }
  server.stop();
  std::fprintf(stderr, "v%d server: stdin closed, stopped\n", version);
  return 0;
}

// ---- call

std::string shown(const std::string& s) { return '"' + s + '"'; }
std::string shown(bool b) { return b ? "true" : "false"; }
template <class T>
requires std::is_arithmetic_v<T> std::string shown(T n) { return std::to_string(n); }

class checks {
 public:
  explicit checks(std::string who) : who_(std::move(who)) {}

  template <class T>
  void equal(const std::string& what, const T& got, const T& expected) {
    that(what + " == " + shown(expected), got == expected, "got " + shown(got));
  }
  void contains(const std::string& what, const std::string& text, const std::string& part) {
    that(what + " contains " + shown(part), text.find(part) != std::string::npos, "it is " + shown(text));
  }
  // `why` is shown only when the check fails.
  bool that(const std::string& what, bool ok, const std::string& why = "") {
    ++count_;
    if (ok)
      std::printf("%s: ok   %s\n", who_.c_str(), what.c_str());
    else
      std::printf("%s: FAIL %s%s%s\n", who_.c_str(), what.c_str(), why.empty() ? "" : ": ", why.c_str());
    failures_ += ok ? 0 : 1;
    return ok;
  }
  int failures() const { return failures_; }
  int count() const { return count_; }

 private:
  std::string who_;
  int failures_ = 0;
  int count_ = 0;
};

// What this client sends and what it expects of a server of version `peer`.
struct expectations {
  int peer;

  static put_args put_arguments(int round) {
    put_args a{"apple" + std::to_string(round), 5 + round};
#if SERVICE_VERSION >= 2
    a.note = "gift" + std::to_string(round);
#endif
    return a;
  }
  // The note a v2 server sees: ours, or its default when we send none.
  static std::string note_sent([[maybe_unused]] const put_args& a) {
#if SERVICE_VERSION >= 2
    return a.note;
#else
    return "none";
#endif
  }

  void put(checks& c, const std::string& where, const put_args& sent, const geerpc::result<put_reply>& r) const {
    if (!c.that(where + " succeeded", r.has_value(), r.message())) return;
    c.equal(where + ".stored", r->stored, true);
    c.equal(where + ".total", r->total, total_of(sent.amount));
#if SERVICE_VERSION >= 2
    // A v1 server sends no `by`: ours keeps its default member initializer.
    c.equal(where + ".by", r->by, peer >= 2 ? "v2 saw note " + note_sent(sent) : std::string("unset"));
#endif
  }

  void seen(checks& c, const std::string& where, const put_args& sent, const geerpc::result<std::string>& r) const {
    if (!c.that(where + " succeeded", r.has_value(), r.message())) return;
    std::string expected = "key=" + sent.key + " amount=" + std::to_string(sent.amount);
    if (peer >= 2) expected += " note=" + note_sent(sent);  // a v1 server ignores (skips) ours
    c.equal(where, *r, expected);
  }

  static order order_arguments(int round) {
    order o{{{"apple"}, {"pear"}, {"fig" + std::to_string(round)}}};
#if SERVICE_VERSION >= 2
    for (std::size_t i = 0; i < o.items.size(); ++i)
      o.items[i].quantity = static_cast<std::int32_t>(3 + 2 * static_cast<int>(i) + round);
#endif
    return o;
  }

  void placed(checks& c, const std::string& where, const order& sent, const std::string& customer,
              const geerpc::result<receipt>& r) const {
    if (!c.that(where + " succeeded", r.has_value(), r.message())) return;
    if (!c.that(where + ".items has " + std::to_string(sent.items.size()), r->items.size() == sent.items.size(),
                "it has " + std::to_string(r->items.size())))
      return;
    std::string summary;
    for (std::size_t i = 0; i < sent.items.size(); ++i) {
      const std::string at = where + ".items[" + std::to_string(i) + "]";
      c.equal(at + ".name", r->items[i].name, sent.items[i].name);
      // What a v2 server saw of the quantity: ours, or the default 1 when we send none.
#if SERVICE_VERSION >= 2
      const std::int32_t quantity = sent.items[i].quantity;
      // A v1 server drops our quantities and echoes items without one: ours come back defaulted.
      c.equal(at + ".quantity", r->items[i].quantity, peer >= 2 ? quantity : std::int32_t{1});
#else
      const std::int32_t quantity = 1;
#endif
      summary += (i == 0 ? "" : ",") + sent.items[i].name;
      if (peer >= 2) summary += " x" + std::to_string(quantity);
    }
    c.equal(where + ".summary", r->summary, customer + ": " + summary);
  }

  void bad(checks& c, const std::string& where, const geerpc::result<std::string>& r) const {
    if (peer == version) {
      if (c.that(where + " succeeded (same version)", r.has_value(), r.message()))
        c.equal(where, *r, std::string("bad b1"));
      return;
    }
    if (!c.that(where + " failed", !r.has_value(), "it succeeded")) return;
    c.that(where + " code is type_mismatch", r.code() == geerpc::errc::type_mismatch, r.code().message());
    std::printf("%s refused: %s\n", where.c_str(), r.message().c_str());
    c.contains(where + " message", r.message(), "Store.Bad");
    c.contains(where + " message", r.message(), "count");   // the field
    c.contains(where + " message", r.message(), "int32");   // v1's type
    c.contains(where + " message", r.message(), "string");  // v2's type
  }
};

bad_args bad_arguments() {
#if SERVICE_VERSION >= 2
  return {"b1", "three"};
#else
  return {"b1", 3};
#endif
}

// A client's calls in turn: each method several times (the first of each type carries its schema,
// the later ones go without), the incompatible method twice, then the others again.
template <class Transport>
void sequential_calls(checks& c, const expectations& e, geerpc::basic_client<Transport>& client,
                      const std::string& tag) {
  const auto ctx = [] { return geerpc::with_timeout(10s); };
  for (int round = 0; round < 3; ++round) {
    const std::string at = tag + "[" + std::to_string(round) + "]";
    const put_args args = e.put_arguments(round);
    e.put(c, at + " Put", args, client.template try_call<StoreApi::fn<"Put">>(ctx(), args));
    e.seen(c, at + " Seen", args, client.template try_call<StoreApi::fn<"Seen">>(ctx(), args));
    const order o = e.order_arguments(round);
    const std::string customer = "customer" + std::to_string(round);
    e.placed(c, at + " Order", o, customer, client.template try_call<StoreApi::fn<"Order">>(ctx(), o, customer));
  }
  for (int round = 0; round < 2; ++round)
    e.bad(c, tag + "[" + std::to_string(round) + "] Bad",
          client.template try_call<StoreApi::fn<"Bad">>(ctx(), bad_arguments()));
  // The connection still serves after the refusals.
  const put_args args = e.put_arguments(7);
  e.put(c, tag + "[after Bad] Put", args, client.template try_call<StoreApi::fn<"Put">>(ctx(), args));
}

// Concurrent asynchronous calls on a fresh connection: several of a type may be in flight, each
// with the schema, before the first reply; then more of them.
void concurrent_calls(checks& c, const expectations& e, const std::string& address) {
  auto client = geerpc::dial<geerpc::threaded>(address, {.timeouts = {.connect = 5s}});
  for (int wave = 0; wave < 2; ++wave) {
    constexpr int calls = 8;
    std::vector<put_args> puts;
    std::vector<order> orders;
    std::vector<geerpc::call_future<put_reply, geerpc::binary_codec, geerpc::threaded>> put_futures;
    std::vector<geerpc::call_future<receipt, geerpc::binary_codec, geerpc::threaded>> order_futures;
    for (int i = 0; i < calls; ++i) {
      puts.push_back(e.put_arguments(10 * wave + i));
      orders.push_back(e.order_arguments(10 * wave + i));
    }
    for (int i = 0; i < calls; ++i) {
      put_futures.push_back(client.async_call<StoreApi::fn<"Put">>(geerpc::with_timeout(10s), puts[i]));
      order_futures.push_back(
          client.async_call<StoreApi::fn<"Order">>(geerpc::with_timeout(10s), orders[i], std::string("async")));
    }
    for (int i = 0; i < calls; ++i) {
      const std::string at = "async[" + std::to_string(wave) + "." + std::to_string(i) + "]";
      e.put(c, at + " Put", puts[i], put_futures[i].try_get());
      e.placed(c, at + " Order", orders[i], "async", order_futures[i].try_get());
    }
  }
}

// The client's side of "the first carries the schema, later ones go without": through a tap that
// sees each request, a method's first call carries its schema and the later ones do not; a type
// the server refused keeps sending it.
template <class Transport>
void schema_on_the_wire(checks& c, const expectations& e, const std::string& address) {
  wire_tap tap(address);
  if (!c.that("wire tap listening", !tap.address().empty())) return;
  {
    auto client = geerpc::dial<Transport>(tap.address(), {.timeouts = {.connect = 5s}});
    sequential_calls(c, e, client, "tapped");
  }
  std::map<std::string, std::vector<bool>> carried;  // per method, each request in order: with its schema?
  for (const auto& request : tap.requests()) carried[request.method].push_back(request.schema);
  const bool bad_refused = e.peer != version;
  for (const auto& [method, expected_count] : std::vector<std::pair<std::string, std::size_t>>{
           {"Store.Put", 4}, {"Store.Seen", 3}, {"Store.Order", 3}, {"Store.Bad", 2}}) {
    const std::vector<bool>& flags = carried[method];
    c.equal("tapped " + method + ": requests", flags.size(), expected_count);
    for (std::size_t i = 0; i < flags.size(); ++i) {
      const bool expected = i == 0 || (method == "Store.Bad" && bad_refused);
      c.that(
          "tapped " + method + " #" + std::to_string(i + 1) + (expected ? " carries" : " goes without") + " its schema",
          flags[i] == expected);
    }
  }
}

// The server's side, with frames built by hand: without its schema a call of this version's types
// is refused (the fingerprints differ); with it, taken; after that, taken without it on the same
// connection, and still refused without it on another.
void schema_by_hand(checks& c, const expectations& e, const std::string& address) {
  using arguments = std::tuple<put_args>;
  constexpr std::uint32_t fingerprint = geerpc::binary_codec::fingerprint<arguments, put_reply>;
  const std::string& schema = geerpc::binary_codec::schema<arguments, put_reply>();
  const bool differ = e.peer != version;
  std::printf("v%d Store.Put schema: %s\n", version, schema.c_str());

  const auto exchange = [&](raw_connection& connection, std::uint64_t seq, bool with_schema, bool refused,
                            const std::string& what) {
    const put_args args = e.put_arguments(static_cast<int>(seq));
    if (!c.that(what + ": sent",
                connection.send(request_frame(seq, "Store.Put", fingerprint, with_schema ? &schema : nullptr, args))))
      return;
    const auto reply = connection.read_frame();
    if (!c.that(what + ": a response",
                reply && reply->header.kind == geerpc::wire::frame_kind::response && reply->header.seq == seq))
      return;
    if (refused) {
      c.equal(what + ": status", int{reply->header.status}, static_cast<int>(geerpc::errc::type_mismatch));
      c.contains(what + ": message", reply->text, "Store.Put");
      return;
    }
    if (!c.that(what + ": status ok", reply->header.status == 0, reply->text)) return;
    put_reply decoded{};
    const auto status = geerpc::binary_codec::decode(std::span<const std::byte>(reply->body), decoded);
    if (!c.that(what + ": body decodes", static_cast<bool>(status), status.message())) return;
    e.put(c, what + ": Put", args, geerpc::result<put_reply>(std::move(decoded)));
  };

  const std::string refusal = differ ? ", refused" : "";
  raw_connection first(address);
  if (!c.that("raw connection: handshake", first.error().empty(), first.error())) return;
  exchange(first, 1, false, differ, "raw #1 without schema" + refusal);
  exchange(first, 2, true, false, "raw #2 with schema");
  exchange(first, 3, false, false, "raw #3 without schema, after one with it");
  exchange(first, 4, false, false, "raw #4 without schema, after one with it");
  raw_connection second(address);
  if (!c.that("second raw connection: handshake", second.error().empty(), second.error())) return;
  exchange(second, 1, false, differ, "raw, another connection, #1 without schema" + refusal);
}

template <class Transport>
int call(const std::string& address, int peer) {
  checks c("v" + std::to_string(version) + " client of a v" + std::to_string(peer) + " server");
  const expectations e{peer};
  try {
    auto client = geerpc::dial<Transport>(address, {.timeouts = {.connect = 5s}});
    sequential_calls(c, e, client, "call");
    if constexpr (std::is_same_v<Transport, geerpc::threaded>) concurrent_calls(c, e, address);
    schema_on_the_wire<Transport>(c, e, address);
    schema_by_hand(c, e, address);
  } catch (const std::exception& failure) {
    c.that("no exception", false, failure.what());
  }
  std::printf("%d checks, %d failed\n", c.count(), c.failures());
  return c.failures() == 0 && c.count() > 0 ? 0 : 1;
}

int usage() {
  std::fprintf(stderr,
               "usage: store serve <blocking|threaded>\n"
               "       store call <address> <blocking|threaded> --peer-version N\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 2 && args[0] == "serve") {
    if (args[1] == "blocking") return serve<geerpc::blocking>();
    if (args[1] == "threaded") return serve<geerpc::threaded>();
    return usage();
  }
  if (args.size() == 5 && args[0] == "call" && args[3] == "--peer-version") {
    const int peer = std::atoi(args[4].c_str());
    if (peer != 1 && peer != 2) return usage();
    if (args[2] == "blocking") return call<geerpc::blocking>(args[1], peer);
    if (args[2] == "threaded") return call<geerpc::threaded>(args[1], peer);
  }
  return usage();
}
