// A service is bound to one object, so its member-function handlers must all belong to one class.
// expect-error: must belong to one class
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <geerpc/service.hpp>

struct args {
  int num1;
  int num2;
};

struct adder {
  int sum(const args& a) { return a.num1 + a.num2; }
  int product(const args& a) { return a.num1 * a.num2; }
};

#ifdef GEERPC_CONTROL
using multiplier = adder;
#else
struct multiplier {
  int product(const args& a) { return a.num1 * a.num2; }
};
#endif

using calc_api =
    geerpc::service<"Calc", geerpc::method<"Sum", &adder::sum>, geerpc::method<"Product", &multiplier::product>>;

static_assert(calc_api::name.size() == 4);
