// A typed stub for a method the service does not have is a compile error, not a runtime
// "can't find method".
// expect-error: no method of that name
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <geerpc/service.hpp>

struct args {
  int num1;
  int num2;
};

struct calc {
  int sum(const args& a) { return a.num1 + a.num2; }
};

using calc_api = geerpc::service<"Calc", geerpc::method<"Sum", &calc::sum>>;
#ifdef GEERPC_CONTROL
using no_such = calc_api::fn<"Sum">;
#else
using no_such = calc_api::fn<"NoSuch">;
#endif

static_assert(no_such::name.size() > 0);
