// The standard containers the codec recognises by shape (codec/container_shape.hpp) get the kinds
// they had when it named them, and containers it never carried are still refused.
#include <geerpc/codec/type_kind.hpp>

#include <bitset>
#include <catch2/catch.hpp>
#include <deque>
#include <forward_list>
#include <functional>
#include <list>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace container_shape_test {

using geerpc::codec::kind_of;
using geerpc::codec::type_kind;

template <class A, class B>
struct two {
  A a;
  B b;
};
template <class A, class B, class C, class D>
struct four {
  A a;
  B b;
  C c;
  D d;
};

TEST_CASE("container shapes: the standard containers keep their kinds", "[codec]") {
  STATIC_REQUIRE(kind_of<std::map<int, std::string>>() == type_kind::map);
  STATIC_REQUIRE(kind_of<std::map<std::string, std::vector<int>, std::greater<>>>() == type_kind::map);
  STATIC_REQUIRE(kind_of<std::unordered_map<int, int>>() == type_kind::map);
  STATIC_REQUIRE(kind_of<std::set<int>>() == type_kind::set);
  STATIC_REQUIRE(kind_of<std::multiset<std::string>>() == type_kind::set);
  STATIC_REQUIRE(kind_of<std::unordered_multiset<int>>() == type_kind::set);
  STATIC_REQUIRE(kind_of<std::deque<int>>() == type_kind::sequence);
  STATIC_REQUIRE(kind_of<std::list<std::string>>() == type_kind::sequence);
  STATIC_REQUIRE(kind_of<std::vector<int>>() == type_kind::vector);
  STATIC_REQUIRE(kind_of<std::bitset<9>>() == type_kind::bitset);
}

TEST_CASE("container shapes: what the codec never carried stays refused", "[codec]") {
  STATIC_REQUIRE(kind_of<std::multimap<int, int>>() == type_kind::unsupported);
  STATIC_REQUIRE(kind_of<std::unordered_multimap<int, int>>() == type_kind::unsupported);
  STATIC_REQUIRE(kind_of<std::forward_list<int>>() == type_kind::unsupported);
  STATIC_REQUIRE(kind_of<std::wstring>() == type_kind::unsupported);
}

TEST_CASE("container shapes: aggregate templates of two or four parameters stay aggregates", "[codec]") {
  STATIC_REQUIRE(kind_of<two<int, std::string>>() == type_kind::aggregate);
  STATIC_REQUIRE(kind_of<four<int, int, int, int>>() == type_kind::aggregate);
}

}  // namespace container_shape_test
