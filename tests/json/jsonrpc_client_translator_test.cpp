// The jsonrpc@ client's translator alone (json/jsonrpc_client.hpp), without sockets: what it answers
// for the client's hello, the request lines it writes, and that the frames it makes of the
// server's bytes do not depend on where the reads were cut.
#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <geerpc/json.hpp>
#include <geerpc/json/jsonrpc_client.hpp>
#include <geerpc/wire/frame.hpp>
#include <geerpc/wire/handshake.hpp>

#include "catch.hpp"

namespace jsonrpc_client_translator_test {

namespace {

using geerpc::json::detail::jsonrpc_client_translator;

std::span<const std::byte> bytes(std::string_view text) { return std::as_bytes(std::span(text.data(), text.size())); }
std::string text_of(const std::vector<std::byte>& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// Appends a request frame of `seq` calling `method` with the JSON `params`.
void append_request(std::vector<std::byte>& out, std::uint64_t seq, std::string_view method, std::string_view params) {
  const std::size_t start = geerpc::wire::begin_frame(out, {geerpc::wire::frame_kind::request, 0, seq, 0}, method);
  const auto body = bytes(params);
  out.insert(out.end(), body.begin(), body.end());
  geerpc::wire::finish_frame(out, start);
}

// A translator that took a hello announcing `limit` and requests of seqs 1 to `calls`.
void open(jsonrpc_client_translator& t, std::uint32_t limit, int calls) {
  std::array<std::byte, geerpc::wire::hello_size> hello{};
  geerpc::wire::encode_hello({geerpc::wire::protocol_version, geerpc::json_codec::id, 0, limit}, hello);
  std::vector<std::byte> requests, to_client, text;
  for (int seq = 1; seq <= calls; ++seq) append_request(requests, static_cast<std::uint64_t>(seq), "Arith.Sum", "[1]");
  REQUIRE(t.from_client(hello, text, to_client).empty());
  REQUIRE(t.from_client(requests, text, to_client).empty());
}

struct frame {
  std::uint64_t seq;
  std::uint8_t status;
  std::string text, body;
  bool operator==(const frame&) const = default;
};

std::vector<frame> frames_of(const std::vector<std::byte>& out) {
  std::vector<frame> all;
  for (std::size_t at = 0; at < out.size();) {
    const auto rest = std::span<const std::byte>(out).subspan(at);
    const auto scan = geerpc::wire::scan_frame(rest, 1u << 30);
    REQUIRE(scan.what == geerpc::wire::frame_scan::state::complete);
    geerpc::wire::frame_view view;
    REQUIRE(geerpc::wire::parse_frame(rest.first(scan.size), view) == nullptr);
    REQUIRE(view.header.kind == geerpc::wire::frame_kind::response);
    all.push_back({view.header.seq, view.header.status, std::string(view.text),
                   std::string(reinterpret_cast<const char*>(view.body.data()), view.body.size())});
    at += scan.size;
  }
  // The failures of a broken stream come in no particular order.
  std::sort(all.begin(), all.end(), [](const frame& a, const frame& b) { return a.seq < b.seq; });
  return all;
}

}  // namespace

TEST_CASE("jsonrpc client translator: the hello is answered at once, requests become lines, cancels nothing",
          "[json][jsonrpc_client]") {
  jsonrpc_client_translator t("rpc client: jsonrpc@h:1");
  std::array<std::byte, geerpc::wire::hello_size> hello{};
  geerpc::wire::encode_hello({geerpc::wire::protocol_version, geerpc::json_codec::id, 0, 5000}, hello);
  std::vector<std::byte> text, to_client;
  // In two pieces: nothing until the hello is whole.
  CHECK(t.from_client(std::span(hello).first(7), text, to_client).empty());
  CHECK(to_client.empty());
  CHECK(t.from_client(std::span(hello).subspan(7), text, to_client).empty());
  std::vector<std::byte> expected;
  geerpc::wire::encode_hello_reply({true, 5000, {}, geerpc::wire::protocol_version}, expected);
  CHECK(to_client == expected);
  std::vector<std::byte> frames;
  const std::size_t start =
      geerpc::wire::begin_frame(frames, {geerpc::wire::frame_kind::request, 0, 9, 1234}, "A.\"B\"");
  const auto body = bytes(R"([{"x":1}])");
  frames.insert(frames.end(), body.begin(), body.end());
  geerpc::wire::finish_frame(frames, start);
  const auto cancel = geerpc::detail::cancel_frame(9);
  frames.insert(frames.end(), cancel.begin(), cancel.end());
  CHECK(t.from_client(frames, text, to_client).empty());
  CHECK(text_of(text) == "{\"method\":\"A.\\\"B\\\"\",\"params\":[{\"x\":1}],\"id\":9}\n");
  CHECK(t.waiting() == 1);
}

TEST_CASE("jsonrpc client translator: arguments with newlines between their tokens still make one line",
          "[json][jsonrpc_client]") {
  jsonrpc_client_translator t("rpc client: jsonrpc@h:1");
  open(t, 5000, 0);
  std::vector<std::byte> text, to_client, frames;
  append_request(frames, 3, "A.B", "[{\n\"x\":\r\n1}\n]");
  CHECK(t.from_client(frames, text, to_client).empty());
  CHECK(text_of(text) == "{\"method\":\"A.B\",\"params\":[{ \"x\":  1} ],\"id\":3}\n");
}

TEST_CASE("jsonrpc client translator: the frames do not depend on where the server's bytes are cut",
          "[json][jsonrpc_client]") {
  const std::vector<std::string> streams = {
      "{\"id\":2,\"result\":{\"a\":[1,\"}\\\"\"]},\"error\":null}\n{\"id\":1,\"result\":null,\"error\":\"rpc: can't "
      "find "
      "method X.Y\"}\n  \r\n{\"ID\":3,\"RESULT\":\"\\u00e9\"}",
      "{\"id\":1,\"result\":1,\"error\":null}{\"id\":4,\"result\":1,\"error\":null}",  // id 4 never sent
      "{\"id\":1,\"result\":[" + std::string(300, '7') + "]}",                         // past the limit of 256
      "{\"id\":1,\"result\":1,\"error\":null}\nnull\n",
      "{\"id\":2,\"result\":[[[[[[\"]]]]]]\"]]]]]],\"error\":5}\n",
  };
  for (const std::string& stream : streams) {
    CAPTURE(stream);
    jsonrpc_client_translator whole("w");
    open(whole, 256, 3);
    std::vector<std::byte> expected;
    const bool whole_ok = whole.from_server(bytes(stream), expected);
    for (std::size_t cut = 1; cut < 8; ++cut) {
      jsonrpc_client_translator pieces("w");
      open(pieces, 256, 3);
      std::vector<std::byte> got;
      bool ok = true;
      for (std::size_t at = 0; at < stream.size() && ok; at += cut)
        ok = pieces.from_server(bytes(std::string_view(stream).substr(at, cut)), got);
      CHECK(ok == whole_ok);
      CHECK(frames_of(got) == frames_of(expected));
      CHECK(pieces.why() == whole.why());
    }
  }
}

TEST_CASE("jsonrpc client translator: calls Go never answers are kept up to a bound, and late answers pass",
          "[json][jsonrpc_client]") {
  // Calls that gave up on the client (a deadline) stay waiting here: 10,000 of them hold no more
  // than the bound, the oldest forgotten.
  constexpr int calls = 10'000;
  constexpr std::size_t bound = jsonrpc_client_translator::default_max_waiting;
  static_assert(calls > static_cast<int>(bound));
  jsonrpc_client_translator t("w");
  open(t, 1u << 20, calls);
  CHECK(t.waiting() == bound);
  CHECK(t.forgotten() == calls - bound);
  std::vector<std::byte> out;
  // A late answer to a forgotten call is passed on (the engine drops it): the stream goes on.
  CHECK(t.from_server(bytes(R"({"id":1,"result":7,"error":null})"
                            "\n"),
                      out));
  CHECK(frames_of(out) == std::vector<frame>{{1, 0, "", "7"}});
  out.clear();
  // So is one to a call still kept, which is then no longer waiting.
  CHECK(t.from_server(bytes(R"({"id":10000,"result":8,"error":null})"
                            "\n"),
                      out));
  CHECK(frames_of(out) == std::vector<frame>{{calls, 0, "", "8"}});
  CHECK(t.waiting() == bound - 1);
  out.clear();
  // A second answer to a call kept and answered is still a duplicate, and an id never sent fails.
  jsonrpc_client_translator again = t;
  CHECK_FALSE(again.from_server(bytes(R"({"id":10000,"result":8,"error":null})"
                                      "\n"),
                                out));
  CHECK(again.why().find("which no call waits for") != std::string::npos);
  out.clear();
  jsonrpc_client_translator zero = t;  // below the first call forgotten: never sent
  CHECK_FALSE(zero.from_server(bytes(R"({"id":0,"result":8,"error":null})"
                                     "\n"),
                               out));
  out.clear();
  CHECK_FALSE(t.from_server(bytes(R"({"id":10001,"result":9,"error":null})"
                                  "\n"),
                            out));
  CHECK(t.why() ==
        "w: a response for id 10001, which no call waits for (never sent, or answered) (the response at "
        "byte 70)");
  // The calls still kept get the failure, and nothing is left waiting.
  CHECK(frames_of(out).size() == bound - 1);
  CHECK(t.waiting() == 0);
}

TEST_CASE("jsonrpc client translator: a call that reaches it after a higher one was forgotten is late once forgotten",
          "[json][jsonrpc_client]") {
  // The threaded engine numbers its calls under a lock and hands them over outside it: seq 1 may
  // come after seq 2 was forgotten. Forgotten in turn, its answer is late, not "never sent".
  jsonrpc_client_translator t("w", 1);
  std::array<std::byte, geerpc::wire::hello_size> hello{};
  geerpc::wire::encode_hello({geerpc::wire::protocol_version, geerpc::json_codec::id, 0, 1u << 20}, hello);
  std::vector<std::byte> text, to_client;
  REQUIRE(t.from_client(hello, text, to_client).empty());
  for (const std::uint64_t seq : {2, 3, 1}) {
    std::vector<std::byte> request;
    const std::size_t start =
        geerpc::wire::begin_frame(request, {geerpc::wire::frame_kind::request, 0, seq, 0}, "Arith.Sum");
    const auto body = bytes("[1]");
    request.insert(request.end(), body.begin(), body.end());
    geerpc::wire::finish_frame(request, start);
    REQUIRE(t.from_client(request, text, to_client).empty());
  }
  REQUIRE(t.forgotten() == 2);  // 2, then 1
  std::vector<std::byte> out;
  CHECK(t.from_server(bytes("{\"id\":1,\"result\":7,\"error\":null}\n"), out));
  CHECK(t.why().empty());
  CHECK(frames_of(out) == std::vector<frame>{{1, 0, "", "7"}});
}

TEST_CASE("jsonrpc client translator: a method name that is not UTF-8 goes with U+FFFD for each bad byte",
          "[json][jsonrpc_client]") {
  jsonrpc_client_translator t("w");
  open(t, 1u << 20, 0);
  std::vector<std::byte> request, text, to_client;
  append_request(request, 1, "X.\xff", "[1]");
  CHECK(t.from_client(request, text, to_client).empty());
  CHECK(text_of(text) == "{\"method\":\"X.\xef\xbf\xbd\",\"params\":[1],\"id\":1}\n");
}

}  // namespace jsonrpc_client_translator_test
