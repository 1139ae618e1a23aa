// A call's context comes first, before the method's name and its arguments: one given anywhere else
// must not compile (it would otherwise be taken for an argument), and the error says where it goes.
// expect-error: a call's context comes first
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <chrono>
#include <geerpc/client.hpp>

#ifdef GEERPC_CONTROL
int call_sum(geerpc::client& client) {
  return client.call<int>(geerpc::with_timeout(std::chrono::seconds(1)), "Calc.Sum", 1, 2);
}
#else
int call_sum(geerpc::client& client) {
  return client.call<int>("Calc.Sum", geerpc::with_timeout(std::chrono::seconds(1)), 1, 2);
}
#endif
