// A typed stub of a method with several arguments converts each to its declared type: an argument
// that does not convert must not compile, and the error says so.
// expect-error: does not convert to the type its method declares
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <geerpc/client.hpp>
#include <string>

struct calc {
  std::string repeat(const std::string& text, int times) {
    std::string out;
    for (int i = 0; i < times; ++i) out += text;
    return out;
  }
};

using calc_api = geerpc::service<"Calc", geerpc::method<"Repeat", &calc::repeat>>;

#ifdef GEERPC_CONTROL
std::string call_repeat(geerpc::client& client) { return client.call<calc_api::fn<"Repeat">>("ab", 3); }
#else
std::string call_repeat(geerpc::client& client) { return client.call<calc_api::fn<"Repeat">>(3, "ab"); }
#endif
