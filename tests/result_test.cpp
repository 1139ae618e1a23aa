// result<T>, what the non-throwing calls return: holds a value or an error through copies, moves
// and assignments between the two states, with move-only values, and throws the error's message.
#include <geerpc/error.hpp>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "catch.hpp"

namespace result_test {

namespace {
geerpc::error busy() { return {geerpc::make_error_code(geerpc::errc::busy), "server busy: try later"}; }
}  // namespace

static_assert(std::is_copy_constructible_v<geerpc::result<std::vector<int>>>);
static_assert(!std::is_copy_constructible_v<geerpc::result<std::unique_ptr<int>>>);
static_assert(!std::is_copy_assignable_v<geerpc::result<std::unique_ptr<int>>>);
static_assert(std::is_nothrow_move_constructible_v<geerpc::result<std::vector<int>>>);

TEST_CASE("result keeps a value or an error across copies, moves and assignments", "[errors]") {
  const geerpc::result<std::vector<int>> value(std::vector<int>{1, 2, 3});
  const geerpc::result<std::vector<int>> failure(busy());
  REQUIRE(value.has_value());
  CHECK(value.value() == std::vector<int>{1, 2, 3});
  CHECK(value.code() == std::error_code{});
  CHECK(value.message().empty());
  REQUIRE_FALSE(failure);
  CHECK(failure.code() == geerpc::errc::busy);
  CHECK_THROWS_WITH(failure.value(), "server busy: try later");

  geerpc::result<std::vector<int>> r = value;  // value -> copy
  r = failure;                                 // value -> error
  CHECK_FALSE(r.has_value());
  CHECK(r.message() == "server busy: try later");
  r = value;  // error -> value
  REQUIRE(r.has_value());
  CHECK(r->size() == 3);
  geerpc::result<std::vector<int>> moved = std::move(r);
  CHECK(moved.value() == std::vector<int>{1, 2, 3});
  moved = geerpc::result<std::vector<int>>(busy());  // value -> error by move
  CHECK(moved.code() == geerpc::errc::busy);
  moved = geerpc::result<std::vector<int>>(std::vector<int>{4});  // error -> value by move
  CHECK(*moved == std::vector<int>{4});
  const std::vector<int> taken = std::move(moved).value();  // the rvalue overload moves the value out
  CHECK(taken == std::vector<int>{4});
}

TEST_CASE("result holds a move-only value", "[errors]") {
  geerpc::result<std::unique_ptr<int>> r(std::make_unique<int>(7));
  geerpc::result<std::unique_ptr<int>> other = std::move(r);
  REQUIRE(other.has_value());
  CHECK(**other == 7);
  r = std::move(other);
  CHECK(*r.value() == 7);
  const std::unique_ptr<int> taken = std::move(r).value();
  CHECK(*taken == 7);
}

}  // namespace result_test
