// A handler that takes a geerpc::responder<R> answers through it: it returns void, not a result
// that would go nowhere.
// expect-error: answers through it and returns void
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <geerpc/service.hpp>

struct lookup {
#ifdef GEERPC_CONTROL
  void find(int key, geerpc::responder<int> reply) { reply(key); }
#else
  int find(int key, geerpc::responder<int> reply) {
    reply(key);
    return key;
  }
#endif
};

using lookup_api = geerpc::service<"Lookup", geerpc::method<"Find", &lookup::find>>;

static_assert(lookup_api::name.size() == 6);
