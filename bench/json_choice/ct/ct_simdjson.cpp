// Compile-cost TU: the six codec operations with one library (see compile_cost.sh).
// parse only; link -lsimdjson
#include "../lib_simdjson.hpp"
namespace ct {
bool parse_sum(std::string_view in, jc::sum_request& r) { return jc::simd::parse_sum(in, r); }
bool parse_echo(std::string_view in, jc::echo_request& r) { return jc::simd::parse_echo(in, r); }
bool parse_array(std::string_view in, std::vector<jc::args>& r) { return jc::simd::parse_array(in, r); }

}  // namespace ct
