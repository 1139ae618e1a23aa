// RapidJSON 1.1.0 (Debian 1.1.0+dfsg2) adapter.
#pragma once
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include "common.hpp"

namespace jc::rapid {
namespace rj = rapidjson;

template <class V>
inline bool get_i64(const V& o, const char* k, std::int64_t& out) {
  auto it = o.FindMember(k);
  if (it == o.MemberEnd() || !it->value.IsInt64()) return false;
  out = it->value.GetInt64();
  return true;
}
template <class Doc>
inline bool fill_sum(const Doc& d, sum_request& r) {
  if (!d.IsObject()) return false;
  auto m = d.FindMember("method");
  if (m == d.MemberEnd() || !m->value.IsString()) return false;
  r.method.assign(m->value.GetString(), m->value.GetStringLength());
  auto p = d.FindMember("params");
  if (p == d.MemberEnd() || !p->value.IsArray() || p->value.Size() != 1) return false;
  auto& a = p->value[0];
  if (!a.IsObject()) return false;
  if (!get_i64(a, "A", r.params.A) || !get_i64(a, "B", r.params.B)) return false;
  return get_i64(d, "id", r.id);
}
template <class Doc>
inline bool fill_echo(const Doc& d, echo_request& r) {
  if (!d.IsObject()) return false;
  auto m = d.FindMember("method");
  if (m == d.MemberEnd() || !m->value.IsString()) return false;
  r.method.assign(m->value.GetString(), m->value.GetStringLength());
  auto p = d.FindMember("params");
  if (p == d.MemberEnd() || !p->value.IsArray() || p->value.Size() != 1) return false;
  auto& s = p->value[0];
  if (!s.IsString()) return false;
  r.payload.assign(s.GetString(), s.GetStringLength());
  return get_i64(d, "id", r.id);
}
template <class Doc>
inline bool fill_array(const Doc& d, std::vector<args>& out) {
  if (!d.IsArray()) return false;
  out.clear();
  out.reserve(d.Size());
  for (auto& e : d.GetArray()) {
    if (!e.IsObject()) return false;
    args a;
    if (!get_i64(e, "A", a.A) || !get_i64(e, "B", a.B)) return false;
    out.push_back(a);
  }
  return true;
}
constexpr unsigned flags = rj::kParseValidateEncodingFlag | rj::kParseIterativeFlag;
inline bool parse_sum(std::string_view in, sum_request& r) {
  rj::Document d;
  d.Parse<flags>(in.data(), in.size());
  return !d.HasParseError() && fill_sum(d, r);
}
inline bool parse_echo(std::string_view in, echo_request& r) {
  rj::Document d;
  d.Parse<flags>(in.data(), in.size());
  return !d.HasParseError() && fill_echo(d, r);
}
inline bool parse_array(std::string_view in, std::vector<args>& r) {
  rj::Document d;
  d.Parse<flags>(in.data(), in.size());
  return !d.HasParseError() && fill_array(d, r);
}
// Writing with RapidJSON's SAX Writer (its usual way: no DOM for output).
inline void write_sum(std::string& out, std::int64_t id, std::int64_t c) {
  rj::StringBuffer sb;
  rj::Writer<rj::StringBuffer> w(sb);
  w.StartObject();
  w.Key("id");
  w.Int64(id);
  w.Key("result");
  w.StartObject();
  w.Key("C");
  w.Int64(c);
  w.EndObject();
  w.Key("error");
  w.Null();
  w.EndObject();
  out.assign(sb.GetString(), sb.GetSize());
}
inline void write_echo(std::string& out, std::int64_t id, std::string_view s) {
  rj::StringBuffer sb;
  rj::Writer<rj::StringBuffer> w(sb);
  w.StartObject();
  w.Key("id");
  w.Int64(id);
  w.Key("result");
  w.String(s.data(), static_cast<rj::SizeType>(s.size()));
  w.Key("error");
  w.Null();
  w.EndObject();
  out.assign(sb.GetString(), sb.GetSize());
}
inline void write_array(std::string& out, const std::vector<args>& v) {
  rj::StringBuffer sb;
  rj::Writer<rj::StringBuffer> w(sb);
  w.StartArray();
  for (auto& x : v) {
    w.StartObject();
    w.Key("A");
    w.Int64(x.A);
    w.Key("B");
    w.Int64(x.B);
    w.EndObject();
  }
  w.EndArray();
  out.assign(sb.GetString(), sb.GetSize());
}

inline std::string describe(const rj::Value& v) {
  char b[160];
  if (v.IsInt64()) {
    std::snprintf(b, sizeof b, "int64 %lld", (long long)v.GetInt64());
    return b;
  }
  if (v.IsUint64()) {
    std::snprintf(b, sizeof b, "uint64 %llu", (unsigned long long)v.GetUint64());
    return b;
  }
  if (v.IsDouble()) {
    std::snprintf(b, sizeof b, "double %.17g", v.GetDouble());
    return b;
  }
  if (v.IsString()) {
    std::snprintf(b, sizeof b, "string of %u bytes", v.GetStringLength());
    return b;
  }
  if (v.IsObject()) {
    std::string s = "object size " + std::to_string(v.MemberCount());
    auto it = v.FindMember("a");
    if (it != v.MemberEnd() && it->value.IsInt64())
      s += ", a=" + std::to_string(it->value.GetInt64()) + " (FindMember: first)";
    return s;
  }
  if (v.IsArray()) return "array";
  return "other";
}
template <unsigned F>
inline std::string probe_flags(std::string_view in) {
  rj::Document d;
  d.Parse<F>(in.data(), in.size());
  if (d.HasParseError())
    return "error at byte " + std::to_string(d.GetErrorOffset()) + ": " + rj::GetParseError_En(d.GetParseError());
  return "ok: " + describe(d);
}
inline std::string probe(std::string_view in) { return probe_flags<flags>(in); }
inline std::string probe_defaults(std::string_view in) { return probe_flags<rj::kParseDefaultFlags>(in); }
inline std::string probe_nanlit(std::string_view in) { return probe_flags<flags | rj::kParseNanAndInfFlag>(in); }
inline std::string probe_fullprec(std::string_view in) { return probe_flags<flags | rj::kParseFullPrecisionFlag>(in); }
}  // namespace jc::rapid
