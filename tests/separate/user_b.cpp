// The second translation unit of the separate-compilation test (user_a.cpp says what it proves).
#include <string>

#include "service.hpp"

#if !defined(GEERPC_TEST_SINGLE_HEADER)
// A transport of the program's own (here: tuning::automatic's server strategies, none's client ones) is not among
// those compiled once: a translation unit that uses one includes the engines itself.
#include <geerpc/transport/engines.hpp>

struct no_spin_tuning {
  using client_send = geerpc::tuning::none::client_send;
  using client_wait = geerpc::tuning::none::client_wait;
  using server_schedule = geerpc::tuning::automatic::server_schedule;
  using pool_grow = geerpc::tuning::automatic::pool_grow;
};
#endif

using namespace std::chrono_literals;

std::string calls_from_another_unit(const std::string& threaded_address, const std::string& blocking_address) {
  auto blocking = geerpc::dial<geerpc::blocking>(blocking_address, {.timeouts = {.connect = 1s}});
  if (blocking.call<int>("Calc.Sum", Args{2, 3}) != 5) return "blocking call";
  auto plain =
      geerpc::dial<geerpc::basic_threaded<geerpc::tuning::none>>(threaded_address, {.timeouts = {.connect = 1s}});
  if (plain.call<std::string>("Calc.Echo", std::string("hi")) != "hi") return "plain threaded call";
#if !defined(GEERPC_TEST_SINGLE_HEADER)
  auto own = geerpc::dial<geerpc::basic_threaded<no_spin_tuning>>(threaded_address, {.timeouts = {.connect = 1s}});
  if (own.call<int>("Calc.Sum", Args{4, 5}) != 9) return "call through a transport of the program's own";
  geerpc::basic_server<geerpc::basic_threaded<no_spin_tuning>> own_server;
  Calc calc;
  own_server.add<CalcApi>(calc);
  auto own_client = geerpc::dial(own_server.listen("127.0.0.1:0"), {.timeouts = {.connect = 1s}});
  if (own_client.call<int>("Calc.Sum", Args{6, 7}) != 13) return "a server of the program's own transport";
#endif
  return "";
}
