// geerpc-call's parts, without running it: the stderr line of every geerpc::errc, and the pretty
// layout of a reply, exact to the byte where a parse into boost::json::value would not be.
#include <set>
#include <string>

#include <boost/json/parse.hpp>

#include "catch.hpp"
#include "describe_format.hpp"
#include "failure.hpp"
#include "reply_format.hpp"

namespace cli_test {

TEST_CASE("geerpc-call: every errc has its name and its one line", "[cli]") {
  std::set<std::string> names;
  for (int value = 1; value <= static_cast<int>(geerpc::last_errc); ++value) {
    const auto code = static_cast<geerpc::errc>(value);
    INFO("errc " << value);
    const char* name = geerpc_call::errc_name(code);
    REQUIRE(name != nullptr);  // a new errc left out of errc_name
    CHECK(std::string(name).find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos);
    CHECK(names.insert(name).second);
    const geerpc::error e{geerpc::make_error_code(code), "what happened"};
    CHECK(geerpc_call::failure_line(geerpc_call::failure_of(e)) ==
          "geerpc-call: " + std::string(name) + ": what happened\n");
    CHECK(geerpc_call::failure_line(geerpc_call::failure_of(code, "m")) ==
          "geerpc-call: " + std::string(name) + ": m\n");
  }
  CHECK(geerpc_call::errc_name(geerpc::errc::deadline_exceeded) == std::string("deadline_exceeded"));
  CHECK(geerpc_call::errc_name(geerpc::errc::no_servers) == std::string("no_servers"));
  CHECK(geerpc_call::errc_name(static_cast<geerpc::errc>(static_cast<int>(geerpc::last_errc) + 1)) == nullptr);
  CHECK(geerpc_call::code_name({0, geerpc::category()}) == "geerpc:0");
  CHECK(geerpc_call::code_name({300, geerpc::category()}) == "geerpc:300");
  CHECK(geerpc_call::code_name(std::make_error_code(std::errc::timed_out)) ==
        "generic:" + std::to_string(static_cast<int>(std::errc::timed_out)));
}

// (Integers only: Boost.JSON prints 0.5 as 5E-1, which the next test's exactness is about.)
TEST_CASE("geerpc-call: a pretty reply is describe's layout of the server's text", "[cli]") {
  for (const char* text : {R"({"a":1,"b":[true,null,"x"],"c":{"d":{}},"e":[]})", R"([[1,[2]],{"k":[{}]}])",
                           R"("just a string")", "42", "[]", "{}", R"({"nested":{"deeper":{"deepest":[7]}}})"}) {
    INFO(text);
    CHECK(geerpc_call::reindented(text) == geerpc_call::indented(boost::json::parse(text)));
  }
}

TEST_CASE("geerpc-call: a pretty reply keeps every number and string byte for byte", "[cli]") {
  // Boost.JSON would print these as 1.2345678901234568E29, 1E2, -0E0 and refuse 1e400.
  CHECK(geerpc_call::reindented("[123456789012345678901234567890,1.0E+2,-0.0,1e400]") ==
        "[\n  123456789012345678901234567890,\n  1.0E+2,\n  -0.0,\n  1e400\n]");
  // Structural characters and escapes inside strings are the string's.
  CHECK(geerpc_call::reindented(R"({"a\"{,:}[":"x\\","\u00e9 ]":"\\\""})") ==
        "{\n  \"a\\\"{,:}[\": \"x\\\\\",\n  \"\\u00e9 ]\": \"\\\\\\\"\"\n}");
  // Whitespace outside strings is the layout's; inside them, the string's.
  CHECK(geerpc_call::reindented(" { \"a b\" : [ 1 ,\n2 ] , \"c\" : { } , \"d\" : [\t] } ") ==
        "{\n  \"a b\": [\n    1,\n    2\n  ],\n  \"c\": {},\n  \"d\": []\n}");
}

}  // namespace cli_test
