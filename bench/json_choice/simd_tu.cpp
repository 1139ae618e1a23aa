// simdjson On Demand compiled twice: without -march (simdjson's header picks its scalar
// "fallback" kernel) and with -march=haswell (its AVX2 kernel). build.sh defines JC_SIMD_NS.
#include "lib_simdjson.hpp"
#include "simd_api.hpp"
#define JC_CAT2(a, b) a##b
#define JC_CAT(a, b) JC_CAT2(a, b)
namespace jc::simd_api {
#define F(name) JC_CAT(JC_SIMD_NS, _##name)
bool F(parse_sum)(std::string_view in, sum_request& r) { return jc::JC_SIMD_NS::parse_sum(in, r); }
bool F(parse_echo)(std::string_view in, echo_request& r) { return jc::JC_SIMD_NS::parse_echo(in, r); }
bool F(parse_array)(std::string_view in, std::vector<args>& r) { return jc::JC_SIMD_NS::parse_array(in, r); }
std::string F(probe)(std::string_view in) { return jc::JC_SIMD_NS::probe(in); }
#define JC_STR2(x) #x
#define JC_STR(x) JC_STR2(x)
const char* F(kernel)() { return JC_STR(SIMDJSON_BUILTIN_IMPLEMENTATION); }
}  // namespace jc::simd_api
