// Two methods of one service with the same name would make one of them unreachable.
// expect-error: two methods have the same name
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <geerpc/service.hpp>

struct args {
  int num1;
  int num2;
};

struct calc {
  int sum(const args& a) { return a.num1 + a.num2; }
  int product(const args& a) { return a.num1 * a.num2; }
};

#ifdef GEERPC_CONTROL
using calc_api = geerpc::service<"Calc", geerpc::method<"Sum", &calc::sum>, geerpc::method<"Product", &calc::product>>;
#else
using calc_api = geerpc::service<"Calc", geerpc::method<"Sum", &calc::sum>, geerpc::method<"Sum", &calc::product>>;
#endif

static_assert(calc_api::name.size() == 4);
