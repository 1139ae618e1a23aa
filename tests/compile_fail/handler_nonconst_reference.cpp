// A handler taking its argument by non-const reference could be mistaken for an out-parameter; it
// must take `const A&` or `A`.
// expect-error: a handler must look like
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <geerpc/service.hpp>

struct args {
  int num1;
  int num2;
};

struct calc {
#ifdef GEERPC_CONTROL
  int sum(const args& a) { return a.num1 + a.num2; }
#else
  int sum(args& a) { return a.num1 + a.num2; }
#endif
};

using calc_api = geerpc::service<"Calc", geerpc::method<"Sum", &calc::sum>>;

static_assert(calc_api::name.size() == 4);
