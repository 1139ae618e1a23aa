// detail::random_index, the balanced client's choice of a server: every index below the count,
// each about as often as the others, and two generators made at once draw different sequences.
#include <geerpc/detail/random_index.hpp>

#include <array>
#include <catch2/catch.hpp>
#include <cstddef>
#include <vector>

namespace random_index_test {

TEST_CASE("random_index: below(n) stays under n and reaches each index about equally", "[balanced]") {
  geerpc::detail::random_index random;
  constexpr std::size_t count = 7;
  constexpr int draws = 70'000;
  std::array<int, count> seen{};
  for (int i = 0; i < draws; ++i) {
    const std::size_t k = random.below(count);
    REQUIRE(k < count);
    ++seen[k];
  }
  for (const int n : seen) {  // 10,000 expected; a fair die is within 600 but once in 10^9 runs
    CHECK(n > 9'400);
    CHECK(n < 10'600);
  }
  CHECK(random.below(1) == 0);
}

TEST_CASE("random_index: two made at once draw different sequences", "[balanced]") {
  std::vector<geerpc::detail::random_index> two(2);
  int same = 0;
  for (int i = 0; i < 64; ++i) same += two[0].below(1'000'000) == two[1].below(1'000'000) ? 1 : 0;
  CHECK(same < 4);
}

}  // namespace random_index_test
