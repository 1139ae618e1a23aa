// A handler takes its geerpc::call_context by const reference, after its arguments: a copy would
// outlive what it views.
// expect-error: a handler must look like
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <geerpc/service.hpp>
#include <stop_token>
#include <string>

struct store {
#ifdef GEERPC_CONTROL
  std::string get(const std::string& key, std::stop_token, const geerpc::call_context&) { return key; }
#else
  std::string get(const std::string& key, std::stop_token, geerpc::call_context) { return key; }
#endif
};

using store_api = geerpc::service<"Store", geerpc::method<"Get", &store::get>>;

static_assert(store_api::name.size() == 5);
