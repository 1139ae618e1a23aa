// A typed stub knows its method's argument type: passing another type must not compile, and the
// compiler's first lines say which argument (its position, from 1), the type its method declares
// and the type given (GCC: "[with ... Position = 1; Declared = args; Given = other_args]", Clang:
// "requirement 'typed_call_argument<1, args, other_args>::converts'").
// expect-error: does not convert to the type its method declares
// expect-error-early: Position = 1. Declared = args. Given = other_args|typed_call_argument<1, args, other_args>
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
