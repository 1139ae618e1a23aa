// Registering a handler whose argument cannot travel must not compile: the check happens where the
// type enters geerpc, not when the first request arrives.
// expect-error: a type cannot be serialized
// expect-error: type_cannot_be_serialized<long double, lookup>
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <geerpc/geerpc.hpp>

struct lookup {
#ifdef GEERPC_CONTROL
  char key;
#else
  long double key;  // no portable size or layout on the wire
#endif
};

struct store {
  int get(const lookup&) { return 0; }
};

using store_api = geerpc::service<"Store", geerpc::method<"Get", &store::get>>;

int main() {
  store impl;
  geerpc::server server;
  server.add<store_api>(impl);
}
