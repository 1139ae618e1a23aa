// Asynchronous calls without a thread per call: a fan-out of 1,000 calls whose results are handled
// as they complete (callbacks, call_future::then), and a coroutine that co_awaits calls one after
// another. geerpc needs no runtime for either: the coroutine type here is the example's own, a
// dozen lines, and any other (a library's task, an executor's) works the same way.
#include <geerpc/geerpc.hpp>

#include <atomic>
#include <chrono>
#include <coroutine>
#include <exception>
#include <iostream>
#include <latch>
#include <stop_token>
#include <string>
#include <thread>

using namespace std::chrono_literals;

struct Work {
  // Some calls are slower than others: results come back out of the order they were asked for.
  long square(long n) {
    if (n % 100 == 0) std::this_thread::sleep_for(2ms);
    return n * n;
  }
  long wait_for_stop(std::stop_token stop) {
    while (!stop.stop_requested()) std::this_thread::sleep_for(1ms);
    return -1;
  }
};

using WorkApi = geerpc::service<"Work",                                   //
                                geerpc::method<"Square", &Work::square>,  //
                                geerpc::method<"WaitForStop", &Work::wait_for_stop>>;

// A coroutine type that starts at once and frees itself when done: all this example needs.
struct fire_and_forget {
  struct promise_type {
    fire_and_forget get_return_object() noexcept { return {}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }
  };
};

// Each co_await suspends until its call completes; the coroutine then resumes on the thread that
// completed it (the client's receiving thread), so it does no blocking work of its own.
fire_and_forget sum_of_squares(geerpc::client& client, std::stop_token stop, std::latch& done, long& out) {
  long sum = 0;
  for (long n = 1; n <= 3; ++n) sum += co_await client.async_call<long>("Work.Square", n);
  out = sum;
  // A call a stop_token cancels: the server's handler sees its own stop_token fire.
  auto r = co_await client.async_call<long>(geerpc::with_stop_token(stop), "Work.WaitForStop").as_result();
  if (r.code() == geerpc::errc::canceled) out += 1000;
  done.count_down();
}

int main() {
  Work work;
  geerpc::server server;
  server.add<WorkApi>(work);
  auto client = geerpc::dial(server.listen("127.0.0.1:0"));

  // The fan-out: every call is on the wire before the first result is handled.
  constexpr long calls = 1000;
  std::atomic<long> total{0}, handled{0}, out_of_order{0}, last{-1};
  std::latch all(calls);
  const auto started = std::chrono::steady_clock::now();
  for (long n = 0; n < calls; ++n)
    client.async_call<long>("Work.Square", n).then([&, n](geerpc::result<long> r) {
      total += r.value();
      if (n < last.exchange(n)) ++out_of_order;
      ++handled;
      all.count_down();
    });
  all.wait();
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  std::cout << handled << " calls, sum of squares " << total << " (expected "
            << (calls - 1) * calls * (2 * calls - 1) / 6 << "), " << (out_of_order > 0 ? "some" : "none")
            << " handled out of order, in " << took.count() << " ms\n";

  std::stop_source stop;
  std::latch done(1);
  long coroutine_result = 0;
  sum_of_squares(client, stop.get_token(), done, coroutine_result);
  stop.request_stop();  // ends the coroutine's last call, whether it has reached its handler yet or not
  done.wait();
  std::cout << "coroutine: 1 + 4 + 9 = " << coroutine_result - 1000
            << ", then a call cancelled through its stop_token\n";
  return total == (calls - 1) * calls * (2 * calls - 1) / 6 && coroutine_result == 1014 ? 0 : 1;
}
