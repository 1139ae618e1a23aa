// geerpc: the call types a server connection takes although their fingerprints are not their
// handlers' (docs/protocol.md 4.2): a client built with a struct that has more or fewer trailing
// fields. Decided from the schema the client sends with its first calls of that method and type,
// and remembered for the connection, whose later calls of them come without one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../codec/schema_compare.hpp"
#include "../config.hpp"
#include "dispatcher.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// Used by the connection's reading thread alone (server_connection::on_request), so unlocked.
class accepted_types {
 public:
  // The most call types one connection may have judged this way: taken, and refused. A client of
  // one build has one per method it calls, so a peer that sends more is not a client of one build.
  // A type judged before is answered from here: each costs at most one parse of a schema (64 KiB
  // at most) for the connection's life, and 48 bytes, or about 400 with its refusal's message.
  static constexpr std::size_t limit = 1024;
  static constexpr std::size_t refused_limit = 64;

  // Whether a request for `handler` whose fingerprint differs from the handler's may go on: none
  // when it may, else the message of its type_mismatch refusal.
  std::optional<std::string> refusal(const handler_entry& handler, std::uint32_t fingerprint, std::string_view schema) {
    for (const judged& j : judged_)
      if (j.handler == &handler && j.fingerprint == fingerprint)
        return j.refusal.empty() ? std::nullopt : std::optional<std::string>(j.refusal);
    if (schema.empty() || handler.schema == nullptr)
      return prefix(handler) + "the call's argument or result types are not the method's";
    if (codec::schema_fingerprint(schema) != fingerprint)
      return prefix(handler) + "the call's schema is not the one its fingerprint was made from";
    if (judged_.size() == limit || refused_ == refused_limit)
      return prefix(handler) + "this connection has already sent " +
             (refused_ == refused_limit ? std::to_string(refused_limit) + " call types refused"
                                        : std::to_string(limit) + " call types that differ from their methods'") +
             " (the limit)";
    try {
      const codec::schema_verdict verdict =
          codec::compare_call_schemas(*handler.schema, schema, {"on the server", "from the client"});
      judged_.push_back({&handler, fingerprint, verdict.compatible ? std::string() : prefix(handler) + verdict.why});
      if (verdict.compatible) return std::nullopt;
      ++refused_;
      return judged_.back().refusal;
    } catch (const std::bad_alloc&) {
      return prefix(handler) + "no memory to compare the call's types with the method's";
    }
  }

 private:
  struct judged {
    const handler_entry* handler;
    std::uint32_t fingerprint;
    std::string refusal;  // empty: taken
  };
  static std::string prefix(const handler_entry& handler) {
    return "rpc server: type mismatch calling " + handler.name + ": ";
  }

  std::vector<judged> judged_;
  std::size_t refused_ = 0;
};

}  // namespace detail
GEERPC_END_NAMESPACE
