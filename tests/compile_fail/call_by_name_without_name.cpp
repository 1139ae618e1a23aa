// A call by name takes the method's name first (after an optional context): a call without one
// must not compile, and the error says what the call takes.
// expect-error: a call by name takes the method's name first
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <geerpc/client.hpp>

#ifdef GEERPC_CONTROL
int call_sum(geerpc::client& client) { return client.call<int>("Calc.Sum", 1, 2); }
#else
int call_sum(geerpc::client& client) { return client.call<int>(1, 2); }
#endif
