// The deadline scheduler: one thread, deadlines in order, cancel() that can be trusted with the
// lifetime of a callback's context.
#include <atomic>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

using namespace std::chrono_literals;
using geerpc::detail::deadline_scheduler;

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
}  // namespace

TEST_CASE("timers fire in deadline order, not in the order they were set", "[scheduler]") {
  auto scheduler = deadline_scheduler::shared();
  recorder r;
  tagged a{&r, 3}, b{&r, 1}, c{&r, 2};
  const auto now = deadline_scheduler::clock::now();
  scheduler->schedule(now + 60ms, &tagged::fire, &a);
  scheduler->schedule(now + 20ms, &tagged::fire, &b);
  scheduler->schedule(now + 40ms, &tagged::fire, &c);
  REQUIRE(r.fired.wait_for_at_least(3));
  CHECK(r.order == std::vector<int>{1, 2, 3});
}

TEST_CASE("a cancelled timer never fires", "[scheduler]") {
  auto scheduler = deadline_scheduler::shared();
  recorder r;
  tagged cancelled{&r, 1}, later{&r, 2};
  const auto now = deadline_scheduler::clock::now();
  auto t = scheduler->schedule(now + 20ms, &tagged::fire, &cancelled);
  scheduler->schedule(now + 60ms, &tagged::fire, &later);
  CHECK(scheduler->cancel(t));
  CHECK_FALSE(t);  // the handle is reset
  REQUIRE(r.fired.wait_for_at_least(1));
  CHECK(r.order == std::vector<int>{2});  // `later` fired after the cancelled deadline had passed
  CHECK_FALSE(scheduler->cancel(t));      // cancelling an empty handle is harmless
}

TEST_CASE("cancel() of a running callback returns only after it finished", "[scheduler]") {
  auto scheduler = deadline_scheduler::shared();
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
  auto t = scheduler->schedule(deadline_scheduler::clock::now(), &blocking_callback::fire, &callback);
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
  auto scheduler = deadline_scheduler::shared();
  struct chain {
    deadline_scheduler* scheduler;
    int remaining = 5;
    test::counter fired;
    static void fire(void* context) {
      auto* self = static_cast<chain*>(context);
      if (--self->remaining > 0) self->scheduler->schedule(deadline_scheduler::clock::now() + 1ms, &fire, self);
      self->fired.add();  // last: the test may destroy the chain as soon as the count is reached
    }
  } c;
  c.scheduler = scheduler.get();
  scheduler->schedule(deadline_scheduler::clock::now(), &chain::fire, &c);
  CHECK(c.fired.wait_for_at_least(5));
}

TEST_CASE("the shared scheduler is one thread, gone when nobody holds it", "[scheduler][resources]") {
  const int before = test::baseline_thread_count();
  {
    auto first = deadline_scheduler::shared();
    auto second = deadline_scheduler::shared();
    CHECK(first == second);
    CHECK(test::thread_count() == before + 1);
  }
  CHECK(test::thread_count() == before);
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
