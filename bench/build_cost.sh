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
# TRACE_CXX=clang++, BASE (unset).
#
# BASE=<another checkout>: each variant and depth is compiled from both trees (this tree's sources,
# each tree's headers), run by run in turn, so that a loaded machine disturbs both alike; each line
# names its tree (tree=base, tree=this), and a "build_cost ratio <variant> cpu_min=…" line follows
# (this tree's least CPU time over the base's).
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

# The trees measured: this one, and BASE's first when it is set.
trees=("$root")
names=(this)
if [[ -n ${BASE:-} ]]; then
  trees=("$(cd "$BASE" && pwd)" "$root")
  names=(base this)
fi
tree_label() { [[ -n ${BASE:-} ]] && printf ' tree=%s' "$1"; return 0; }

# CPU seconds of one compile: compiler arguments... (with the source)
compile_cpu() {
  local usage
  usage=$( { TIMEFORMAT='%U %S'; time "$CXX" "${flags[@]}" "$@" -o "$scratch/out.o"; } 2>&1 >/dev/null)
  echo "$usage" | awk '{ print $1 + $2 }'
}

measure() {  # label, source, include folder (include, single_include), compiler arguments...
  local label=$1 source=$2 folder=$3 i t
  shift 3
  local -a walls cpus mins
  for ((t = 0; t < ${#trees[@]}; t++)); do walls[t]=""; cpus[t]=""; done
  for ((i = 0; i < RUNS; i++)); do
    for ((t = 0; t < ${#trees[@]}; t++)); do
      local start end
      start=$(date +%s.%N)
      cpus[t]+="$(compile_cpu "$@" -I "${trees[t]}/$folder" -c "$source") "
      end=$(date +%s.%N)
      walls[t]+="$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }') "
    done
  done
  for ((t = 0; t < ${#trees[@]}; t++)); do
    local lines
    lines=$("$CXX" "${flags[@]}" "$@" -I "${trees[t]}/$folder" -E "$source" | wc -l)
    mins[t]=$(printf '%s\n' ${cpus[t]} | minimum)
    printf 'build_cost %s%s wall_s=%.2f cpu_s=%.2f cpu_min_s=%.2f lines=%d\n' "$label" "$(tree_label "${names[t]}")" \
      "$(printf '%s\n' ${walls[t]} | median)" "$(printf '%s\n' ${cpus[t]} | median)" "${mins[t]}" "$lines"
  done
  if [[ ${#trees[@]} -eq 2 ]]; then
    awk -v l="$label" -v a="${mins[0]}" -v b="${mins[1]}" \
      'BEGIN { printf "build_cost ratio %s cpu_min=%.2f\n", l, (a > 0 ? b / a : 0) }'
  fi
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
  local shape depth define t plain
  for shape in vector level; do
    define=()
    [[ $shape == level ]] && define=(-DSHAPE_LEVEL)
    for depth in $DEPTHS; do
      plain=$(compile_nested "${define[@]}" -DDEPTH="$depth" -DPLAIN)  # no geerpc: the same for each tree
      for ((t = 0; t < ${#trees[@]}; t++)); do
        printf 'build_cost nesting shape=%s depth=%d%s geerpc_cpu_s=%s plain_cpu_s=%s\n' "$shape" "$depth" \
          "$(tree_label "${names[t]}")" "$(compile_nested "${define[@]}" -DDEPTH="$depth" -I "${trees[t]}/include")" \
          "$plain"
      done
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
measure header-only "$tu" include
measure separate "$tu" include -DGEERPC_SEPARATE_COMPILATION
measure client-only "$here/build_cost/client_only.cpp" include
measure single-header-only "$tu" single_include
measure single-separate "$tu" single_include -DGEERPC_SEPARATE_COMPILATION
measure engines-once "$scratch/impl.cpp" include
measure single-engines-once "$scratch/impl_single.cpp" single_include
nesting
