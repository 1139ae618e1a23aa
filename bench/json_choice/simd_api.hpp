#pragma once
#include "common.hpp"
namespace jc::simd_api {
#define JC_DECL(ns)                                            \
  bool ns##_parse_sum(std::string_view, sum_request&);         \
  bool ns##_parse_echo(std::string_view, echo_request&);       \
  bool ns##_parse_array(std::string_view, std::vector<args>&); \
  std::string ns##_probe(std::string_view);                    \
  const char* ns##_kernel();
JC_DECL(simd_generic)
JC_DECL(simd_haswell)
#undef JC_DECL
}  // namespace jc::simd_api
