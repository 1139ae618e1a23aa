// Type names as the debug page shows them: put together from their parts, so that a type nested N
// deep has a name of about N parts (the compiler's own spelling of it doubled with each level,
// naming every default allocator, and a method whose argument nested 16 deep cost the server
// seconds at start, building and tidying a 2 MB name).
#include <array>
#include <chrono>
#include <geerpc/detail/type_name.hpp>
#include <geerpc/geerpc.hpp>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "catch.hpp"

namespace type_name_test {

template <class T, int Depth>
struct nest {
  using type = std::vector<typename nest<T, Depth - 1>::type>;
};
template <class T>
struct nest<T, 0> {
  using type = T;
};

template <class T>
struct box {
  T value;
};

// "std::vector<" Depth times, then int and the closing brackets.
std::string nested_name(int depth) {
  std::string out;
  for (int i = 0; i < depth; ++i) out += "std::vector<";
  out += "int";
  out.append(static_cast<std::size_t>(depth), '>');
  return out;
}

using nested16 = nest<int, 16>::type;
// The codec's encoders and decoders recurse through function templates, whose cost with Clang 14
// grows much faster than the depth (a call with nested16 took over 10 minutes and 8 GB to compile
// under ASan at -O2): the call below nests 8 deep; the name is checked at 16 above.
using nested8 = nest<int, 8>::type;

struct sizes {
  int size(const nested8& v) { return static_cast<int>(v.size()); }
};
using SizesApi = geerpc::service<"Sizes", geerpc::method<"Size", &sizes::size>>;

}  // namespace type_name_test

using geerpc::detail::type_name;
using namespace type_name_test;

TEST_CASE("a nested type's name grows by one part per level", "[type_name]") {
  CHECK(type_name<nest<int, 1>::type>() == nested_name(1));
  CHECK(type_name<nest<int, 8>::type>() == nested_name(8));
  const std::string name = type_name<nested16>();
  CHECK(name.size() == 3 + 16 * std::string_view("std::vector<>").size());  // 211; it was 2 MB
  CHECK(name == nested_name(16));
  // Not 64 here: the name parses in 0.6 s at that depth, but GCC's and Clang's optimisers take
  // minutes over its 64 levels at -O2 (the sanitizer builds), which is still to be cut.
}

TEST_CASE("type names leave out default arguments and libstdc++'s inline namespace", "[type_name]") {
  CHECK(type_name<std::string>() == "std::string");
  CHECK(type_name<const std::string&>() == "const std::string&");
  CHECK(type_name<std::vector<std::string>>() == "std::vector<std::string>");
  CHECK(type_name<std::map<std::string, std::vector<int>>>() == "std::map<std::string, std::vector<int>>");
  CHECK(type_name<std::optional<std::array<char, 4>>>() == "std::optional<std::array<char, 4>>");
  CHECK(type_name<std::tuple<int, std::string>>() == "std::tuple<int, std::string>");
  CHECK(type_name<std::tuple<>>() == "std::tuple<>");
  CHECK(type_name<std::span<const int>>() == "std::span<const int>");
  CHECK(type_name<std::span<const int, 3>>() == "std::span<const int, 3>");
  CHECK(type_name<std::chrono::milliseconds>() ==
        "std::chrono::duration<" + type_name<long>() + ", std::ratio<1, 1000>>");
  CHECK(type_name<box<std::vector<int>>>() == "type_name_test::box<std::vector<int>>");
  CHECK(type_name<void>() == "void");
}

TEST_CASE("a method whose argument nests 8 deep registers and answers", "[type_name]") {
  sizes impl;
  geerpc::server server;
  server.add<SizesApi>(impl);
  auto client = geerpc::dial(server.listen("127.0.0.1:0"));
  nested8 value(3);
  CHECK(client.call<SizesApi::fn<"Size">>(value) == 3);
}
