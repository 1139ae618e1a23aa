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

inline std::string debug_page_json(const server_context& context) {
  const debug_snapshot s(context);
  const auto field = [](std::string& out, const char* key, std::uint64_t value) {
    out += ",\"";
    out += key;
    out += "\":";
    out += std::to_string(value);
  };
  const auto ns = [](std::chrono::nanoseconds d) {
    return static_cast<std::uint64_t>(std::max<std::int64_t>(0, d.count()));
  };
  std::string out = "{\"statistics\":";
  out += s.statistics ? "true" : "false";
  out += ",\"methods\":[";
  for (std::size_t i = 0; i < s.methods.size(); ++i) {
    const auto& m = s.methods[i];
    if (i != 0) out += ',';
    out += "{\"name\":";
    append_json_string(out, m.name);
    out += ",\"signature\":";
    append_json_string(out, m.signature);
    out += ",\"fingerprint\":";
    append_json_string(out, m.fingerprint);
    out += ",\"takes_stop_token\":";
    out += m.takes_stop_token ? "true" : "false";
    if (s.statistics) {
      field(out, "calls", m.calls);
      field(out, "successes", m.successes);
      out += ",\"errors\":";
      append_json_errors(out, m.errors);
      field(out, "in_flight", m.in_flight);
      field(out, "oldest_in_flight_ns", ns(m.oldest));
      out += ",\"latency_last_minute\":{\"calls\":" + std::to_string(m.latency.count);
      field(out, "p50_ns", m.latency.p50_ns);
      field(out, "p99_ns", m.latency.p99_ns);
      field(out, "max_ns", m.latency.max_ns);
      out += '}';
    }
    out += '}';
  }
  out += ']';
  if (s.statistics) {
    out += ",\"unrouted_errors\":";
    append_json_errors(out, s.unrouted);
  }
  out += ",\"pool\":";
  append_json_numbers(out, s.pool);
  field(out, "connection_count", s.connection_count);
  out += ",\"connections\":[";
  for (std::size_t i = 0; i < s.connections.size(); ++i) {
    const auto& c = s.connections[i];
    if (i != 0) out += ',';
    out += "{\"peer\":";
    append_json_string(out, c.peer);
    field(out, "age_ns", ns(c.age));
    if (c.idle) field(out, "idle_ns", ns(*c.idle));
    field(out, "in_flight", c.in_flight);
    field(out, "pending_output_bytes", c.pending_output);
    out += '}';
  }
  out += ']';
  if (s.statistics) {
    field(out, "slow_call_ns", ns(s.slow_call));
    out += ",\"recent_calls\":[";
    for (std::size_t i = 0; i < s.recent.size(); ++i) {
      const call_record& r = s.recent[i];
      if (i != 0) out += ',';
      out += "{\"finished_unix_ms\":";
      out +=
          std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(r.finished.time_since_epoch()).count());
      out += ",\"method\":";
      append_json_string(out, r.method);
      out += ",\"peer\":";
      append_json_string(out, r.peer);
      field(out, "queued_ns", ns(r.queued));
      field(out, "handler_ns", ns(r.handling));
      field(out, "latency_ns", ns(r.latency));
      out += ",\"outcome\":";
      append_json_string(out, errc_name(r.status));
      out += ",\"message\":";
      append_json_string(out, r.message);
      out += '}';
    }
    out += ']';
  }
  out += ",\"now\":";
  append_json_numbers(out, s.now);
  out += ",\"limits\":";
  append_json_numbers(out, s.limits);
  if (s.statistics) {
    out += ",\"turned_away\":{";
    bool first = true;
    for (const auto& limit : s.limits) {
      if (!limit.turned_away) continue;
      if (!first) out += ',';
      first = false;
      append_json_string(out, limit.key);
      out += ':';
      out += std::to_string(*limit.turned_away);
    }
    out += '}';
  }
  out += "}\n";
  return out;
}

}  // namespace detail
GEERPC_END_NAMESPACE
