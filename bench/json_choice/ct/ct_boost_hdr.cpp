// Compile-cost TU: the six codec operations with one library (see compile_cost.sh).
// uses <boost/json.hpp>; the sources are compiled once in ct_boost_srconly.cpp
#include "../lib_boost.hpp"
namespace ct {
bool parse_sum(std::string_view in, jc::sum_request& r) { return jc::boostjson::parse_sum(in, r); }
bool parse_echo(std::string_view in, jc::echo_request& r) { return jc::boostjson::parse_echo(in, r); }
bool parse_array(std::string_view in, std::vector<jc::args>& r) { return jc::boostjson::parse_array(in, r); }
void write_sum(std::string& o, std::int64_t id, std::int64_t c) { jc::boostjson::write_sum(o, id, c); }
void write_echo(std::string& o, std::int64_t id, std::string_view s) { jc::boostjson::write_echo(o, id, s); }
void write_array(std::string& o, const std::vector<jc::args>& v) { jc::boostjson::write_array(o, v); }
}  // namespace ct
