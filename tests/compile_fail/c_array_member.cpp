// A struct with a C array member gets geerpc's own message, naming std::array and the member's
// position (compilers without C++20's parenthesised aggregate initialisation, Clang before 16, leave
// it to Boost.PFR's).
// expect-error: use std::array<T, N> instead of T\[N\]|structured binding
// expect-error: member_of<reading, 2, [a-z:0-9]*c_array>::is_a_c_array|structured binding
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <array>
#include <geerpc/geerpc.hpp>

struct reading {
  int sensor;
#ifdef GEERPC_CONTROL
  std::array<char, 4> unit;
#else
  char unit[4];
#endif
};

struct meter {
  int read(const reading& r) { return r.sensor; }
};

using meter_api = geerpc::service<"Meter", geerpc::method<"Read", &meter::read>>;

int main() {
  meter impl;
  geerpc::server server;
  server.add<meter_api>(impl);
}
