// A handler takes one argument (and optionally a std::stop_token), not two.
// expect-error: a handler must look like
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <geerpc/service.hpp>

struct args {
  int num1;
  int num2;
};

struct calc {
#ifdef GEERPC_CONTROL
  int scaled_sum(const args& a) { return a.num1 + a.num2; }
#else
  int scaled_sum(const args& a, int scale) { return (a.num1 + a.num2) * scale; }
#endif
};

using calc_api = geerpc::service<"Calc", geerpc::method<"ScaledSum", &calc::scaled_sum>>;

static_assert(calc_api::name.size() == 4);
