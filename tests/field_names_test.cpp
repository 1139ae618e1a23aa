// An aggregate's field names at compile time (codec/field_names.hpp): reflected from the compiler's
// own spelling on GCC and Clang, for every kind of class the codec reflects (in a namespace, an
// unnamed namespace, a function, a template; empty; many fields), or given by the user; and shown
// on the debug page with each field's type.
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace field_names_test {
// Named by the user: a type whose fields travel under other names than its members'.
struct legacy_point {
  int x;
  int y;
};
}  // namespace field_names_test

template <>
struct geerpc::codec::field_naming<field_names_test::legacy_point> {
  static constexpr std::array<std::string_view, 2> names{"X", "Y"};
};

namespace field_names_test {

using geerpc::codec::field_names;

namespace shop {
struct put_args {
  std::string key;
  std::vector<std::uint8_t> value;
  std::optional<std::chrono::milliseconds> ttl;
};
}  // namespace shop

namespace {
// GCC spells this namespace "{anonymous}": braces inside the text the names are read from.
struct unnamed_namespace_args {
  int first;
  std::map<std::string, int> second_2;
};
}  // namespace

template <class T>
struct wrapped {
  T inner;
  std::pair<int, int> _pair;
};

struct nothing {};

// A field named like its type, a type named like a field, and names that end in digits.
struct key {
  int key;
  shop::put_args put_args;
  int v1;
  int v10;
};

struct forty {
  int f00, f01, f02, f03, f04, f05, f06, f07, f08, f09, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19;
  int f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30, f31, f32, f33, f34, f35, f36, f37, f38, f39;
};

template <std::size_t N>
bool names_are(const std::array<std::string_view, N>& names, std::vector<std::string_view> expected) {
  return std::vector<std::string_view>(names.begin(), names.end()) == expected;
}

// At compile time, where the debug page and a codec take them from.
static_assert(field_names<shop::put_args>()[0] == "key");
static_assert(field_names<legacy_point>()[1] == "Y");
static_assert(field_names<nothing>().empty());

TEST_CASE("field names: an aggregate's fields are named as declared, in order", "[field_names]") {
  CHECK(names_are(field_names<shop::put_args>(), {"key", "value", "ttl"}));
  CHECK(names_are(field_names<unnamed_namespace_args>(), {"first", "second_2"}));
  CHECK(names_are(field_names<wrapped<shop::put_args>>(), {"inner", "_pair"}));
  CHECK(names_are(field_names<wrapped<unnamed_namespace_args>>(), {"inner", "_pair"}));
  CHECK(names_are(field_names<key>(), {"key", "put_args", "v1", "v10"}));
  CHECK(field_names<nothing>().empty());
  struct local_args {
    double local_field;
    bool flag;
  };
  CHECK(names_are(field_names<local_args>(), {"local_field", "flag"}));
}

TEST_CASE("field names: forty fields, each its own", "[field_names]") {
  constexpr auto names = field_names<forty>();
  STATIC_REQUIRE(names.size() == 40);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string expected = std::string("f") + static_cast<char>('0' + i / 10) + static_cast<char>('0' + i % 10);
    CHECK(names[i] == expected);
  }
}

TEST_CASE("field names: a type's names given by the user replace the reflected ones", "[field_names]") {
  CHECK(names_are(field_names<legacy_point>(), {"X", "Y"}));
  CHECK_FALSE(geerpc::codec::detail::are_field_names(std::array<std::string_view, 2>{"a", "a"}));
  CHECK_FALSE(geerpc::codec::detail::are_field_names(std::array<std::string_view, 1>{""}));
  CHECK_FALSE(geerpc::codec::detail::are_field_names(std::array<std::string_view, 1>{"2x"}));
  CHECK_FALSE(geerpc::codec::detail::are_field_names(std::array<std::string_view, 1>{"a-b"}));
  CHECK(geerpc::codec::detail::are_field_names(std::array<std::string_view, 2>{"_a", "b2"}));
}

TEST_CASE("field names: the debug page's signature names a struct's fields and their types", "[field_names]") {
  using geerpc::detail::described_type_name;
  CHECK(described_type_name<legacy_point>() == "field_names_test::legacy_point{X: int, Y: int}");
  CHECK(described_type_name<const key&>() ==
        "field_names_test::key{key: int, put_args: field_names_test::shop::put_args, v1: int, v10: int}");
  CHECK(described_type_name<nothing>() == "field_names_test::nothing{}");
  CHECK(described_type_name<std::string>() == "std::string");  // not an aggregate: its name alone
  CHECK(geerpc::detail::signature_of<std::tuple<legacy_point, int>, void>() ==
        "(field_names_test::legacy_point{X: int, Y: int}, int) -> void");
}

}  // namespace field_names_test
