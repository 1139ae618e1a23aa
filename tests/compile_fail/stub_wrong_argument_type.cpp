// A typed stub knows its method's argument type: passing another type must not compile.
// expect-error: no matching|cannot convert|could not convert
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <geerpc/client.hpp>
#include <string>

struct args {
  int num1;
  int num2;
};

struct other_args {
  std::string text;
};

struct calc {
  int sum(const args& a) { return a.num1 + a.num2; }
};

using calc_api = geerpc::service<"Calc", geerpc::method<"Sum", &calc::sum>>;

#ifdef GEERPC_CONTROL
int call_sum(geerpc::client& client) { return client.call<calc_api::fn<"Sum">>(args{1, 2}); }
#else
int call_sum(geerpc::client& client) { return client.call<calc_api::fn<"Sum">>(other_args{"1 + 2"}); }
#endif
