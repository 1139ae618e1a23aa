// detail::downstream_deadline, the deadline a handler's nested call inherits: its own less a
// reserve for its reply. Whatever the settings (NaN, infinity, negative, a budget of centuries),
// the arithmetic stays defined (UBSan runs this) and the result lies between start and deadline.
#include <geerpc/detail/deadline.hpp>

#include <catch2/catch.hpp>
#include <chrono>
#include <limits>

namespace downstream_deadline_test {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;
using geerpc::detail::downstream_deadline;

const clock::time_point start = clock::time_point(1000h);

TEST_CASE("downstream_deadline keeps a fraction of the budget, capped", "[inherit]") {
  CHECK(downstream_deadline(start + 100ms, start, 0.01, 1ms) == start + 99ms);  // capped at 1 ms
  CHECK(downstream_deadline(start + 10ms, start, 0.01, 1ms) == start + 10ms - 100us);
  CHECK(downstream_deadline(start + 10ms, start, 0.0, 1ms) == start + 10ms);  // zero: the deadline itself
  CHECK(downstream_deadline(start + 10ms, start, 0.5, 1h) == start + 5ms);
  // A deadline already passed (the budget negative) keeps no reserve.
  CHECK(downstream_deadline(start - 5ms, start, 0.5, 1h) == start - 5ms);
}

TEST_CASE("downstream_deadline treats a fraction or cap that makes no sense as its nearest sense", "[inherit]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const auto deadline = start + 10ms;
  CHECK(downstream_deadline(deadline, start, nan, 1h) == deadline);  // as 0
  CHECK(downstream_deadline(deadline, start, -nan, 1h) == deadline);
  CHECK(downstream_deadline(deadline, start, -1.0, 1h) == deadline);
  CHECK(downstream_deadline(deadline, start, -inf, 1h) == deadline);
  CHECK(downstream_deadline(deadline, start, 2.0, 1h) == start);  // as 1: the whole budget
  CHECK(downstream_deadline(deadline, start, inf, 1h) == start);
  CHECK(downstream_deadline(deadline, start, 0.5, -1ms) == deadline);  // a negative cap as 0
  CHECK(downstream_deadline(deadline, start, 0.5, std::chrono::nanoseconds::min()) == deadline);
}

TEST_CASE("downstream_deadline stays in range for huge budgets and the farthest deadline", "[inherit]") {
  const auto farthest = clock::time_point::max();
  const auto epoch = clock::time_point{};
  CHECK(downstream_deadline(farthest, start, 0.01, 1ms) == farthest - 1ms);
  CHECK(downstream_deadline(farthest, epoch, 1.0, std::chrono::nanoseconds::max()) == epoch);
  CHECK(downstream_deadline(farthest, epoch, 0.999999, std::chrono::nanoseconds::max()) > epoch);
  CHECK(downstream_deadline(farthest, epoch, 0.5, std::chrono::nanoseconds::max()) < farthest);
  // Never before the epoch, whatever the reserve.
  CHECK(downstream_deadline(epoch + 1ms, epoch, 1.0, 1h) == epoch);
  CHECK(downstream_deadline(epoch, epoch, 1.0, 1h) == epoch);
  CHECK(downstream_deadline(epoch + 1ms, epoch - 1h, 1.0, 1h) == epoch);  // a start before the epoch
}

}  // namespace downstream_deadline_test
