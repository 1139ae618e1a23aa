// Compile-cost TU: the six codec operations with one library (see compile_cost.sh).
// basic_parser into the structs; the sources are compiled once in ct_boost_srconly.cpp
#include "../lib_boost_sax.hpp"
namespace ct {
bool parse_sum(std::string_view in, jc::sum_request& r) { return jc::boostsax::parse_sum(in, r); }
bool parse_echo(std::string_view in, jc::echo_request& r) { return jc::boostsax::parse_echo(in, r); }
bool parse_array(std::string_view in, std::vector<jc::args>& r) { return jc::boostsax::parse_array(in, r); }
}  // namespace ct
