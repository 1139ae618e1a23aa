// The smallest coroutine type, for the tests' coroutines (callback_test.cpp,
// inherit_coroutine_test.cpp): it starts at once, nobody resumes it but its awaits, and it frees
// itself at the end. Nothing of geerpc's: co_await works in any coroutine.
#pragma once

#include <coroutine>
#include <exception>

namespace test {

struct detached_coroutine {
  struct promise_type {
    detached_coroutine get_return_object() noexcept { return {}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }
  };
};

}  // namespace test
