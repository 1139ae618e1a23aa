// Boost.JSON basic_parser straight into the C++ structs (no DOM): the shape a PFR-driven geerpc
// codec would take. Needs <boost/json/basic_parser_impl.hpp> and, in one TU of the program,
// <boost/json/src.hpp> (basic_parser's stack and error category are compiled there).
#pragma once
#include <boost/json/basic_parser_impl.hpp>
#include "common.hpp"

namespace jc::boostsax {
namespace json = boost::json;

// One handler for the three shapes; a real codec would generate this from the type.
struct handler {
  static constexpr std::size_t max_object_size = 1 << 16;
  static constexpr std::size_t max_array_size = 1 << 16;
  static constexpr std::size_t max_key_size = 64;
  static constexpr std::size_t max_string_size = 1 << 20;
  enum class shape { sum, echo, array } kind = shape::sum;
  sum_request* sum = nullptr;
  echo_request* echo = nullptr;
  std::vector<args>* arr = nullptr;
  int depth = 0;
  char key = 0;  // first letter of the last key seen at the current level ('m','p','i','A','B')
  args cur{};
  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_array_begin(json::error_code&) {
    ++depth;
    return true;
  }
  bool on_array_end(std::size_t, json::error_code&) {
    --depth;
    return true;
  }
  bool on_object_begin(json::error_code&) {
    ++depth;
    cur = {};
    return true;
  }
  bool on_object_end(std::size_t, json::error_code&) {
    if (kind == shape::array && depth == 2) arr->push_back(cur);
    if (kind == shape::sum && depth == 3) sum->params = cur;
    --depth;
    return true;
  }
  bool on_string_part(std::string_view s, std::size_t, json::error_code&) {
    if (kind == shape::echo && depth == 2 && key == 'p') echo->payload.append(s);
    return true;
  }
  bool on_string(std::string_view s, std::size_t, json::error_code&) {
    if (depth == 1 && key == 'm')
      (kind == shape::sum ? sum->method : echo->method).assign(s);
    else if (kind == shape::echo && depth == 2 && key == 'p')
      echo->payload.append(s);
    return true;
  }
  bool on_key_part(std::string_view, std::size_t, json::error_code&) { return true; }
  bool on_key(std::string_view k, std::size_t n, json::error_code&) {
    key = n == k.size() && !k.empty() ? k[0] : 0;
    return true;
  }
  bool on_number_part(std::string_view, json::error_code&) { return true; }
  bool on_int64(std::int64_t v, std::string_view, json::error_code&) {
    if (depth == 1 && key == 'i')
      (kind == shape::sum ? sum->id : echo->id) = v;
    else if (key == 'A')
      cur.A = v;
    else if (key == 'B')
      cur.B = v;
    return true;
  }
  bool on_uint64(std::uint64_t, std::string_view, json::error_code& ec) {
    ec = json::error::not_exact;
    return false;
  }
  bool on_double(double, std::string_view, json::error_code& ec) {
    ec = json::error::not_exact;
    return false;
  }
  bool on_bool(bool, json::error_code&) { return true; }
  bool on_null(json::error_code&) { return true; }
  bool on_comment_part(std::string_view, json::error_code&) { return true; }
  bool on_comment(std::string_view, json::error_code&) { return true; }
};
inline json::basic_parser<handler>& parser() {
  static json::basic_parser<handler> p([] {
    json::parse_options o;
    o.max_depth = 64;
    return o;
  }());
  return p;
}
inline bool run(std::string_view in) {
  auto& p = parser();
  p.reset();
  p.handler().depth = 0;
  json::error_code ec;
  std::size_t n = p.write_some(false, in.data(), in.size(), ec);
  return !ec && n == in.size();
}
inline bool parse_sum(std::string_view in, sum_request& r) {
  auto& h = parser().handler();
  h.kind = handler::shape::sum;
  h.sum = &r;
  return run(in);
}
inline bool parse_echo(std::string_view in, echo_request& r) {
  auto& h = parser().handler();
  h.kind = handler::shape::echo;
  h.echo = &r;
  r.payload.clear();
  return run(in);
}
inline bool parse_array(std::string_view in, std::vector<args>& r) {
  auto& h = parser().handler();
  h.kind = handler::shape::array;
  h.arr = &r;
  r.clear();
  return run(in);
}
}  // namespace jc::boostsax
