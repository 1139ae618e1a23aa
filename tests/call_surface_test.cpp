// The one call surface (client/call_surface.hpp) that basic_client and balanced_client share:
// every form of call, try_call and async_call, by name and through typed stubs of none, one and
// several arguments, with and without a leading context, on both clients. Each call's handler
// answers with the metadata it received, so a form that dropped or misplaced its context fails.
#include <memory>
#include <string>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace call_surface_test {

using namespace std::chrono_literals;

namespace {

struct Pair {
  int a;
  int b;
};

// Each answers "<tag>:<what it got>", the tag being the caller's metadata "tag" or "-".
std::string tag_of(const geerpc::call_context& ctx) { return std::string(ctx.metadata("tag").value_or("-")); }

struct Tagger {
  std::string none(const geerpc::call_context& ctx) { return tag_of(ctx) + ":none"; }
  std::string one(const Pair& p, const geerpc::call_context& ctx) {
    return tag_of(ctx) + ":" + std::to_string(p.a + p.b);
  }
  std::string two(const std::string& text, int times, const geerpc::call_context& ctx) {
    std::string out = tag_of(ctx) + ":";
    for (int i = 0; i < times; ++i) out += text;
    return out;
  }
};

using TaggerApi = geerpc::service<"Tagger",                               //
                                  geerpc::method<"None", &Tagger::none>,  //
                                  geerpc::method<"One", &Tagger::one>,    //
                                  geerpc::method<"Two", &Tagger::two>>;

struct tagger_server {
  Tagger tagger;
  geerpc::server server;
  std::string address;
  tagger_server() {
    server.add<TaggerApi>(tagger);
    address = server.listen("127.0.0.1:0");
  }
};

template <class Client>
void calls_in_every_form(Client& c) {
  const geerpc::context ctx = geerpc::with_timeout(10s).with_metadata("tag", "t");
  using None = TaggerApi::fn<"None">;
  using One = TaggerApi::fn<"One">;
  using Two = TaggerApi::fn<"Two">;

  // By name.
  CHECK(c.template call<std::string>("Tagger.Two", std::string("ab"), 2) == "-:abab");
  CHECK(c.template call<std::string>(ctx, "Tagger.Two", std::string("ab"), 2) == "t:abab");
  CHECK(c.template try_call<std::string>("Tagger.One", Pair{1, 2}).value() == "-:3");
  CHECK(c.template try_call<std::string>(ctx, "Tagger.One", Pair{1, 2}).value() == "t:3");
  CHECK(c.template async_call<std::string>("Tagger.None").get() == "-:none");
  CHECK(c.template async_call<std::string>(ctx, "Tagger.None").get() == "t:none");

  // Typed, no argument.
  CHECK(c.template call<None>() == "-:none");
  CHECK(c.template call<None>(ctx) == "t:none");
  CHECK(c.template try_call<None>(ctx).value() == "t:none");
  CHECK(c.template async_call<None>(ctx).get() == "t:none");

  // Typed, one argument: braced (as declared), and given as itself.
  CHECK(c.template call<One>({2, 3}) == "-:5");
  CHECK(c.template call<One>(ctx, {2, 3}) == "t:5");
  CHECK(c.template call<One>(ctx, Pair{3, 3}) == "t:6");
  CHECK(c.template try_call<One>({2, 3}).value() == "-:5");
  CHECK(c.template try_call<One>(ctx, {2, 3}).value() == "t:5");
  CHECK(c.template async_call<One>({2, 3}).get() == "-:5");
  CHECK(c.template async_call<One>(ctx, {2, 3}).get() == "t:5");

  // Typed, several arguments, each converted to its declared type (a literal to a std::string).
  CHECK(c.template call<Two>("x", 3) == "-:xxx");
  CHECK(c.template call<Two>(ctx, "x", 3) == "t:xxx");
  CHECK(c.template try_call<Two>(ctx, std::string_view("yz"), 1).value() == "t:yz");
  CHECK(c.template async_call<Two>("x", 2).get() == "-:xx");
  CHECK(c.template async_call<Two>(ctx, "x", 2).get() == "t:xx");

  // The context's deadline reaches the call too: one already past fails before anything is sent.
  const auto past = geerpc::with_deadline(std::chrono::steady_clock::now() - 1s);
  CHECK(c.template try_call<Two>(past, "x", 1).code() == geerpc::errc::deadline_exceeded);
  CHECK(c.template try_call<std::string>(past, "Tagger.None").code() == geerpc::errc::deadline_exceeded);
  CHECK(c.template async_call<One>(past, {1, 1}).try_get().code() == geerpc::errc::deadline_exceeded);
}

}  // namespace

TEST_CASE("call surface: every form, with and without a context, on a client", "[call_surface]") {
  tagger_server s;
  auto client = geerpc::dial(s.address, {.timeouts = {.connect = 5s}});
  calls_in_every_form(client);
}

TEST_CASE("call surface: every form, with and without a context, on a balanced client", "[call_surface]") {
  tagger_server a;
  tagger_server b;
  geerpc::balanced_client fleet(
      std::make_shared<geerpc::static_discovery>(std::vector<std::string>{a.address, b.address}),
      {.client = {.timeouts = {.connect = 5s}}});
  calls_in_every_form(fleet);
}

}  // namespace call_surface_test
