// nlohmann/json 3.11.2 adapter.
#pragma once
#include <nlohmann/json.hpp>
#include "common.hpp"

namespace jc::nlohmannjson {
using json = nlohmann::json;

inline bool get_i64(const json& o, const char* k, std::int64_t& out) {
  auto it = o.find(k);
  if (it == o.end() || !it->is_number_integer()) return false;
  out = it->get<std::int64_t>();
  return true;
}
inline bool parse_sum(std::string_view in, sum_request& r) {
  json v = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!v.is_object()) return false;
  auto m = v.find("method");
  if (m == v.end() || !m->is_string()) return false;
  r.method = m->get_ref<const std::string&>();
  auto p = v.find("params");
  if (p == v.end() || !p->is_array() || p->size() != 1) return false;
  auto& a = (*p)[0];
  if (!a.is_object()) return false;
  if (!get_i64(a, "A", r.params.A) || !get_i64(a, "B", r.params.B)) return false;
  return get_i64(v, "id", r.id);
}
inline bool parse_echo(std::string_view in, echo_request& r) {
  json v = json::parse(in, nullptr, false);
  if (!v.is_object()) return false;
  auto m = v.find("method");
  if (m == v.end() || !m->is_string()) return false;
  r.method = m->get_ref<const std::string&>();
  auto p = v.find("params");
  if (p == v.end() || !p->is_array() || p->size() != 1) return false;
  auto& s = (*p)[0];
  if (!s.is_string()) return false;
  r.payload = s.get_ref<const std::string&>();
  return get_i64(v, "id", r.id);
}
inline bool parse_array(std::string_view in, std::vector<args>& out) {
  json v = json::parse(in, nullptr, false);
  if (!v.is_array()) return false;
  out.clear();
  out.reserve(v.size());
  for (auto& e : v) {
    if (!e.is_object()) return false;
    args a;
    if (!get_i64(e, "A", a.A) || !get_i64(e, "B", a.B)) return false;
    out.push_back(a);
  }
  return true;
}
// nlohmann::json keeps object keys sorted (std::map): the reply comes out as {"error":..,"id":..,"result":..}.
inline void write_sum(std::string& out, std::int64_t id, std::int64_t c) {
  json o = {{"id", id}, {"result", {{"C", c}}}, {"error", nullptr}};
  out = o.dump();
}
inline void write_echo(std::string& out, std::int64_t id, std::string_view s) {
  json o = {{"id", id}, {"result", s}, {"error", nullptr}};
  out = o.dump();
}
inline void write_array(std::string& out, const std::vector<args>& v) {
  json a = json::array();
  a.get_ref<json::array_t&>().reserve(v.size());
  for (auto& x : v) a.push_back({{"A", x.A}, {"B", x.B}});
  out = a.dump();
}

inline std::string describe(const json& v) {
  char b[160];
  switch (v.type()) {
    case json::value_t::number_integer:
      std::snprintf(b, sizeof b, "int64 %lld", (long long)v.get<std::int64_t>());
      return b;
    case json::value_t::number_unsigned:
      std::snprintf(b, sizeof b, "uint64 %llu", (unsigned long long)v.get<std::uint64_t>());
      return b;
    case json::value_t::number_float:
      std::snprintf(b, sizeof b, "double %.17g", v.get<double>());
      return b;
    case json::value_t::string:
      std::snprintf(b, sizeof b, "string of %zu bytes", v.get_ref<const std::string&>().size());
      return b;
    case json::value_t::object: {
      std::string s = "object size " + std::to_string(v.size());
      if (v.contains("a") && v["a"].is_number()) s += ", a=" + v["a"].dump();
      return s;
    }
    case json::value_t::array:
      return "array";
    default:
      return v.dump();
  }
}
inline std::string probe(std::string_view in) {
  try {
    json v = json::parse(in);
    return "ok: " + describe(v);
  } catch (json::exception& e) {
    return std::string("error: ") + e.what();
  }
}
// Depth limit through the SAX interface: the DOM builder wrapped by a handler refusing depth > max.
struct depth_limited : nlohmann::detail::json_sax_dom_parser<json> {
  using base = nlohmann::detail::json_sax_dom_parser<json>;
  std::size_t depth = 0, max;
  std::string err;
  depth_limited(json& j, std::size_t m) : base(j, true), max(m) {}
  bool start_object(std::size_t n) {
    if (++depth > max) {
      err = "depth";
      return false;
    }
    return base::start_object(n);
  }
  bool start_array(std::size_t n) {
    if (++depth > max) {
      err = "depth";
      return false;
    }
    return base::start_array(n);
  }
  bool end_object() {
    --depth;
    return base::end_object();
  }
  bool end_array() {
    --depth;
    return base::end_array();
  }
  bool string(std::string& s) {
    if (s.size() > (1u << 20)) {
      err = "string too long";
      return false;
    }
    return base::string(s);
  }
};
inline std::string probe_limited(std::string_view in, std::size_t max_depth) {
  json j;
  depth_limited h(j, max_depth);
  try {
    bool ok = json::sax_parse(in, &h);
    if (!ok) return "stopped by handler: " + h.err;
    return "ok: " + describe(j);
  } catch (json::exception& e) {
    return std::string("error: ") + e.what();
  }
}
}  // namespace jc::nlohmannjson
