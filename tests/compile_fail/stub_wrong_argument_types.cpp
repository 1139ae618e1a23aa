// A typed stub of a method with several arguments converts each to its declared type: an argument
// that does not convert must not compile, and the error says so, naming the first argument that
// does not in its first lines (every one that does not is named, each in an error of its own).
// expect-error: does not convert to the type its method declares
// expect-error: Position = 2. Declared = int. Given = char \[3\]|typed_call_argument<2, int, char\[3\]>
// expect-error-early: Position = 1. Declared = std::.*string.*Given = int|typed_call_argument<1, std::.*string.*, int>
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
