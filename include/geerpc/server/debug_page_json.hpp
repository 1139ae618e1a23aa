// geerpc: the debug page's data as JSON (GET /debug/geerpc/stats.json), for scripts and dashboards.
// Written here rather than by a JSON library: the core depends on Boost alone, and what is written
// is a fixed shape of numbers and escaped strings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../config.hpp"
#include "context.hpp"
#include "debug_snapshot.hpp"
#include "page_text.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

inline void append_json_numbers(std::string& out, const std::vector<debug_snapshot::number>& numbers) {
  out += '{';
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    if (i != 0) out += ',';
    append_json_string(out, numbers[i].key);
    out += ':';
    out += std::to_string(numbers[i].value);
  }
  out += '}';
}

inline void append_json_errors(std::string& out, const std::vector<debug_snapshot::error_count>& errors) {
  out += '{';
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (i != 0) out += ',';
    append_json_string(out, errors[i].code);
    out += ':';
    out += std::to_string(errors[i].count);
  }
  out += '}';
}

// `,"key":value`
inline void append_json_field(std::string& out, const char* key, std::uint64_t value) {
  out += ",\"";
  out += key;
  out += "\":";
  out += std::to_string(value);
}

inline std::uint64_t json_ns(std::chrono::nanoseconds d) {
  return static_cast<std::uint64_t>(std::max<std::int64_t>(0, d.count()));
}

// Calls `append(out, item)` for each item, with commas between them, inside [ ].
template <class Items, class Append>
void append_json_array(std::string& out, const Items& items, Append&& append) {
  out += '[';
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += ',';
    first = false;
    append(out, item);
  }
  out += ']';
}

// `,"key":{"calls":..,"p50_ns":..,"p99_ns":..,"max_ns":..}`
inline void append_json_latency(std::string& out, const char* key, const latency_summary& l) {
  out += ",\"";
  out += key;
  out += "\":{\"calls\":" + std::to_string(l.count);
  append_json_field(out, "p50_ns", l.p50_ns);
  append_json_field(out, "p99_ns", l.p99_ns);
  append_json_field(out, "max_ns", l.max_ns);
  out += '}';
}

// `,"key":{"count":..,"mean":..,"p99_at_most":..}`
inline void append_json_sizes(std::string& out, const char* key, const debug_snapshot::size_summary& s) {
  out += ",\"";
  out += key;
  out += "\":{\"count\":" + std::to_string(s.count);
  append_json_field(out, "mean", s.mean);
  append_json_field(out, "p99_at_most", s.p99_at_most);
  out += '}';
}

inline void append_json_method(std::string& out, const debug_snapshot::method_row& m, bool statistics) {
  out += "{\"name\":";
  append_json_string(out, m.name);
  out += ",\"signature\":";
  append_json_string(out, m.signature);
  out += ",\"fingerprint\":";
  append_json_string(out, m.fingerprint);
  out += ",\"takes_stop_token\":";
  out += m.takes_stop_token ? "true" : "false";
  if (statistics) {
    append_json_field(out, "calls", m.calls);
    append_json_field(out, "successes", m.successes);
    out += ",\"errors\":";
    append_json_errors(out, m.errors);
    append_json_field(out, "expired_before_start", m.expired_before_start);
    append_json_field(out, "shed_by_queue_time", m.shed_by_queue_time);
    append_json_field(out, "in_flight", m.in_flight);
    append_json_field(out, "oldest_in_flight_ns", json_ns(m.oldest));
    append_json_latency(out, "latency_last_minute", m.latency);
    append_json_latency(out, "latency_ok_last_minute", m.ok_latency);
    append_json_latency(out, "latency_failed_last_minute", m.failed_latency);
    append_json_sizes(out, "request_bytes", m.request_bytes);
    append_json_sizes(out, "response_bytes", m.response_bytes);
  }
  out += '}';
}

// A connection's TLS identity: null for a plain connection; its certificate's names once verified.
inline void append_json_identity(std::string& out, const net::peer_identity& who) {
  if (!who.encrypted) {
    out += "null";
    return;
  }
  out += "{\"verified\":";
  out += who.verified ? "true" : "false";
  if (who.verified) {
    out += ",\"subject\":";
    append_json_string(out, who.subject);
    const auto strings = [](std::string& o, const std::string& text) { append_json_string(o, text); };
    for (const auto& [key, names] : {std::pair{",\"dns\":", &who.dns_names}, std::pair{",\"ip\":", &who.ip_addresses},
                                     std::pair{",\"uri\":", &who.uris}, std::pair{",\"email\":", &who.emails}}) {
      out += key;
      append_json_array(out, *names, strings);
    }
  }
  out += '}';
}

inline void append_json_connection(std::string& out, const debug_snapshot::connection_row& c) {
  out += "{\"peer\":";
  append_json_string(out, c.peer);
  append_json_field(out, "age_ns", json_ns(c.age));
  if (c.idle) append_json_field(out, "idle_ns", json_ns(*c.idle));
  append_json_field(out, "in_flight", c.in_flight);
  append_json_field(out, "pending_output_bytes", c.pending_output);
  out += ",\"tls\":";
  append_json_identity(out, c.identity);
  out += '}';
}

// A call in flight: its deadline by the system clock and the time left (negative once it passed),
// null without one.
inline void append_json_call_in_flight(std::string& out, const debug_snapshot::call_row& c) {
  out += "{\"method\":";
  append_json_string(out, c.method);
  out += ",\"peer\":";
  append_json_string(out, c.peer);
  append_json_field(out, "age_ns", json_ns(c.age));
  if (c.deadline) {
    out +=
        ",\"deadline_unix_ms\":" +
        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(c.deadline->time_since_epoch()).count());
    out += ",\"time_left_ns\":" + std::to_string(c.time_left.count());
  } else {
    out += ",\"deadline_unix_ms\":null,\"time_left_ns\":null";
  }
  out += ",\"trace_id\":";
  append_json_string(out, c.trace_id);
  out += ",\"stage\":";
  append_json_string(out, c.stage);
  out += '}';
}

inline void append_json_call(std::string& out, const call_record& r) {
  out += "{\"finished_unix_ms\":";
  out += std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(r.finished.time_since_epoch()).count());
  out += ",\"method\":";
  append_json_string(out, r.method);
  out += ",\"peer\":";
  append_json_string(out, r.peer);
  append_json_field(out, "queued_ns", json_ns(r.queued));
  append_json_field(out, "handler_ns", json_ns(r.handling));
  append_json_field(out, "latency_ns", json_ns(r.latency));
  out += ",\"outcome\":";
  append_json_string(out, errc_name(r.status));
  out += ",\"message\":";
  append_json_string(out, r.message);
  out += '}';
}

// {"limit key": times it turned something away, ...} for the limits that count it.
inline void append_json_turned_away(std::string& out, const std::vector<debug_snapshot::number>& limits) {
  out += '{';
  bool first = true;
  for (const auto& limit : limits) {
    if (!limit.turned_away) continue;
    if (!first) out += ',';
    first = false;
    append_json_string(out, limit.key);
    out += ':';
    out += std::to_string(*limit.turned_away);
  }
  out += '}';
}

inline std::string debug_page_json(const server_context& context) {
  const debug_snapshot s(context);
  std::string out = "{\"statistics\":";
  out += s.statistics ? "true" : "false";
  out += ",\"methods\":";
  append_json_array(out, s.methods, [&](std::string& o, const auto& m) { append_json_method(o, m, s.statistics); });
  if (s.statistics) {
    out += ",\"unrouted_errors\":";
    append_json_errors(out, s.unrouted);
  }
  out += ",\"pool\":";
  append_json_numbers(out, s.pool);
  append_json_field(out, "connection_count", s.connection_count);
  out += ",\"connections\":";
  append_json_array(out, s.connections, append_json_connection);
  if (s.statistics) {
    out += ",\"calls_in_flight\":{\"count\":" + std::to_string(s.calls_in_flight) + ",\"oldest\":";
    append_json_array(out, s.calls, append_json_call_in_flight);
    out += '}';
    append_json_field(out, "slow_call_ns", json_ns(s.slow_call));
    out += ",\"recent_calls\":";
    append_json_array(out, s.recent, append_json_call);
  }
  out += ",\"now\":";
  append_json_numbers(out, s.now);
  out += ",\"limits\":";
  append_json_numbers(out, s.limits);
  if (s.statistics) {
    out += ",\"turned_away\":";
    append_json_turned_away(out, s.limits);
  }
  out += "}\n";
  return out;
}

}  // namespace detail
GEERPC_END_NAMESPACE
