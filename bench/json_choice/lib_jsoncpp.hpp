// JsonCpp 1.9.5 adapter (a compiled library: -ljsoncpp).
#pragma once
#include <json/json.h>
#include <cstring>
#include <memory>
#include "common.hpp"

namespace jc::jsoncpp {
inline Json::CharReader& reader() {
  static std::unique_ptr<Json::CharReader> r = [] {
    Json::CharReaderBuilder b;
    return std::unique_ptr<Json::CharReader>(b.newCharReader());
  }();
  return *r;
}
inline bool get_i64(const Json::Value& o, const char* k, std::int64_t& out) {
  const Json::Value* v = o.find(k, k + std::strlen(k));
  if (!v || !v->isInt64()) return false;
  out = v->asInt64();
  return true;
}
inline bool parse_sum(std::string_view in, sum_request& r) {
  Json::Value v;
  if (!reader().parse(in.data(), in.data() + in.size(), &v, nullptr) || !v.isObject()) return false;
  const Json::Value* m = v.find("method", "method" + 6);
  if (!m || !m->isString()) return false;
  r.method = m->asString();
  const Json::Value* p = v.find("params", "params" + 6);
  if (!p || !p->isArray() || p->size() != 1) return false;
  const Json::Value& a = (*p)[0];
  if (!a.isObject()) return false;
  if (!get_i64(a, "A", r.params.A) || !get_i64(a, "B", r.params.B)) return false;
  return get_i64(v, "id", r.id);
}
inline bool parse_echo(std::string_view in, echo_request& r) {
  Json::Value v;
  if (!reader().parse(in.data(), in.data() + in.size(), &v, nullptr) || !v.isObject()) return false;
  const Json::Value* m = v.find("method", "method" + 6);
  if (!m || !m->isString()) return false;
  r.method = m->asString();
  const Json::Value* p = v.find("params", "params" + 6);
  if (!p || !p->isArray() || p->size() != 1) return false;
  const Json::Value& s = (*p)[0];
  if (!s.isString()) return false;
  const char *b, *e;
  s.getString(&b, &e);
  r.payload.assign(b, e);
  return get_i64(v, "id", r.id);
}
inline bool parse_array(std::string_view in, std::vector<args>& out) {
  Json::Value v;
  if (!reader().parse(in.data(), in.data() + in.size(), &v, nullptr) || !v.isArray()) return false;
  out.clear();
  out.reserve(v.size());
  for (auto& e : v) {
    if (!e.isObject()) return false;
    args a;
    if (!get_i64(e, "A", a.A) || !get_i64(e, "B", a.B)) return false;
    out.push_back(a);
  }
  return true;
}
inline Json::StreamWriterBuilder& writer() {
  static Json::StreamWriterBuilder w = [] {
    Json::StreamWriterBuilder b;
    b["indentation"] = "";
    return b;
  }();
  return w;
}
inline void write_sum(std::string& out, std::int64_t id, std::int64_t c) {
  Json::Value o(Json::objectValue);
  o["id"] = Json::Int64(id);
  o["result"]["C"] = Json::Int64(c);
  o["error"] = Json::Value::null;
  out = Json::writeString(writer(), o);
}
inline void write_echo(std::string& out, std::int64_t id, std::string_view s) {
  Json::Value o(Json::objectValue);
  o["id"] = Json::Int64(id);
  o["result"] = Json::Value(s.data(), s.data() + s.size());
  o["error"] = Json::Value::null;
  out = Json::writeString(writer(), o);
}
inline void write_array(std::string& out, const std::vector<args>& v) {
  Json::Value a(Json::arrayValue);
  a.resize(static_cast<Json::ArrayIndex>(v.size()));
  Json::ArrayIndex i = 0;
  for (auto& x : v) {
    Json::Value& e = a[i++];
    e["A"] = Json::Int64(x.A);
    e["B"] = Json::Int64(x.B);
  }
  out = Json::writeString(writer(), a);
}

inline std::string describe(const Json::Value& v) {
  char b[160];
  if (v.type() == Json::intValue) {
    std::snprintf(b, sizeof b, "int64 %lld", (long long)v.asInt64());
    return b;
  }
  if (v.type() == Json::uintValue) {
    std::snprintf(b, sizeof b, "uint64 %llu", (unsigned long long)v.asUInt64());
    return b;
  }
  if (v.type() == Json::realValue) {
    std::snprintf(b, sizeof b, "double %.17g", v.asDouble());
    return b;
  }
  if (v.isString()) {
    const char *s, *e;
    v.getString(&s, &e);
    std::snprintf(b, sizeof b, "string of %zu bytes", (size_t)(e - s));
    return b;
  }
  if (v.isObject()) {
    std::string s = "object size " + std::to_string(v.size());
    if (v.isMember("a") && v["a"].isNumeric()) s += ", a=" + v["a"].toStyledString();
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }
  if (v.isArray()) return "array";
  return "other";
}
inline std::string probe_with(std::string_view in, const Json::CharReaderBuilder& b) {
  std::unique_ptr<Json::CharReader> r(b.newCharReader());
  Json::Value v;
  std::string errs;
  try {
    if (!r->parse(in.data(), in.data() + in.size(), &v, &errs)) {
      while (!errs.empty() && errs.back() == '\n') errs.pop_back();
      for (auto& c : errs)
        if (c == '\n') c = ' ';
      return "error: " + errs.substr(0, 160);
    }
  } catch (std::exception& e) {
    return std::string("exception: ") + e.what();
  }
  return "ok: " + describe(v);
}
inline std::string probe(std::string_view in) {
  Json::CharReaderBuilder b;
  return probe_with(in, b);
}
inline std::string probe_strict(std::string_view in) {
  // strictMode, but scalar roots allowed so that the scalar probes say something
  Json::CharReaderBuilder b;
  Json::CharReaderBuilder::strictMode(&b.settings_);
  b.settings_["strictRoot"] = false;
  return probe_with(in, b);
}
}  // namespace jc::jsoncpp
