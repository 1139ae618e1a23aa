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
// A translated stream's (frame_translator.hpp), on its reader: the frames the peer's bytes became,
// and what the translator answers itself; on whichever thread sends a frame: the peer's bytes it
// becomes (the reader sends some while it feeds the frames: three tags).
struct translated_requests_tag {};
struct translated_answers_tag {};
struct translated_text_tag {};

}  // namespace detail
GEERPC_END_NAMESPACE
