// What the debug page and its JSON make of text a peer chose (server/page_text.hpp): markup and
// JSON escaped, and always well-formed UTF-8, whatever bytes came in; and, end to end, a method
// name of odd bytes that a peer sent, as stats.json shows it.
#include <string>
#include <string_view>

#include "catch.hpp"
#include "support.hpp"

namespace page_text_test {

using geerpc::detail::append_html_escaped;
using geerpc::detail::append_json_string;
using geerpc::detail::utf8_sequence_length;

namespace {

std::string json(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

std::string html(std::string_view text) {
  std::string out;
  append_html_escaped(out, text);
  return out;
}

// Whether every byte of `text` belongs to a well-formed UTF-8 sequence.
bool well_formed(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = utf8_sequence_length(text.substr(at));
    if (length == 0) return false;
    at += length;
  }
  return true;
}

}  // namespace

TEST_CASE("page text: well-formed UTF-8 sequences, and the ones that are not", "[page_text]") {
  CHECK(utf8_sequence_length("a") == 1);
  CHECK(utf8_sequence_length("\xc3\xa9") == 2);          // é
  CHECK(utf8_sequence_length("\xe2\x82\xac") == 3);      // €
  CHECK(utf8_sequence_length("\xf0\x9f\x98\x80") == 4);  // U+1F600
  CHECK(utf8_sequence_length("\xf4\x8f\xbf\xbf") == 4);  // U+10FFFF, the last
  CHECK(utf8_sequence_length("\x80") == 0);              // a continuation byte alone
  CHECK(utf8_sequence_length("\xc0\xaf") == 0);          // overlong '/'
  CHECK(utf8_sequence_length("\xe0\x80\xaf") == 0);      // overlong, three bytes
  CHECK(utf8_sequence_length("\xed\xa0\x80") == 0);      // a surrogate, U+D800
  CHECK(utf8_sequence_length("\xf4\x90\x80\x80") == 0);  // past U+10FFFF
  CHECK(utf8_sequence_length("\xe2\x82") == 0);          // cut short
  CHECK(utf8_sequence_length("\xc3(") == 0);             // a lead byte without its continuation
  CHECK(utf8_sequence_length("\xff") == 0);
}

TEST_CASE("page text: JSON strings are escaped and always valid UTF-8", "[page_text]") {
  CHECK(json("Shop.Quote") == "\"Shop.Quote\"");
  CHECK(json("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(json("tab\there\x01") == "\"tab\\u0009here\\u0001\"");
  CHECK(json("del\x7f") == "\"del\\u007f\"");
  CHECK(json("caf\xc3\xa9 \xe2\x82\xac") == "\"caf\xc3\xa9 \xe2\x82\xac\"");  // well-formed text passes as it is
  CHECK(json("\xff") == "\"\\ufffd\"");
  CHECK(json("x\xc3(") == "\"x\\ufffd(\"");
  CHECK(json("\xed\xa0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");  // a surrogate: each byte replaced
  CHECK(json("\xe2\x82") == "\"\\ufffd\\ufffd\"");             // cut short at the end
  for (int byte = 0; byte < 256; ++byte) {
    const std::string one(1, static_cast<char>(byte));
    INFO(byte);
    CHECK(well_formed(json("a" + one + "\xc3\xa9" + one)));
  }
}

TEST_CASE("page text: HTML is escaped and always valid UTF-8", "[page_text]") {
  CHECK(html("<script>alert('x') & \"y\"</script>") ==
        "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;");
  CHECK(html("caf\xc3\xa9") == "caf\xc3\xa9");
  CHECK(html("a\x01\x7f\xff<") == "a&#xfffd;&#xfffd;&#xfffd;&lt;");
  for (int byte = 0; byte < 256; ++byte) {
    const std::string one(1, static_cast<char>(byte));
    INFO(byte);
    CHECK(well_formed(html(one + "\xe2\x82\xac" + one)));
  }
}

TEMPLATE_TEST_CASE("page text: a method name of odd bytes from a peer shows printable in stats.json", "[page_text]",
                   GEERPC_TRANSPORTS) {
  test::arith_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address);
  const std::string odd = "Arith.\xff\xc3(\x01\"<blink>";
  CHECK(client.template try_call<int>(odd, test::Args{1, 2}).code() == geerpc::errc::unknown_method);
  std::string body;
  REQUIRE(test::eventually([&] {
    body = test::http_get(s.address, "/debug/geerpc/stats.json");
    return body.find("\"recent_calls\":[{") != std::string::npos;
  }));
  INFO(body);
  CHECK(well_formed(body));
  CHECK(body.find("Arith.\\\\xff\\\\xc3(\\\\x01\\\"<blink>") != std::string::npos);
  const std::string page = test::http_get(s.address, "/debug/geerpc");
  CHECK(well_formed(page));
  CHECK(page.find("<blink>") == std::string::npos);
}

}  // namespace page_text_test
