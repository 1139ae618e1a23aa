// A std::string_view can be a handler's parameter, not what a call returns: nothing would own the
// characters it views.
// expect-error: can be a handler's parameters and a call's arguments, not results
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <geerpc/geerpc.hpp>
#include <string>
#include <string_view>

struct names {
#ifdef GEERPC_CONTROL
  std::string first(std::string_view all) { return std::string(all.substr(0, all.find(' '))); }
#else
  std::string_view first(std::string_view all) { return all.substr(0, all.find(' ')); }
#endif
};

using names_api = geerpc::service<"Names", geerpc::method<"First", &names::first>>;

int call(geerpc::client& client) { return static_cast<int>(client.call<names_api::fn<"First">>("a b").size()); }

int main() {
  names impl;
  geerpc::server server;
  server.add<names_api>(impl);
}
