// geerpc: a connection as the debug page sees it, without its type: what it says of itself and of
// the requests in flight on it. server_context lists every connection alive by this face, so that
// the page (debug_page.hpp) reads them without including the connection (connection.hpp), which
// serves the page through its HTTP door.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "../net/peer_identity.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

struct handler_entry;  // server/dispatcher.hpp

// What the debug page shows of a connection.
struct connection_view {
  using clock = std::chrono::steady_clock;
  std::string peer;
  clock::time_point opened;
  clock::time_point last_activity;  // the last bytes read, or reply sent
  std::size_t inflight = 0;
  std::size_t pending_output = 0;  // memory held for replies not sent yet
  // What its stream layer proved of the peer (TLS): the connection's own, read under the registry's lock.
  const net::peer_identity* identity = nullptr;
  // An HTTP request for a page (the debug page, /metrics), not an RPC connection: counted apart.
  bool web = false;
};

// What the debug page reads of a request in flight, during the call that lists it.
struct request_view {
  using clock = std::chrono::steady_clock;
  const handler_entry* handler = nullptr;
  clock::time_point arrived;            // kept with statistics on
  clock::time_point started;            // a zero time point while it waits for a handler thread
  clock::time_point caller_deadline;    // by the runtime's clock; a zero time point: none
  bool handed_on = false;               // its handler returned, leaving the answer to its responder
  bool answered = false;                // answered (its deadline, a cancel) while its handler runs on
  std::span<const std::byte> metadata;  // its metadata block, as wire::check_metadata accepted it
};

// A connection listed in server_context::connections. Its two calls are the debug page's, made
// with the registry's lock held; they are virtual because the page is their only
// caller: no request pays for them.
class listed_connection {
 public:
  using clock = std::chrono::steady_clock;

  virtual connection_view describe() const = 0;

  // Calls f(const request_view&) for each request registered now. Meaningful with statistics on
  // (arrived and started are kept then).
  template <class F>
  void for_each_request(F&& f) const {
    visit_requests([](void* visitor,
                      const request_view& request) { (*static_cast<std::remove_reference_t<F>*>(visitor))(request); },
                   &f);
  }

 protected:
  using request_visitor = void (*)(void* visitor, const request_view& request);
  virtual void visit_requests(request_visitor visit, void* visitor) const = 0;

  listed_connection() = default;
  listed_connection(const listed_connection&) = default;
  listed_connection& operator=(const listed_connection&) = default;
  ~listed_connection() = default;

 private:
  friend class connection_registry;
  std::size_t registry_index_ = 0;  // where connection_registry lists it (under its lock)
};

}  // namespace detail
GEERPC_END_NAMESPACE
