// Runs a program with arguments and optional stdin text, collecting its stdout, stderr and exit
// status, within a time bound: past it the program is killed (SIGKILL) and `timed_out` is set.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace cli_test {

struct finished {
  int exit_code = -1;  // -1: killed (by the bound or a signal)
  std::string out, err;
  bool timed_out = false;
  std::chrono::milliseconds took{0};
};

finished run_program(const std::string& program, const std::vector<std::string>& arguments,
                     const std::string& stdin_text = {}, std::chrono::milliseconds bound = std::chrono::seconds(20));

}  // namespace cli_test
