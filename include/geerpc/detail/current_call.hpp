// geerpc: the call whose handler runs on this thread, if any: what a call made here inherits
// (client/call_surface.hpp reads it; server/connection.hpp sets it around a handler).
#pragma once

#include <cstddef>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE

class call_context;

namespace detail {

// Null outside a handler: a call made there reads this one pointer and goes on as before.
inline thread_local const call_context* current_call = nullptr;

// Sets current_call for the life of a handler, putting back the one before it: a server's handler
// may run inside another's on one thread (an in-process server called inline).
class current_call_scope {
 public:
  explicit current_call_scope(const call_context& call) noexcept : previous_(current_call) { current_call = &call; }
  // No call: around code that runs on a handler's thread for another call (a reply's completion,
  // a then() callback, a resumed coroutine), which must not inherit that handler's deadline.
  explicit current_call_scope(std::nullptr_t) noexcept : previous_(current_call) { current_call = nullptr; }
  ~current_call_scope() { current_call = previous_; }
  current_call_scope(const current_call_scope&) = delete;
  current_call_scope& operator=(const current_call_scope&) = delete;

 private:
  const call_context* previous_;
};

}  // namespace detail
GEERPC_END_NAMESPACE
