// GEERPC_ASSERT turned off (GEERPC_ENABLE_ASSERTS=0, as a release build without the project's own
// flags gets it): the condition is not evaluated, and a variable that only a check reads draws no
// warning (this file builds with -Wall -Wextra -Werror). That it is still type-checked is
// tests/compile_fail/assert_off_type_checks.cpp. This file includes no other geerpc header: the
// library's inline functions must see one setting in the whole program.
#undef GEERPC_ENABLE_ASSERTS
#define GEERPC_ENABLE_ASSERTS 0
#include <geerpc/detail/assert.hpp>

#include "catch.hpp"

TEST_CASE("an assertion turned off evaluates nothing and warns about nothing", "[assert]") {
  STATIC_REQUIRE(GEERPC_ENABLE_ASSERTS == 0);
  int evaluated = 0;
  GEERPC_ASSERT(++evaluated == 0, "never evaluated");
  GEERPC_ASSERT(false, "never fails");
  CHECK(evaluated == 0);
  int only_checked = 0;  // set, and read by a check alone
  only_checked = 3;      // NOLINT(clang-analyzer-deadcode.DeadStores): a store that only a check reads is the point
  GEERPC_ASSERT(only_checked == 3, "an unused-but-set variable if the check dropped it");
}
