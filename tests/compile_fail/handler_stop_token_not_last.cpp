// A handler's std::stop_token comes after its arguments, not among them.
// expect-error: a handler must look like
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <geerpc/service.hpp>
#include <stop_token>

struct calc {
#ifdef GEERPC_CONTROL
  int scaled_sum(int a, int b, std::stop_token) { return a + b; }
#else
  int scaled_sum(int a, std::stop_token, int b) { return a + b; }
#endif
};

using calc_api = geerpc::service<"Calc", geerpc::method<"ScaledSum", &calc::scaled_sum>>;

static_assert(calc_api::name.size() == 4);
