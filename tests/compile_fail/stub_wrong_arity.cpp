// A typed stub knows how many arguments its method takes: calling it with another number must not
// compile, and the error says so.
// expect-error: wrong number of arguments
// expect-error-early: Declared = 2. long unsigned int Given = 3|typed_call_arity<2, 3>
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <geerpc/client.hpp>

struct calc {
  int add(int a, int b) { return a + b; }
};

using calc_api = geerpc::service<"Calc", geerpc::method<"Add", &calc::add>>;

#ifdef GEERPC_CONTROL
int call_add(geerpc::client& client) { return client.call<calc_api::fn<"Add">>(1, 2); }
#else
int call_add(geerpc::client& client) { return client.call<calc_api::fn<"Add">>(1, 2, 3); }
#endif
