// A steady_clock time point means nothing in another process: the error says so and what to send.
// expect-error: only std::chrono::system_clock time points can be serialized
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <chrono>
#include <geerpc/geerpc.hpp>

struct timer {
#ifdef GEERPC_CONTROL
  std::chrono::system_clock::time_point at(int) { return {}; }
#else
  std::chrono::steady_clock::time_point at(int) { return {}; }
#endif
};

using timer_api = geerpc::service<"Timer", geerpc::method<"At", &timer::at>>;

int main() {
  timer impl;
  geerpc::server server;
  server.add<timer_api>(impl);
}
