// geerpc: the tags of a server's per-thread scratch buffers (detail/scratch.hpp), which the wire
// session, its opening and the connection build frames in: one per use that may run inside another
// on the same thread, so that the two never share a buffer.
#pragma once

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

struct server_frames_tag {};  // the server's frames, but for the reply a handler's thread builds
// The reply a handler's thread builds while the handler runs: a tag of its own, since the handler
// may meanwhile answer a responder, shut down a server or cancel a call, which build frames with
// the other.
struct server_reply_tag {};

}  // namespace detail
GEERPC_END_NAMESPACE
