// geerpc: the call whose handler runs on this thread, if any: what a call made here inherits
// (client/call_surface.hpp reads it; server/connection.hpp sets it around a handler).
#pragma once

#include <cstddef>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE

class call_context;

namespace detail {

// The call whose handler runs on this thread: a null `call` outside a handler, where a call made
// reads this one thread-local and goes on as before. `answered` is set around a server
// interceptor's `after`: that call is answered, its caller waits no more and its stop token has
// fired or fires when first asked for, so a call made there takes only its propagated metadata (a
// trace id), as a detached() call made in its handler would.
struct handler_on_thread {
  const call_context* call = nullptr;
  bool answered = false;
};
inline thread_local handler_on_thread current_call;

// Sets current_call for the life of a handler, putting back the one before it: a server's handler
// may run inside another's on one thread (an in-process server called inline).
class current_call_scope {
 public:
  // `answered`: around an interceptor's `after`.
  explicit current_call_scope(const call_context& call, bool answered = false) noexcept : previous_(current_call) {
    current_call = {&call, answered};
  }
  // No call: around code that runs on a handler's thread for another call (a reply's completion,
  // a then() callback, a resumed coroutine), which must not inherit that handler's deadline.
  explicit current_call_scope(std::nullptr_t) noexcept : previous_(current_call) { current_call = {}; }
  ~current_call_scope() { current_call = previous_; }
  current_call_scope(const current_call_scope&) = delete;
  current_call_scope& operator=(const current_call_scope&) = delete;

 private:
  handler_on_thread previous_;
};

}  // namespace detail
GEERPC_END_NAMESPACE
