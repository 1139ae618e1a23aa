// A struct with a reference member cannot travel: registering a handler that takes it must not
// compile, and the error must name the struct, the member's position (from 1) and its type, and say
// what to hold instead, before anything else the compiler reports.
// expect-error: a struct with a reference member cannot be serialized: hold the value instead
// expect-error: member_of<reading, 2, const std::(__cxx11::)?basic_string<char[^>]*> ?&>::is_a_reference
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <geerpc/geerpc.hpp>
#include <string>

struct reading {
  int sensor;
#ifdef GEERPC_CONTROL
  std::string unit;
#else
  const std::string& unit;
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
