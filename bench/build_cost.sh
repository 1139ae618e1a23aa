#!/usr/bin/env bash
# What geerpc costs a user's build: the time `g++ -std=c++20 -O0 -c` takes for one translation unit
# with one service, a server and one call (build_cost/one_service.cpp), header-only and with
# GEERPC_SEPARATE_COMPILATION (the engines compiled once elsewhere), through the multi-header tree
# and the single header; then the once-per-program file that compiles the engines, and the
# preprocessed size of each. Medians of RUNS compiles; run it on a quiet machine (a compile racing
# other work measures the other work).
#
#   bench/build_cost.sh            prints "build_cost <variant> wall_s=… cpu_s=… lines=…" per variant
#
# Environment: CXX=g++, RUNS=5, CXXFLAGS="-std=c++20 -O0".
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
CXX=${CXX:-g++}
RUNS=${RUNS:-5}
read -r -a flags <<<"${CXXFLAGS:-"-std=c++20 -O0"}"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
printf '#include <geerpc/implementation.hpp>\n' >"$scratch/impl.cpp"
printf '#define GEERPC_SEPARATE_COMPILATION\n#define GEERPC_IMPLEMENTATION\n#include <geerpc/geerpc.hpp>\n' \
  >"$scratch/impl_single.cpp"

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

measure() {  # label, source, compiler arguments...
  local label=$1 source=$2 walls=() cpus=() i
  shift 2
  for ((i = 0; i < RUNS; i++)); do
    local start end usage
    start=$(date +%s.%N)
    usage=$( { TIMEFORMAT='%U %S'; time "$CXX" "${flags[@]}" "$@" -c "$source" -o "$scratch/out.o"; } 2>&1 >/dev/null)
    end=$(date +%s.%N)
    walls+=("$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')")
    cpus+=("$(echo "$usage" | awk '{ print $1 + $2 }')")
  done
  local lines
  lines=$("$CXX" "${flags[@]}" "$@" -E "$source" | wc -l)
  printf 'build_cost %s wall_s=%.2f cpu_s=%.2f lines=%d\n' "$label" \
    "$(printf '%s\n' "${walls[@]}" | median)" "$(printf '%s\n' "${cpus[@]}" | median)" "$lines"
}

tu=$here/build_cost/one_service.cpp
measure header-only "$tu" -I "$root/include"
measure separate "$tu" -DGEERPC_SEPARATE_COMPILATION -I "$root/include"
measure single-header-only "$tu" -I "$root/single_include"
measure single-separate "$tu" -DGEERPC_SEPARATE_COMPILATION -I "$root/single_include"
measure engines-once "$scratch/impl.cpp" -I "$root/include"
measure single-engines-once "$scratch/impl_single.cpp" -I "$root/single_include"
