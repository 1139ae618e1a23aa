#!/usr/bin/env bash
# What geerpc costs a user's build: the time `g++ -std=c++20 -O0 -c` takes for one translation unit
# with one service, a server and one call (build_cost/one_service.cpp), header-only and with
# GEERPC_SEPARATE_COMPILATION (the engines compiled once elsewhere), through the multi-header tree
# and the single header; a client-only file (build_cost/client_only.cpp); then the once-per-program
# file that compiles the engines, and the preprocessed size of each. Medians of RUNS compiles, and the
# least CPU time of them (cpu_min_s: on a loaded machine the least disturbed run); run it on a quiet
# machine (a compile racing other work measures the other work).
#
# Then compile time against a type's nesting depth (build_cost/nested.cpp, header-only, one compile
# each, stopped after DEPTH_TIMEOUT seconds): a method whose argument nests DEPTH levels, through
# geerpc and, for comparison, walked by plain code without geerpc; for std::vector<std::vector<...>>
# and for a struct template holding a vector of the level below.
#
#   bench/build_cost.sh            prints "build_cost <variant> wall_s=… cpu_s=… cpu_min_s=… lines=…" per variant
#                                  and "build_cost nesting shape=… depth=… geerpc_cpu_s=… plain_cpu_s=…"
#   bench/build_cost.sh nesting    only the nesting depths
#   bench/build_cost.sh trace      where the time of one_service.cpp and client_only.cpp goes:
#                                  the top items of clang++ -ftime-trace
#
# Environment: CXX=g++, RUNS=5, CXXFLAGS="-std=c++20 -O0", DEPTHS="4 8 16 32 64", DEPTH_TIMEOUT=300,
# TRACE_CXX=clang++.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
CXX=${CXX:-g++}
RUNS=${RUNS:-5}
DEPTHS=${DEPTHS:-"4 8 16 32 64"}
DEPTH_TIMEOUT=${DEPTH_TIMEOUT:-300}
read -r -a flags <<<"${CXXFLAGS:-"-std=c++20 -O0"}"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
printf '#include <geerpc/implementation.hpp>\n' >"$scratch/impl.cpp"
printf '#define GEERPC_SEPARATE_COMPILATION\n#define GEERPC_IMPLEMENTATION\n#include <geerpc/geerpc.hpp>\n' \
  >"$scratch/impl_single.cpp"

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
minimum() { sort -g | head -n 1; }

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
  printf 'build_cost %s wall_s=%.2f cpu_s=%.2f cpu_min_s=%.2f lines=%d\n' "$label" \
    "$(printf '%s\n' "${walls[@]}" | median)" "$(printf '%s\n' "${cpus[@]}" | median)" \
    "$(printf '%s\n' "${cpus[@]}" | minimum)" "$lines"
}

# CPU seconds of one compile of nested.cpp, or "timeout".
compile_nested() {  # compiler arguments...
  local usage
  if usage=$( { TIMEFORMAT='%U %S'; time timeout "$DEPTH_TIMEOUT" "$CXX" "${flags[@]}" "$@" \
      -c "$here/build_cost/nested.cpp" -o "$scratch/nested.o"; } 2>&1 >/dev/null); then
    echo "$usage" | tail -1 | awk '{ printf "%.2f", $1 + $2 }'
  else
    echo timeout
  fi
}

nesting() {
  local shape depth define
  for shape in vector level; do
    define=()
    [[ $shape == level ]] && define=(-DSHAPE_LEVEL)
    for depth in $DEPTHS; do
      printf 'build_cost nesting shape=%s depth=%d geerpc_cpu_s=%s plain_cpu_s=%s\n' "$shape" "$depth" \
        "$(compile_nested "${define[@]}" -DDEPTH="$depth" -I "$root/include")" \
        "$(compile_nested "${define[@]}" -DDEPTH="$depth" -DPLAIN)"
    done
  done
}

# The top items of clang's -ftime-trace for one file: the totals by kind, then the costliest headers
# and template instantiations.
trace() {  # label, source
  local label=$1 source=$2
  "$TRACE_CXX" "${flags[@]}" -ftime-trace -I "$root/include" -c "$source" -o "$scratch/$label.o"
  python3 - "$scratch/$label.json" "$label" <<'PY'
import json, sys
events = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("ph") == "X"]
def top(kind, n):
    chosen = [e for e in events if e["name"] == kind]
    chosen.sort(key=lambda e: -e["dur"])
    for e in chosen[:n]:
        print(f"build_cost trace {sys.argv[2]}   {e['dur'] / 1e6:6.2f} s  {kind} {e['args'].get('detail', '')[:110]}")
totals = sorted((e for e in events if e["name"].startswith("Total ")), key=lambda e: -e["dur"])
for e in totals[:12]:
    print(f"build_cost trace {sys.argv[2]} {e['dur'] / 1e6:6.2f} s  {e['name']}")
top("Source", 8)
top("InstantiateFunction", 6)
top("InstantiateClass", 6)
PY
}

if [[ ${1:-} == nesting ]]; then
  nesting
  exit 0
fi
if [[ ${1:-} == trace ]]; then
  TRACE_CXX=${TRACE_CXX:-clang++}
  trace one_service "$here/build_cost/one_service.cpp"
  trace client_only "$here/build_cost/client_only.cpp"
  exit 0
fi

tu=$here/build_cost/one_service.cpp
measure header-only "$tu" -I "$root/include"
measure separate "$tu" -DGEERPC_SEPARATE_COMPILATION -I "$root/include"
measure client-only "$here/build_cost/client_only.cpp" -I "$root/include"
measure single-header-only "$tu" -I "$root/single_include"
measure single-separate "$tu" -DGEERPC_SEPARATE_COMPILATION -I "$root/single_include"
measure engines-once "$scratch/impl.cpp" -I "$root/include"
measure single-engines-once "$scratch/impl_single.cpp" -I "$root/single_include"
nesting
