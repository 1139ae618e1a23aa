// Boost.JSON (Boost 1.81) adapter. Header-only: exactly one TU includes <boost/json/src.hpp>
// (define JC_BOOST_SRC there); the others include <boost/json.hpp>.
#pragma once
#include "common.hpp"
#ifdef JC_BOOST_SRC
#include <boost/json/src.hpp>
#else
#include <boost/json.hpp>
#endif

namespace jc::boostjson {
namespace json = boost::json;

inline json::parse_options options() {
  json::parse_options o;
  o.max_depth = 64;  // the default is 32
  return o;
}

inline bool get_i64(const json::value* v, std::int64_t& out) {
  if (!v) return false;
  if (auto p = v->if_int64()) {
    out = *p;
    return true;
  }
  if (auto p = v->if_uint64(); p && *p <= INT64_MAX) {
    out = static_cast<std::int64_t>(*p);
    return true;
  }
  return false;
}

// ---- plain use: json::parse into a DOM on the default heap resource, serialize a DOM ----
inline bool fill_sum(const json::value& v, sum_request& r) {
  auto o = v.if_object();
  if (!o) return false;
  auto m = o->if_contains("method");
  if (!m || !m->is_string()) return false;
  r.method.assign(m->get_string().data(), m->get_string().size());
  auto p = o->if_contains("params");
  if (!p || !p->is_array() || p->get_array().size() != 1) return false;
  auto a = p->get_array()[0].if_object();
  if (!a) return false;
  if (!get_i64(a->if_contains("A"), r.params.A) || !get_i64(a->if_contains("B"), r.params.B)) return false;
  return get_i64(o->if_contains("id"), r.id);
}
inline bool fill_echo(const json::value& v, echo_request& r) {
  auto o = v.if_object();
  if (!o) return false;
  auto m = o->if_contains("method");
  if (!m || !m->is_string()) return false;
  r.method.assign(m->get_string().data(), m->get_string().size());
  auto p = o->if_contains("params");
  if (!p || !p->is_array() || p->get_array().size() != 1) return false;
  auto s = p->get_array()[0].if_string();
  if (!s) return false;
  r.payload.assign(s->data(), s->size());
  return get_i64(o->if_contains("id"), r.id);
}
inline bool fill_array(const json::value& v, std::vector<args>& out) {
  auto arr = v.if_array();
  if (!arr) return false;
  out.clear();
  out.reserve(arr->size());
  for (auto& e : *arr) {
    auto o = e.if_object();
    if (!o) return false;
    args a;
    if (!get_i64(o->if_contains("A"), a.A) || !get_i64(o->if_contains("B"), a.B)) return false;
    out.push_back(a);
  }
  return true;
}

inline bool parse_sum(std::string_view in, sum_request& r) {
  json::error_code ec;
  auto v = json::parse(in, ec, {}, options());
  return !ec && fill_sum(v, r);
}
inline bool parse_echo(std::string_view in, echo_request& r) {
  json::error_code ec;
  auto v = json::parse(in, ec, {}, options());
  return !ec && fill_echo(v, r);
}
inline bool parse_array(std::string_view in, std::vector<args>& r) {
  json::error_code ec;
  auto v = json::parse(in, ec, {}, options());
  return !ec && fill_array(v, r);
}
inline void write_sum(std::string& out, std::int64_t id, std::int64_t c) {
  json::object o;
  o["id"] = id;
  o["result"] = json::object{{"C", c}};
  o["error"] = nullptr;
  out = json::serialize(o);
}
inline void write_echo(std::string& out, std::int64_t id, std::string_view s) {
  json::object o;
  o["id"] = id;
  o["result"] = s;
  o["error"] = nullptr;
  out = json::serialize(o);
}
inline void write_array(std::string& out, const std::vector<args>& v) {
  json::array a;
  a.reserve(v.size());
  for (auto& x : v) a.push_back(json::object{{"A", x.A}, {"B", x.B}});
  out = json::serialize(a);
}

// ---- tuned use: a reused json::parser, DOM in a monotonic_resource over a reused buffer,
//      serializer writing into the reused output string ----
struct arena {
  std::vector<unsigned char> buf = std::vector<unsigned char>(512 * 1024);
  json::parser parser{json::storage_ptr(), options()};
};
inline arena& the_arena() {
  static arena a;
  return a;
}

template <class Fill, class T>
inline bool parse_tuned(std::string_view in, T& r, Fill fill) {
  auto& a = the_arena();
  json::monotonic_resource mr(a.buf.data(), a.buf.size());
  a.parser.reset(&mr);
  json::error_code ec;
  a.parser.write(in.data(), in.size(), ec);
  if (ec) return false;
  json::value v = a.parser.release();
  return fill(v, r);
}
inline bool parse_sum_tuned(std::string_view in, sum_request& r) { return parse_tuned(in, r, fill_sum); }
inline bool parse_echo_tuned(std::string_view in, echo_request& r) { return parse_tuned(in, r, fill_echo); }
inline bool parse_array_tuned(std::string_view in, std::vector<args>& r) { return parse_tuned(in, r, fill_array); }

inline void serialize_into(std::string& out, const json::value& v) {
  json::serializer sr;
  sr.reset(&v);
  out.clear();
  char buf[4096];
  while (!sr.done()) out.append(sr.read(buf, sizeof buf));
}
inline void write_sum_tuned(std::string& out, std::int64_t id, std::int64_t c) {
  unsigned char buf[1024];
  json::monotonic_resource mr(buf, sizeof buf);
  json::object o(&mr);
  o["id"] = id;
  o["result"] = json::object({{"C", c}}, &mr);
  o["error"] = nullptr;
  json::value v(std::move(o));
  serialize_into(out, v);
}
inline void write_echo_tuned(std::string& out, std::int64_t id, std::string_view s) {
  unsigned char buf[8192];
  json::monotonic_resource mr(buf, sizeof buf);
  json::object o(&mr);
  o["id"] = id;
  o["result"] = s;
  o["error"] = nullptr;
  json::value v(std::move(o));
  serialize_into(out, v);
}
inline void write_array_tuned(std::string& out, const std::vector<args>& v) {
  auto& ar = the_arena();
  json::monotonic_resource mr(ar.buf.data(), ar.buf.size());
  json::array a(&mr);
  a.reserve(v.size());
  for (auto& x : v) a.push_back(json::object({{"A", x.A}, {"B", x.B}}, &mr));
  json::value val(std::move(a));
  serialize_into(out, val);
}

// ---- hostile-input probe: full DOM parse with the given limits; the message names the byte
//      position (parser::write returns how far it got) ----
inline std::string describe(const json::value& v) {
  char b[160];
  switch (v.kind()) {
    case json::kind::int64:
      std::snprintf(b, sizeof b, "int64 %lld", (long long)v.get_int64());
      return b;
    case json::kind::uint64:
      std::snprintf(b, sizeof b, "uint64 %llu", (unsigned long long)v.get_uint64());
      return b;
    case json::kind::double_:
      std::snprintf(b, sizeof b, "double %.17g", v.get_double());
      return b;
    case json::kind::string:
      std::snprintf(b, sizeof b, "string of %zu bytes", v.get_string().size());
      return b;
    case json::kind::object: {
      auto& o = v.get_object();
      std::string s = "object size " + std::to_string(o.size());
      if (auto a = o.if_contains("a"); a && a->is_number()) s += ", a=" + json::serialize(*a);
      return s;
    }
    case json::kind::array:
      return "array";
    default:
      return json::serialize(v);
  }
}
inline std::string probe(std::string_view in, std::size_t max_depth) {
  json::parse_options o;
  o.max_depth = max_depth;
  json::parser p(json::storage_ptr(), o);
  json::error_code ec;
  std::size_t n = 0;
  try {
    n = p.write(in.data(), in.size(), ec);
  } catch (std::exception& e) {
    return std::string("exception: ") + e.what();
  }
  if (ec) return "error at byte " + std::to_string(n) + ": " + ec.message();
  return "ok: " + describe(p.release());
}

// A SAX handler with a string/key size limit and no DOM: constant memory on a long string.
struct limit_handler {
  static constexpr std::size_t max_object_size = 1 << 20;
  static constexpr std::size_t max_array_size = 1 << 20;
  static constexpr std::size_t max_key_size = 256;
  static constexpr std::size_t max_string_size = 1 << 20;  // 1 MiB
  std::size_t strings = 0;
  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_array_begin(json::error_code&) { return true; }
  bool on_array_end(std::size_t, json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) { return true; }
  bool on_object_end(std::size_t, json::error_code&) { return true; }
  bool on_string_part(std::string_view, std::size_t, json::error_code&) { return true; }
  bool on_string(std::string_view, std::size_t, json::error_code&) {
    ++strings;
    return true;
  }
  bool on_key_part(std::string_view, std::size_t, json::error_code&) { return true; }
  bool on_key(std::string_view, std::size_t, json::error_code&) { return true; }
  bool on_number_part(std::string_view, json::error_code&) { return true; }
  bool on_int64(std::int64_t, std::string_view, json::error_code&) { return true; }
  bool on_uint64(std::uint64_t, std::string_view, json::error_code&) { return true; }
  bool on_double(double, std::string_view, json::error_code&) { return true; }
  bool on_bool(bool, json::error_code&) { return true; }
  bool on_null(json::error_code&) { return true; }
  bool on_comment_part(std::string_view, json::error_code&) { return true; }
  bool on_comment(std::string_view, json::error_code&) { return true; }
};
// Feeds the input in 64 KiB chunks, as a socket reader would.
inline std::string probe_stream_sax_limit(std::string_view in) {
  json::basic_parser<limit_handler> p(options());
  json::error_code ec;
  std::size_t off = 0;
  while (off < in.size()) {
    std::size_t len = std::min<std::size_t>(64 * 1024, in.size() - off);
    std::size_t n = p.write_some(off + len < in.size(), in.data() + off, len, ec);
    off += n;
    if (ec) return "error at byte " + std::to_string(off) + ": " + ec.message();
  }
  return "ok";
}
// DOM built by a stream_parser into a fixed 1 MiB static_resource: the memory cap is the budget.
inline std::string probe_stream_budget(std::string_view in) {
  static unsigned char buf[1 << 20];
  json::static_resource mr(buf, sizeof buf);
  json::stream_parser p(&mr, options());
  json::error_code ec;
  std::size_t off = 0;
  try {
    while (off < in.size()) {
      std::size_t len = std::min<std::size_t>(64 * 1024, in.size() - off);
      off += p.write_some(in.data() + off, len, ec);
      if (ec) return "error at byte " + std::to_string(off) + ": " + ec.message();
    }
    p.finish(ec);
    if (ec) return "error: " + ec.message();
  } catch (std::bad_alloc&) {
    return "bad_alloc (budget) near byte " + std::to_string(off);
  }
  return "ok";
}
}  // namespace jc::boostjson
