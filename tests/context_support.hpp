// The call-context tests' service (context_test.cpp, interceptor_test.cpp): a key-value store
// whose handlers note what they saw of their call.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "support.hpp"

namespace test::context {

// What a handler saw of its call.
struct seen {
  std::string peer, method, authorization;
  bool has_deadline = false, has_missing = false;
  std::uint64_t connection = 0;
  std::vector<std::pair<std::string, std::string>> metadata;
};

struct Kv {
  std::mutex mutex;
  std::vector<seen> calls;
  std::atomic<int> runs{0};
  test::event release;

  std::string get(const std::string& key, const geerpc::call_context& ctx) {
    seen s;
    s.peer = ctx.peer();
    s.method = ctx.method();
    s.authorization = ctx.metadata("authorization").value_or("(none)");
    s.has_deadline = ctx.deadline().has_value();
    s.has_missing = ctx.metadata("missing").has_value();
    s.connection = ctx.connection_id();
    ctx.for_each_metadata([&](std::string_view k, std::string_view v) { s.metadata.emplace_back(k, v); });
    std::lock_guard lock(mutex);
    calls.push_back(std::move(s));
    ++runs;
    return "value of " + key;
  }
  // Both extras, in both orders.
  int stop_then_context(int a, std::stop_token stop, const geerpc::call_context& ctx) {
    ++runs;
    return stop.stop_possible() && ctx.method() == "Kv.StopThenContext" ? a + 1 : -1;
  }
  int context_then_stop(int a, const geerpc::call_context& ctx, std::stop_token stop) {
    ++runs;
    return stop.stop_possible() && ctx.method() == "Kv.ContextThenStop" ? a + 2 : -1;
  }
  int count() { return ++runs; }
  int fail() {
    ++runs;
    throw std::runtime_error("kv: failed");
  }
  // Returns when its stop_token fires.
  int wait(std::stop_token stop) {
    ++runs;
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait_for(lock, stop, 10s, [] { return false; });
    return 0;
  }
  int hold() {
    ++runs;
    release.wait();
    return 1;
  }
};

using KvApi = geerpc::service<"Kv",                                                       //
                              geerpc::method<"Get", &Kv::get>,                            //
                              geerpc::method<"StopThenContext", &Kv::stop_then_context>,  //
                              geerpc::method<"ContextThenStop", &Kv::context_then_stop>,  //
                              geerpc::method<"Count", &Kv::count>,                        //
                              geerpc::method<"Fail", &Kv::fail>,                          //
                              geerpc::method<"Wait", &Kv::wait>,                          //
                              geerpc::method<"Hold", &Kv::hold>>;

static_assert(KvApi::fn<"Get">::arity == 1);  // the context is the server's, not an argument
static_assert(KvApi::fn<"StopThenContext">::arity == 1 && KvApi::fn<"ContextThenStop">::arity == 1);

}  // namespace test::context
