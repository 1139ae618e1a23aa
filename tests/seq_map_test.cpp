// The in-flight table: checked against std::unordered_map under random inserts and erases.
#include <geerpc/detail/seq_map.hpp>
#include <random>
#include <unordered_map>
#include <vector>

#include "catch.hpp"

namespace seq_map_test {

TEST_CASE("seq_map agrees with std::unordered_map under random use", "[seq_map]") {
  geerpc::detail::seq_map<int> map;
  std::unordered_map<std::uint64_t, int*> reference;
  std::vector<int> values(64);
  std::mt19937_64 rng(7);
  for (int step = 0; step < 200000; ++step) {
    // Few distinct keys, so that probe runs collide, wrap around and get shifted back.
    const std::uint64_t key = rng() % 3 == 0 ? rng() : rng() % 300;
    int* value = &values[rng() % values.size()];
    switch (rng() % 3) {
      case 0:
        CHECK(map.insert(key, value) == reference.emplace(key, value).second);
        break;
      case 1: {
        auto it = reference.find(key);
        int* expected = it == reference.end() ? nullptr : it->second;
        if (it != reference.end()) reference.erase(it);
        REQUIRE(map.erase(key) == expected);
        break;
      }
      default: {
        auto it = reference.find(key);
        REQUIRE(map.find(key) == (it == reference.end() ? nullptr : it->second));
      }
    }
    REQUIRE(map.size() == reference.size());
  }
  std::size_t seen = 0;
  map.for_each([&](std::uint64_t key, int* value) {
    ++seen;
    CHECK(reference.at(key) == value);
  });
  CHECK(seen == reference.size());
}

TEST_CASE("seq_map grows and shrinks back, and takes any key", "[seq_map]") {
  geerpc::detail::seq_map<int> map;
  int value = 0;
  for (std::uint64_t k = 0; k < 10000; ++k) REQUIRE(map.insert(k * 4096, &value));  // 0 is a valid key
  CHECK_FALSE(map.insert(0, &value));
  for (std::uint64_t k = 0; k < 10000; ++k) REQUIRE(map.erase(k * 4096) == &value);
  CHECK(map.empty());
  CHECK(map.find(0) == nullptr);
  CHECK(map.insert(~0ull, &value));
  std::vector<int*> drained;
  map.drain_into(drained);
  CHECK(drained.size() == 1);
  CHECK(map.empty());
}

}  // namespace seq_map_test
