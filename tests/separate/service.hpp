// The service both translation units of the separate-compilation test use.
#pragma once

#include <geerpc/geerpc.hpp>

#include <string>

struct Args {
  int num1;
  int num2;
};

struct Calc {
  int sum(const Args& a) { return a.num1 + a.num2; }
  std::string echo(const std::string& s) { return s; }
};

using CalcApi = geerpc::service<"Calc", geerpc::method<"Sum", &Calc::sum>, geerpc::method<"Echo", &Calc::echo>>;

// user_b.cpp: calls through the other transports (and, with the multi-header tree, through a
// transport of the test's own, whose engines that file compiles itself). Returns what failed, or "".
std::string calls_from_another_unit(const std::string& threaded_address, const std::string& blocking_address);
