// simdjson 3.0.1 adapter (On Demand API; a compiled library: -lsimdjson). Parse only: simdjson
// 3.0 has no writer, so writing uses the hand-written writer of common.hpp.
// The input must have SIMDJSON_PADDING readable bytes after its end (callers reserve them).
#include <simdjson.h>
#include "common.hpp"

#ifndef JC_SIMD_NS
#define JC_SIMD_NS simd
#endif
namespace jc::JC_SIMD_NS {
namespace od = simdjson::ondemand;

inline od::parser& parser() {
  static od::parser p;
  return p;
}
inline simdjson::padded_string_view padded(std::string_view in) {
  return simdjson::padded_string_view(in.data(), in.size(), in.size() + simdjson::SIMDJSON_PADDING);
}
inline bool parse_sum(std::string_view in, sum_request& r) {
  od::document d;
  if (parser().iterate(padded(in)).get(d)) return false;
  std::string_view m;
  if (d["method"].get_string().get(m)) return false;
  r.method.assign(m);
  od::array p;
  if (d["params"].get_array().get(p)) return false;
  std::size_t n = 0;
  for (auto e : p) {
    od::object o;
    if (n++ || e.get_object().get(o)) return false;
    if (o["A"].get_int64().get(r.params.A) || o["B"].get_int64().get(r.params.B)) return false;
  }
  if (n != 1) return false;
  if (d["id"].get_int64().get(r.id)) return false;
  return true;
}
inline bool parse_echo(std::string_view in, echo_request& r) {
  od::document d;
  if (parser().iterate(padded(in)).get(d)) return false;
  std::string_view m;
  if (d["method"].get_string().get(m)) return false;
  r.method.assign(m);
  od::array p;
  if (d["params"].get_array().get(p)) return false;
  std::size_t n = 0;
  for (auto e : p) {
    std::string_view s;
    if (n++ || e.get_string().get(s)) return false;
    r.payload.assign(s);
  }
  if (n != 1) return false;
  if (d["id"].get_int64().get(r.id)) return false;
  return true;
}
inline bool parse_array(std::string_view in, std::vector<args>& out) {
  od::document d;
  if (parser().iterate(padded(in)).get(d)) return false;
  od::array arr;
  if (d.get_array().get(arr)) return false;
  out.clear();
  for (auto e : arr) {
    od::object o;
    if (e.get_object().get(o)) return false;
    args a;
    if (o["A"].get_int64().get(a.A) || o["B"].get_int64().get(a.B)) return false;
    out.push_back(a);
  }
  return true;
}

// Hostile probe: a full walk of the document (On Demand validates only what is visited).
// The walk is recursive: it stops itself at depth 10000 (reported as "probe's own depth stop") so
// that a crash is simdjson's, not the probe's.
inline simdjson::error_code walk(od::value v, std::string& desc, int depth) {
  if (depth > 10000) {
    desc = "probe's own depth stop";
    return simdjson::DEPTH_ERROR;
  }
  od::json_type t;
  if (auto e = v.type().get(t)) return e;
  switch (t) {
    case od::json_type::array: {
      od::array a;
      if (auto e = v.get_array().get(a)) return e;
      for (auto x : a) {
        od::value y;
        if (auto e = x.get(y)) return e;
        std::string d2;
        if (auto e = walk(y, d2, depth + 1)) {
          desc = d2;
          return e;
        }
      }
      if (depth == 0) desc = "array";
      return simdjson::SUCCESS;
    }
    case od::json_type::object: {
      od::object o;
      if (auto e = v.get_object().get(o)) return e;
      std::size_t n = 0;
      std::string as;
      for (auto f : o) {
        std::string_view k;
        if (auto e = f.unescaped_key().get(k)) return e;
        od::value y;
        if (auto e = f.value().get(y)) return e;
        std::string d2;
        if (auto e = walk(y, d2, depth + 1)) {
          desc = d2;
          return e;
        }
        if (k == "a") as += (as.empty() ? "" : ",") + d2;
        ++n;
      }
      if (depth == 0) desc = "object size " + std::to_string(n) + (as.empty() ? "" : ", a=" + as);
      return simdjson::SUCCESS;
    }
    case od::json_type::string: {
      std::string_view s;
      if (auto e = v.get_string().get(s)) return e;
      desc = "string of " + std::to_string(s.size()) + " bytes";
      return simdjson::SUCCESS;
    }
    case od::json_type::number: {
      od::number n;
      if (auto e = v.get_number().get(n)) return e;
      char b[96];
      if (n.is_int64())
        std::snprintf(b, sizeof b, "int64 %lld", (long long)n.get_int64());
      else if (n.is_uint64())
        std::snprintf(b, sizeof b, "uint64 %llu", (unsigned long long)n.get_uint64());
      else
        std::snprintf(b, sizeof b, "double %.17g", n.get_double());
      desc = b;
      return simdjson::SUCCESS;
    }
    case od::json_type::boolean: {
      bool x;
      if (auto e = v.get_bool().get(x)) return e;
      desc = x ? "true" : "false";
      return simdjson::SUCCESS;
    }
    case od::json_type::null: {
      if (!v.is_null()) return simdjson::INCORRECT_TYPE;
      desc = "null";
      return simdjson::SUCCESS;
    }
  }
  return simdjson::SUCCESS;
}
inline std::string probe(std::string_view in, std::size_t max_depth = simdjson::DEFAULT_MAX_DEPTH) {
  std::string buf(in);
  buf.reserve(in.size() + simdjson::SIMDJSON_PADDING);
  od::parser p(simdjson::SIMDJSON_MAXSIZE_BYTES);
  if (auto e = p.allocate(buf.size(), max_depth)) return std::string("error: ") + simdjson::error_message(e);
  od::document d;
  if (auto e = p.iterate(padded(buf)).get(d)) return std::string("error: ") + simdjson::error_message(e);
  // a scalar document is not an od::value; handle the root kinds the probes use
  od::json_type t;
  if (auto e = d.type().get(t)) return std::string("error: ") + simdjson::error_message(e);
  std::string desc;
  simdjson::error_code err = simdjson::SUCCESS;
  if (t == od::json_type::array || t == od::json_type::object) {
    od::value v;
    if ((err = d.get_value().get(v)) == simdjson::SUCCESS) err = walk(v, desc, 0);
  } else if (t == od::json_type::string) {
    std::string_view s;
    err = d.get_string().get(s);
    desc = "string of " + std::to_string(s.size()) + " bytes";
  } else if (t == od::json_type::number) {
    od::number n;
    err = d.get_number().get(n);
    if (!err) {
      char b[96];
      if (n.is_int64())
        std::snprintf(b, sizeof b, "int64 %lld", (long long)n.get_int64());
      else if (n.is_uint64())
        std::snprintf(b, sizeof b, "uint64 %llu", (unsigned long long)n.get_uint64());
      else
        std::snprintf(b, sizeof b, "double %.17g", n.get_double());
      desc = b;
    }
  } else {
    desc = "scalar";
  }
  if (err) return std::string("error: ") + simdjson::error_message(err) + (desc.empty() ? "" : " (" + desc + ")");
  return "ok: " + desc;
}
}  // namespace jc::JC_SIMD_NS
