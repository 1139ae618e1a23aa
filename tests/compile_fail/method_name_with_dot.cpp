// The '.' separates service from method on the wire, so a method name must not contain one.
// expect-error: a method name must be non-empty and contain no
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <geerpc/service.hpp>

struct args {
  int num1;
  int num2;
};

struct calc {
  int sum(const args& a) { return a.num1 + a.num2; }
};

#ifdef GEERPC_CONTROL
using calc_api = geerpc::service<"Calc", geerpc::method<"MathSum", &calc::sum>>;
#else
using calc_api = geerpc::service<"Calc", geerpc::method<"Math.Sum", &calc::sum>>;
#endif

static_assert(calc_api::name.size() == 4);
