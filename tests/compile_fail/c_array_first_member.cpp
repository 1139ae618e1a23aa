// A C array as a struct's first member is named at position 1: with one value, the probe must not
// take the struct's copy constructor for an initialisation of its first member.
// expect-error: use std::array<T, N> instead of T\[N\]|structured binding
// expect-error: member_of<label, 1, [a-z:0-9]*c_array>::is_a_c_array|structured binding
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <array>
#include <geerpc/geerpc.hpp>

struct label {
#ifdef GEERPC_CONTROL
  std::array<char, 4> text;
#else
  char text[4];
#endif
  int size;
};

struct printer {
  int print(const label& l) { return l.size; }
};

using printer_api = geerpc::service<"Printer", geerpc::method<"Print", &printer::print>>;

int main() {
  printer impl;
  geerpc::server server;
  server.add<printer_api>(impl);
}
