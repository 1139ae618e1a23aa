// The deadline scheduler: one thread, deadlines in order, cancel() that can be trusted with the
// lifetime of a callback's context.
#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace scheduler_test {

using namespace std::chrono_literals;
using geerpc::detail::deadline_scheduler;
using test::hold_scheduler;

namespace {
struct recorder {
  std::mutex mutex;
  std::vector<int> order;
  test::counter fired;
};
struct tagged {
  recorder* into;
  int tag;
  static void fire(void* context) {
    auto* self = static_cast<tagged*>(context);
    {
      std::lock_guard lock(self->into->mutex);
      self->into->order.push_back(self->tag);
    }
    self->into->fired.add();
  }
};

// Cancels its timers when the test ends, a failed REQUIRE included: a timer must not be
// destroyed while it is queued.
struct cancel_on_exit {
  deadline_scheduler& scheduler;
  std::vector<deadline_scheduler::timer*> timers;
  ~cancel_on_exit() {
    for (auto* t : timers) scheduler.cancel(*t);
  }
};

}  // namespace

TEST_CASE("timers fire in deadline order, not in the order they were set", "[scheduler]") {
  auto scheduler = std::make_shared<deadline_scheduler>();
  recorder r;
  tagged a{&r, 3}, b{&r, 1}, c{&r, 2};
  deadline_scheduler::timer ta, tb, tc;
  cancel_on_exit guard{*scheduler, {&ta, &tb, &tc}};
  const auto now = deadline_scheduler::clock::now();
  scheduler->schedule(ta, now + 60ms, &tagged::fire, &a);
  scheduler->schedule(tb, now + 20ms, &tagged::fire, &b);
  scheduler->schedule(tc, now + 40ms, &tagged::fire, &c);
  REQUIRE(r.fired.wait_for_at_least(3));
  std::lock_guard lock(r.mutex);
  CHECK(r.order == std::vector<int>{1, 2, 3});
}

TEST_CASE("a cancelled timer never fires", "[scheduler]") {
  auto scheduler = std::make_shared<deadline_scheduler>();
  recorder r;
  tagged cancelled{&r, 1}, later{&r, 2};
  deadline_scheduler::timer t, t_later;
  cancel_on_exit guard{*scheduler, {&t, &t_later}};
  {
    hold_scheduler hold(*scheduler);
    REQUIRE(hold.held());
    const auto now = deadline_scheduler::clock::now();
    scheduler->schedule(t, now, &tagged::fire, &cancelled);
    scheduler->schedule(t_later, now + 1ms, &tagged::fire, &later);
    CHECK(scheduler->cancel(t));
    CHECK_FALSE(scheduler->cancel(t));  // a second cancel finds nothing to take off
  }
  REQUIRE(r.fired.wait_for_at_least(1));
  std::lock_guard lock(r.mutex);
  CHECK(r.order == std::vector<int>{2});  // `later` fired after the cancelled deadline had passed
  deadline_scheduler::timer never_set;
  CHECK_FALSE(scheduler->cancel(never_set));  // cancelling a timer never scheduled is harmless
}

TEST_CASE("cancel() of a running callback returns only after it finished", "[scheduler]") {
  auto scheduler = std::make_shared<deadline_scheduler>();
  struct blocking_callback {
    test::event entered, release;
    std::atomic<bool> done{false};
    static void fire(void* context) {
      auto* self = static_cast<blocking_callback*>(context);
      self->entered.set();
      self->release.wait();
      self->done.store(true);
    }
  } callback;
  deadline_scheduler::timer t;
  cancel_on_exit guard{*scheduler, {&t}};
  scheduler->schedule(t, deadline_scheduler::clock::now(), &blocking_callback::fire, &callback);
  REQUIRE(callback.entered.wait());
  test::event about_to_cancel;
  bool done_when_cancel_returned = false, removed = true;
  std::jthread canceller([&] {
    about_to_cancel.set();
    removed = scheduler->cancel(t);
    done_when_cancel_returned = callback.done.load();
  });
  REQUIRE(about_to_cancel.wait());
  callback.release.set();
  canceller.join();
  CHECK_FALSE(removed);
  CHECK(done_when_cancel_returned);
}

TEST_CASE("a callback may schedule another timer", "[scheduler]") {
  auto scheduler = std::make_shared<deadline_scheduler>();
  struct chain {
    deadline_scheduler* scheduler;
    deadline_scheduler::timer first, next;
    int remaining = 5;
    test::counter fired;
    static void fire(void* context) {
      auto* self = static_cast<chain*>(context);
      if (--self->remaining > 0)
        self->scheduler->schedule(self->next, deadline_scheduler::clock::now() + 1ms, &fire, self);
      self->fired.add();  // last: the test may destroy the chain as soon as the count is reached
    }
  } c;
  c.scheduler = scheduler.get();
  cancel_on_exit guard{*scheduler, {&c.first, &c.next}};
  scheduler->schedule(c.first, deadline_scheduler::clock::now(), &chain::fire, &c);
  CHECK(c.fired.wait_for_at_least(5));
}

TEST_CASE("a callback may set its own timer again, and cancel() takes that deadline off too", "[scheduler]") {
  auto scheduler = std::make_shared<deadline_scheduler>();
  struct rearming {
    deadline_scheduler* scheduler;
    deadline_scheduler::timer timer;
    test::event entered, release;
    std::atomic<int> runs{0};
    static void fire(void* context) {
      auto* self = static_cast<rearming*>(context);
      self->runs.fetch_add(1);
      self->entered.set();
      self->release.wait();
      self->scheduler->schedule(self->timer, deadline_scheduler::clock::now() + 1h, &fire, self);
    }
  } r;
  r.scheduler = scheduler.get();
  cancel_on_exit guard{*scheduler, {&r.timer}};
  scheduler->schedule(r.timer, deadline_scheduler::clock::now(), &rearming::fire, &r);
  REQUIRE(r.entered.wait());
  test::event about_to_cancel;
  bool removed = false;
  std::jthread canceller([&] {
    about_to_cancel.set();
    removed = scheduler->cancel(r.timer);
  });
  REQUIRE(about_to_cancel.wait());
  r.release.set();
  canceller.join();
  CHECK(removed);                           // it waited for the callback, then took off the deadline the callback set
  CHECK_FALSE(scheduler->cancel(r.timer));  // nothing left queued
  CHECK(r.runs.load() == 1);
}

TEST_CASE("scheduling a queued timer moves it to the new deadline", "[scheduler]") {
  auto scheduler = std::make_shared<deadline_scheduler>();
  // Three timers 1 ms apart, set while the scheduler is held, then one of them moved; `moves`
  // are (timer index, new offset in ms).
  const auto fire_order = [&](const std::vector<std::pair<int, int>>& moves) {
    recorder r;
    std::vector<tagged> tags{{&r, 1}, {&r, 2}, {&r, 3}};
    std::vector<deadline_scheduler::timer> timers(3);
    cancel_on_exit guard{*scheduler, {&timers[0], &timers[1], &timers[2]}};
    {
      hold_scheduler hold(*scheduler);
      REQUIRE(hold.held());
      const auto now = deadline_scheduler::clock::now();
      for (std::size_t i = 0; i < 3; ++i)
        scheduler->schedule(timers[i], now + std::chrono::milliseconds(i + 1), &tagged::fire, &tags[i]);
      for (auto [index, offset_ms] : moves)
        scheduler->schedule(timers[static_cast<std::size_t>(index)], now + std::chrono::milliseconds(offset_ms),
                            &tagged::fire, &tags[static_cast<std::size_t>(index)]);
    }
    REQUIRE(r.fired.wait_for_at_least(3));
    std::lock_guard lock(r.mutex);
    return r.order;
  };
  CHECK(fire_order({{2, 0}}) == std::vector<int>{3, 1, 2});          // earlier: up the heap
  CHECK(fire_order({{0, 4}}) == std::vector<int>{2, 3, 1});          // later: down from the top
  CHECK(fire_order({{2, 0}, {2, 4}}) == std::vector<int>{1, 2, 3});  // to the top, then down again
}

TEST_CASE("many timers, half of them cancelled: the rest fire once each, in deadline order", "[scheduler]") {
  auto scheduler = std::make_shared<deadline_scheduler>();
  constexpr int count = 200;
  recorder r;
  std::vector<tagged> contexts;
  contexts.reserve(count);
  std::vector<deadline_scheduler::timer> timers(count);
  cancel_on_exit guard{*scheduler, {}};
  for (auto& t : timers) guard.timers.push_back(&t);
  std::vector<int> expected;
  {
    hold_scheduler hold(*scheduler);
    REQUIRE(hold.held());
    // Deadlines in a scrambled order (37 is coprime to 200), 1 µs apart: the heap sees inserts
    // before and after the front, and removals from the middle.
    const auto start = deadline_scheduler::clock::now();
    for (int i = 0; i < count; ++i) {
      const int rank = (i * 37) % count;
      contexts.push_back({&r, rank});
      scheduler->schedule(timers[static_cast<std::size_t>(i)], start + rank * 1us, &tagged::fire, &contexts.back());
    }
    for (int i = 0; i < count; ++i) {
      const int rank = (i * 37) % count;
      if (rank % 2 == 1)
        CHECK(scheduler->cancel(timers[static_cast<std::size_t>(i)]));
      else
        expected.push_back(rank);
    }
  }
  std::sort(expected.begin(), expected.end());
  REQUIRE(r.fired.wait_for_at_least(count / 2));
  std::lock_guard lock(r.mutex);
  CHECK(r.order == expected);
}

TEST_CASE("a scheduler whose last owner lets go inside one of its callbacks ends without joining itself",
          "[scheduler][resources]") {
  // A call's continuation may free the program's last client, and with it the scheduler, on the
  // scheduler's own thread: that thread cannot join itself (std::terminate, before).
  const int before = test::baseline_thread_count();
  struct owner {
    std::shared_ptr<geerpc::detail::deadline_scheduler> scheduler =
        std::make_shared<geerpc::detail::deadline_scheduler>();
    geerpc::detail::deadline_scheduler::timer timer;
    test::event released;
  } o;
  o.scheduler->schedule(
      o.timer, geerpc::detail::deadline_scheduler::clock::now(),
      [](void* context) {
        auto& self = *static_cast<owner*>(context);
        self.scheduler.reset();  // the last owner: destroyed here, on its own thread
        self.released.set();
      },
      &o);
  REQUIRE(o.released.wait());
  CHECK(o.scheduler == nullptr);
  CHECK(test::eventually([&] { return test::thread_count() == before; }));  // its thread left on its own
}

TEST_CASE("durations read the way Go prints them", "[scheduler][messages]") {
  using geerpc::detail::duration_text;
  CHECK(duration_text(1s) == "1s");
  CHECK(duration_text(500ms) == "500ms");
  CHECK(duration_text(1500ms) == "1.5s");
  CHECK(duration_text(250us) == "250us");
  CHECK(duration_text(1ns) == "1ns");
  CHECK(duration_text(90s) == "1m30s");
  CHECK(duration_text(2h) == "2h0m0s");
}

}  // namespace scheduler_test
