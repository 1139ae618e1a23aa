// The debug page with hostile input: what a peer controls and the page shows (method names it
// made up, handlers' and interceptors' messages built from its arguments or metadata, its own
// Unix socket name) goes through real calls, and the page must stay HTML with no markup but its
// own, and its JSON one strict JSON value in well-formed UTF-8, whatever the bytes.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "catch.hpp"
#include "strict_json.hpp"
#include "support.hpp"

namespace debug_page_hostile_test {

using namespace std::chrono_literals;
using namespace std::string_literals;

namespace {

struct Hostile {
  int fail(const std::string& message) { throw std::runtime_error(message); }
};
using HostileApi = geerpc::service<"Hostile",                                 //
                                   geerpc::method<"Fail", &Hostile::fail>,    //
                                   geerpc::method<"Refused", &Hostile::fail>  // refused by the interceptor
                                   >;

// Texts a peer may make a server show, each in a message (the 1 MiB one is added by the test).
const std::vector<std::string> hostile_texts = {
    "<script>alert(1)</script>",
    "\"quoted\" 'single' & </textarea><textarea> <!-- --> ]]>",
    "invalid \xff\xfe bytes",
    "overlong \xc0\xaf \xe0\x80\xaf \xf0\x80\x80\xaf slashes",
    "lone surrogates \xed\xa0\x80 \xed\xbf\xbf",
    "past U+10FFFF \xf4\x90\x80\x80 and \xf8\x88\x80\x80\x80",
    "controls \x01\x1b[31m\x7f\t\r\n and a cut sequence \xe2\x82",
    "\xe2\x80\xa8 line separators \xe2\x80\xa9 and fine UTF-8: na\xc3\xafve \xe2\x82\xac \xf0\x9f\x98\x80",
};

// The tags the page writes itself: any other '<' in it came from someone's text.
bool only_own_markup(const std::string& html, std::string& stray) {
  static const std::vector<std::string_view> own = {"html", "head", "meta",  "title", "style", "body", "h1",  "h2",
                                                    "p",    "a",    "table", "tr",    "th",    "td",   "span"};
  for (std::size_t at = html.find('<'); at != std::string::npos; at = html.find('<', at + 1)) {
    std::string_view tag = std::string_view(html).substr(at + 1);
    if (tag.starts_with("!DOCTYPE html>")) continue;
    if (tag.starts_with('/')) tag.remove_prefix(1);
    const std::size_t end = tag.find_first_of(" >");
    if (end == std::string_view::npos || std::find(own.begin(), own.end(), tag.substr(0, end)) == own.end()) {
      stray = html.substr(at, 60);
      return false;
    }
  }
  return true;
}

// A raw geerpc peer on a Unix socket bound to the abstract name `name` (any bytes, NUL too), so
// that the server sees that name as its peer's.
std::unique_ptr<test::raw_peer> peer_named(const std::string& server_path, const std::string& name) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto peer = std::make_unique<test::raw_peer>(test::raw_peer::accepted, fd);
  sockaddr_un own{};
  own.sun_family = AF_UNIX;
  REQUIRE(name.size() + 1 <= sizeof own.sun_path);
  std::memcpy(own.sun_path + 1, name.data(), name.size());  // sun_path[0] == '\0': abstract
  const auto own_size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&own), own_size) == 0);
  sockaddr_un server{};
  server.sun_family = AF_UNIX;
  std::memcpy(server.sun_path, server_path.data(), server_path.size());
  REQUIRE(::connect(fd, reinterpret_cast<const sockaddr*>(&server), sizeof server) == 0);
  peer->send_hello();
  const auto reply = peer->read_hello_reply();
  REQUIRE(reply);
  return peer;
}

}  // namespace

TEST_CASE("debug page hostile: the strict JSON check refuses what is not JSON or not UTF-8", "[debug_page][hostile]") {
  CHECK(test::strict_json::check(R"({"a":[1,-2.5e3,true,null,"x\u00e9\ud83d\ude00\n"]})").empty());
  for (const std::string& bad :
       {"{\"a\":1,}"s, "[1 2]"s, "{\"a\"}"s, "\"\x01\""s, "\"\\x41\""s, "\"\\ud800\""s, "\"\\udc00\""s, "01"s,
        "\"\xff\""s, "\"\xc0\xaf\""s, "\"\xed\xa0\x80\""s, "\"\xe2\x82\""s, "{} {}"s, "\"open"s, "\"\0\""s}) {
    INFO(bad);
    CHECK_FALSE(test::strict_json::check(bad).empty());
  }
  CHECK(test::valid_utf8("na\xc3\xafve \xf0\x9f\x98\x80"));
  CHECK_FALSE(test::valid_utf8("\xf4\x90\x80\x80"));
}

TEST_CASE("debug page hostile: a long message is kept cut where a character begins, saying how long it was",
          "[debug_page][hostile]") {
  using stats = geerpc::detail::server_statistics;
  constexpr std::size_t limit = stats::kept_message_bytes;
  std::string fits(limit, 'a');
  stats::cut_message(fits);
  CHECK(fits == std::string(limit, 'a'));
  // A character of 1 to 4 bytes that would straddle the limit is left out whole.
  for (const std::string character : {"b", "\xc3\xaf", "\xe2\x82\xac", "\xf0\x9f\x98\x80"}) {
    INFO(character.size() << " bytes");
    std::string message(limit - 1, 'a');
    message += character + "tail";
    const std::size_t size = message.size();
    stats::cut_message(message);
    const std::string kept = std::string(limit - 1, 'a') + (character.size() == 1 ? character : "");
    CHECK(message == kept + "... (" + std::to_string(size) + " bytes in all)");
    CHECK(test::valid_utf8(message));
  }
  std::string garbage(2 * limit, '\x80');  // no character starts anywhere: cut at most 3 bytes early
  stats::cut_message(garbage);
  CHECK(garbage.starts_with(std::string(limit - 3, '\x80') + "... (2048 bytes in all)"));
}

TEMPLATE_TEST_CASE("debug page hostile: names, messages and peer names are escaped in the HTML and valid in the JSON",
                   "[debug_page][hostile]", GEERPC_TRANSPORTS) {
  test::temp_dir dir;
  Hostile hostile;
  geerpc::basic_server<TestType> server(test::with_test_io_threads({}));
  server.template add<HostileApi>(hostile);
  // An interceptor that refuses Hostile.Refused with the caller's metadata as its message: NUL and
  // all (an exception's what() would stop at a NUL).
  server.use({.before = [](const geerpc::call_context& ctx) -> std::optional<geerpc::error> {
    if (ctx.method() != "Hostile.Refused") return std::nullopt;
    return geerpc::error{geerpc::errc::permission_denied, std::string(ctx.metadata("say").value_or(""))};
  }});
  const std::string address = server.listen(dir.socket());
  auto client = geerpc::dial<TestType>(address);

  std::vector<std::string> messages = hostile_texts;
  std::string huge;
  while (huge.size() < (1u << 20)) huge += "<script>\xff\xed\xa0\x80";
  messages.push_back(huge);
  for (const std::string& message : messages) CHECK_THROWS(client.template call<int>("Hostile.Fail", message));
  for (const std::string& text : hostile_texts)
    CHECK_THROWS(
        client.template call<int>(geerpc::with_metadata("say", "NUL \0 in "s + text), "Hostile.Refused", text));
  for (const std::string& name : {"Hostile.<script>alert(1)</script>"s, "<b>\xff\xfe\0.x"s, "Hostile.\xed\xa0\x80\""s})
    CHECK_THROWS(client.template call<int>(name, "x"s));

  // A peer whose own Unix socket name is hostile, connected while the page is read.
  // Abstract names are one namespace for the whole machine: the process id keeps this test's
  // instances, which ctest runs side by side, from taking each other's name.
  static int named_peers = 0;
  const std::string peer_name = "<script>\"peer\" & \xff\xfe\0\xed\xa0\x80</textarea> "s + std::to_string(::getpid()) +
                                "." + std::to_string(++named_peers);
  auto named = peer_named(address.substr(5), peer_name);
  named->send(test::request_frame(1, "Hostile.Fail", "from a named peer"s));
  const auto answer = named->read_frame();
  REQUIRE(answer);
  CHECK(answer->header.status == static_cast<std::uint8_t>(geerpc::errc::remote_error));

  // A call's record is kept once it has been answered: wait until the JSON has all of them.
  const std::size_t calls = messages.size() + hostile_texts.size() + 3 + 1;
  const auto records = [&] {
    const std::string json = test::http_get(address, "/debug/geerpc/stats.json");
    std::size_t n = 0;
    for (auto at = json.find("\"finished_unix_ms\""); at != std::string::npos;
         at = json.find("\"finished_unix_ms\"", at + 1))
      ++n;
    return n;
  };
  REQUIRE(test::eventually([&] { return records() == calls; }));

  const std::string html = test::http_get(address, "/debug/geerpc");
  std::string stray;
  const bool own_markup = only_own_markup(html, stray);
  INFO("stray markup: " << stray);
  CHECK(own_markup);
  CHECK(test::valid_utf8(html));
  CHECK(html.find('\0') == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("&lt;/textarea&gt;&lt;textarea&gt;") != std::string::npos);
  CHECK(html.find("&quot;quoted&quot; &#39;single&#39; &amp;") != std::string::npos);
  CHECK(html.find("unix@@&lt;script&gt;&quot;peer&quot; &amp; ") != std::string::npos);  // the peer's name

  // The 1 MiB message is kept cut, at a character's start, saying how long it was: the page stays
  // small, and the server does not hold the last 100 calls' messages whole.
  CHECK(html.size() < (256u << 10));
  CHECK(html.find("&lt;script&gt;&#xfffd;&#xfffd;&#xfffd;&#xfffd;&lt;script&gt;") != std::string::npos);
  CHECK(html.find("... (" + std::to_string(huge.size()) + " bytes in all)") != std::string::npos);

  const std::string json = test::http_get(address, "/debug/geerpc/stats.json");
  CHECK(json.size() < (256u << 10));
  const std::string why = test::strict_json::check(json);
  INFO("the JSON: " << why);
  CHECK(why.empty());
  CHECK(json.find(R"(NUL \u0000 in <script>alert(1)</script>)") != std::string::npos);
  CHECK(json.find(R"(\"quoted\" 'single' & </textarea>)") != std::string::npos);
  CHECK(json.find(R"("peer":"unix@@<script>\"peer\" & \ufffd\ufffd\u0000\ufffd\ufffd\ufffd</textarea> )") !=
        std::string::npos);
}

}  // namespace debug_page_hostile_test
