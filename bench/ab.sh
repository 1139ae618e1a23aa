#!/usr/bin/env bash
# Interleaved A/B runs of geerpc variants in one pass: every round runs each variant once per
# placement, in an order rotated from round to round, so that a drift of the machine spreads over
# all variants instead of favouring one. Writes raw.txt and ab.md (medians, and each variant's
# ratio to the first) under OUT.
#
#   bench/ab.sh heuristics          tuning::automatic, then each heuristic off alone, then the plain
#                                   core (variants.hpp): what each heuristic buys
#   BASE=<commit> bench/ab.sh commits   threaded at BASE against threaded and plain at HEAD, plus
#                                   callgrind's instructions per W1 call for BASE and HEAD
#
# Environment: ROUNDS=5, PLACEMENTS="same none" (same: every process on CPU 0; none: unpinned),
# WORKLOADS="W1 W2 W3 W4 W5", SCALE=1, OUT=bench/results/ab-<mode>-<date>, CLIENT_TIMEOUT=300,
# NO_CALLGRIND=1 (commits mode: skip the instruction counts), TLS=1 (every variant over TLS, with
# a throwaway certificate made here: both builds need geerpc::tls), BACKGROUND_LOAD=N (N busy processes
# beside client and server for the whole run: background_load.sh),
# VARIANTS="automatic no-spin ..." (heuristics mode: only these, in this order; the first is the
# reference). A variant whose heuristic cannot act in a placement (no-spin, no-own-reply's spin
# part and others on one CPU; no-unled-runs unpinned) runs the same code as automatic there: its
# ratio shows the run's noise.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
mode=${1:?usage: bench/ab.sh heuristics|commits}
ROUNDS=${ROUNDS:-5}
PLACEMENTS=${PLACEMENTS:-"same none"}
WORKLOADS=${WORKLOADS:-"W1 W2 W3 W4 W5"}
SCALE=${SCALE:-1}
CLIENT_TIMEOUT=${CLIENT_TIMEOUT:-300}
OUT=${OUT:-"$here/results/ab-$mode-$(date +%Y%m%d-%H%M%S)"}
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 4096 ]; then ulimit -n 4096; fi
mkdir -p "$OUT"
raw="$OUT/raw.txt"
: >"$raw"
scratch=$(mktemp -d)
server_pid=""
base_tree=""
also_trees=()
# shellcheck source=background_load.sh
source "$here/background_load.sh"
cleanup() {
  stop_background_load
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  [ -z "$base_tree" ] || git -C "$root" worktree remove --force "$base_tree" >/dev/null 2>&1 || true
  for tree in "${also_trees[@]}"; do git -C "$root" worktree remove --force "$tree" >/dev/null 2>&1 || true; done
  rm -rf "$scratch"
}
trap cleanup EXIT

build() {  # source tree, build dir
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DGEERPC_BUILD_BENCH=ON -DGEERPC_BUILD_TESTS=OFF \
    -DGEERPC_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$2" -j2 >/dev/null
}

echo "# building HEAD's benchmark (Release)" >&2
build "$root" "$root/build/bench"
head_bin="$root/build/bench/bench"

# A variant: "label|bin dir|flags for both programs".
variants=()
case "$mode" in
  heuristics)
    variants+=("automatic|$head_bin|--transport threaded")
    for tuning in no-request-batching no-reply-holds no-spin no-own-reply no-unled-runs; do
      variants+=("$tuning|$head_bin|--transport threaded --tuning $tuning")
    done
    variants+=("plain|$head_bin|--transport plain")
    if [ -n "${VARIANTS:-}" ]; then
      chosen=()
      for want in $VARIANTS; do
        for v in "${variants[@]}"; do [ "${v%%|*}" = "$want" ] && chosen+=("$v"); done
      done
      [ ${#chosen[@]} -gt 0 ] || { echo "VARIANTS names none of the variants" >&2; exit 2; }
      variants=("${chosen[@]}")
    fi
    ;;
  commits)
    : "${BASE:?set BASE to the commit to compare against}"
    base_tree="$scratch/base"
    git -C "$root" worktree add --detach "$base_tree" "$BASE" >/dev/null 2>&1
    echo "# building $BASE's benchmark (Release)" >&2
    build "$base_tree" "$scratch/base-build"
    variants+=("base-threaded|$scratch/base-build/bench|--transport threaded")
    # ALSO="<commit> ...": more commits between BASE and HEAD, each a variant (to find which one
    # moved a figure).
    for commit in ${ALSO:-}; do
      tree="$scratch/tree-$commit"
      git -C "$root" worktree add --detach "$tree" "$commit" >/dev/null 2>&1
      also_trees+=("$tree")
      echo "# building $commit's benchmark (Release)" >&2
      build "$tree" "$scratch/build-$commit"
      variants+=("$commit|$scratch/build-$commit/bench|--transport threaded")
    done
    variants+=("threaded|$head_bin|--transport threaded")
    [ -n "${ALSO:-}" ] || variants+=("plain|$head_bin|--transport plain")
    ;;
  *) echo "unknown mode $mode (heuristics|commits)" >&2; exit 2 ;;
esac

start_server() {  # bin, flags, pin prefix...; sets server_pid and port (from this server's own file)
  local bin=$1 flags=$2 out
  shift 2
  out=$(mktemp "$scratch/server.XXXXXX")
  # shellcheck disable=SC2086
  "$@" "$bin/geerpc_bench_server" $flags >"$out" 2>"$out.err" &
  server_pid=$!
  port=""
  for _ in $(seq 1 400); do
    port=$(awk '$1 == "PORT" { print $2; exit }' "$out")
    [ -z "$port" ] || return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.05
  done
  echo "server $bin $flags printed no port:" >&2
  cat "$out.err" >&2
  exit 1
}

stop_server() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

if [ "${TLS:-0}" = 1 ]; then  # every variant over TLS: the same --tls-dir for server and client
  mkdir -p "$scratch/tls"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$scratch/tls/key.pem" -out "$scratch/tls/cert.pem" 2>/dev/null
  for k in "${!variants[@]}"; do variants[k]="${variants[k]} --tls-dir $scratch/tls"; done
fi
count=${#variants[@]}
start_background_load "$OUT"
for v in "${variants[@]}"; do echo "${v%%|*}"; done >"$OUT/variants.txt"
for round in $(seq 1 "$ROUNDS"); do
  for pin in $PLACEMENTS; do
    prefix=()
    [ "$pin" = same ] && prefix=(taskset -c 0)
    for k in $(seq 0 $((count - 1))); do
      IFS='|' read -r label bin flags <<<"${variants[$(((k + round) % count))]}"
      echo "# round $round pin=$pin $label" >&2
      start_server "$bin" "$flags" "${prefix[@]}"
      for w in $WORKLOADS; do
        # shellcheck disable=SC2086
        timeout "$CLIENT_TIMEOUT" "${prefix[@]}" "$bin/geerpc_bench_client" $flags --port "$port" --workload "$w" \
          --scale "$SCALE" --peer "$label" 2>>"$OUT/stderr.txt" |
          while read -r line; do
            case "$line" in bench\ *) echo "$line round=$round pin=$pin" | tee -a "$raw" ;; esac
          done || true
      done
      stop_server
    done
  done
done

stop_background_load

if [ "$mode" = commits ] && [ -z "${NO_CALLGRIND:-}" ] && command -v valgrind >/dev/null; then
  # callgrind.sh of HEAD runs either build: both programs take the same flags it passes.
  : >"$OUT/callgrind.txt"
  for side in base head; do
    dir="$root/build/bench"
    [ "$side" = base ] && dir="$scratch/base-build"
    LABEL=$side bash "$here/callgrind.sh" "$dir" >>"$OUT/callgrind.txt" 2>>"$OUT/stderr.txt" || true
    LABEL="$side-deadlines" CLIENT_ARGS="--deadline-ms 1000 --handle-timeout-ms 1000" \
      bash "$here/callgrind.sh" "$dir" >>"$OUT/callgrind.txt" 2>>"$OUT/stderr.txt" || true
  done
fi

python3 "$here/ab_report.py" "$raw" "$OUT"
echo "# results in $OUT" >&2
