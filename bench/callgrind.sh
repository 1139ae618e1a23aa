#!/usr/bin/env bash
# Instructions per W1 call (Sum, one caller), client and server, counted by callgrind: repeatable
# whatever the machine is doing. Two runs of different lengths; the difference in instructions
# over the difference in calls cancels start-up and shutdown. Both run on one CPU, so that a
# waiting caller sleeps instead of spinning (spin.hpp): a spin's polls would count as work.
#   bench/callgrind.sh [BUILD_DIR]     (default build/bench; bench/run.sh builds it)
# CLIENT_ARGS adds client flags, e.g. CLIENT_ARGS="--deadline-ms 1000 --handle-timeout-ms 1000"
# to count what deadlines cost, SERVER_ARGS server flags (e.g. --no-statistics); LABEL names that variant in the output line. RUNS (3) pairs of
# runs, and the median of each side: which thread wakes which, and when the pool's and the
# heuristics' timers fire under valgrind's slowdown, move a run's server count by up to about 15%.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${1:-$root/build/bench}/bench"
transport=${TRANSPORT:-threaded}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
short=2000 long=6000

total() { awk '/^(summary|totals):/{print $2; exit}' "$1"; }

RUNS=${RUNS:-3}
declare -A counts
for run in $(seq 1 "$RUNS"); do
  for calls in $short $long; do
    # Each server's output goes to its own file, and only its own line (with its pid) gives the port:
    # the previous run's output can never hand the client a dead server's port.
    : >"$work/server.$calls.out"
    taskset -c 0 valgrind --tool=callgrind --callgrind-out-file="$work/server.$calls" \
      "$bin/geerpc_bench_server" --transport "$transport" ${SERVER_ARGS:-} >"$work/server.$calls.out" \
      2>"$work/server.$calls.err" &
    server=$!
    port=""
    for _ in $(seq 1 600); do
      # (A server from before its line named its pid prints "PORT <n>" alone: bench/ab.sh's BASE.)
      port=$(awk -v pid="$server" '$1 == "PORT" && ($NF == ("pid=" pid) || NF == 2) { print $2; exit }' \
        "$work/server.$calls.out")
      [ -n "$port" ] && break
      kill -0 "$server" 2>/dev/null || break
      sleep 0.1
    done
    [ -n "$port" ] || {
      echo "callgrind.sh: the server (pid $server) printed no address" >&2
      cat "$work/server.$calls.err" >&2
      kill "$server" 2>/dev/null || true
      exit 1
    }
    taskset -c 0 valgrind --tool=callgrind --callgrind-out-file="$work/client.$calls" \
      "$bin/geerpc_bench_client" --transport "$transport" --port "$port" --workload W1 --calls "$calls" \
      --warmup 200 ${CLIENT_ARGS:-} >/dev/null 2>"$work/client.err"
    kill -TERM "$server"
    wait "$server" || true
  done
  for side in client server; do
    a=$(total "$work/$side.$short") b=$(total "$work/$side.$long")
    counts[$side]+="$(((b - a) / (long - short))) "
  done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for side in client server; do
  echo "callgrind geerpc-$transport W1${LABEL:+ $LABEL} $side instructions_per_call=$(echo "${counts[$side]}" | median)"
done
