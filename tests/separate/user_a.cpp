// A program built with GEERPC_SEPARATE_COMPILATION (geerpc::compiled, or the single header with the
// engines in single_impl.cpp): its translation units see the front classes only, and the engines
// come from one source file. It must serve and call over every standard transport as a header-only
// program does; a missing or duplicated engine fails the link, a wrong one the checks below.
#include <cstdio>
#include <string>

#include "service.hpp"

#if !defined(GEERPC_SEPARATE_COMPILATION)
#error "this test is built with GEERPC_SEPARATE_COMPILATION"
#endif

using namespace std::chrono_literals;

int main() {
  int failures = 0;
  auto check = [&](bool ok, const char* what) {
    if (!ok) {
      std::fprintf(stderr, "separate compilation: %s\n", what);
      ++failures;
    }
  };

  Calc calc;
  geerpc::server server;
  server.add<CalcApi>(calc);
  const std::string address = server.listen("127.0.0.1:0");
  geerpc::basic_server<geerpc::blocking> blocking_server;
  blocking_server.add<CalcApi>(calc);
  const std::string blocking_address = blocking_server.listen("127.0.0.1:0");

  auto client = geerpc::dial(address, {.timeouts = {.connect = 1s}});
  check(client.call<int>(geerpc::with_timeout(1s), "Calc.Sum", Args{1, 2}) == 3, "threaded call");
  check(client.call<CalcApi::fn<"Echo">>(std::string(5000, 'x')) == std::string(5000, 'x'), "typed stub");
  auto future = client.async_call<int>("Calc.Sum", Args{20, 22});
  check(future.wait_for(1s) && future.get() == 42, "async call");
  const auto missing = client.try_call<int>("Calc.Nope", Args{});
  check(!missing && missing.code() == geerpc::errc::unknown_method, "unknown method error");
  check(server.connection_count() == 1 && server.thread_count() > 0, "server counters");

  const std::string other = calls_from_another_unit(address, blocking_address);
  check(other.empty(), other.c_str());

  client.close();
  server.stop();
  check(!client.try_call<int>("Calc.Sum", Args{1, 2}), "a call after close fails");
  check(!geerpc::try_dial(address, {.timeouts = {.connect = 200ms}}), "a dial to a stopped server fails");
  if (failures == 0) std::puts("separate compilation: ok");
  return failures == 0 ? 0 : 1;
}
