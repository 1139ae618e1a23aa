#!/usr/bin/env bash
# A/B of one flag, W1 and W2 (or WORKLOADS), in interleaved rounds (A B, B A, ...), with client and
# server on one CPU and then unpinned; prints every run, then per placement and workload the median
# calls/s of each side and B/A.
#   bench/ab_flag.sh server --no-statistics   two servers, the second with the flag; one client
#   bench/ab_flag.sh client --balanced        one server; the client without, then with the flag
#   bench/ab_flag.sh server "--pool-growth-delay-us 0"   a flag with a value: one quoted word
# BENCH_DIR (build/bench), ROUNDS (4), WORKLOADS ("W1 W2"; W5 runs against a server started for
# that run alone, since it reads the server's peak RSS), OUT (ab_<flag>.txt).
set -euo pipefail
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 4096 ]; then ulimit -n 4096; fi  # W5's connections
side=$1 flag=$2
read -r -a flags <<<"$flag"
b=${BENCH_DIR:-build/bench}
rounds=${ROUNDS:-4}
workloads=${WORKLOADS:-"W1 W2"}
out=${OUT:-ab_${flags[0]#--}.txt}
work=$(mktemp -d)
servers=()
cleanup() {
  [ ${#servers[@]} -eq 0 ] || kill "${servers[@]}" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
: >"$out"

start_server() {  # start_server NAME [FLAGS...]: its port in $port
  local name=$1
  shift
  "${pin[@]}" "$b/geerpc_bench_server" --port 0 "$@" >"$work/$name.out" 2>&1 &
  servers+=($!)
  for _ in $(seq 200); do
    grep -q '^PORT' "$work/$name.out" && break
    sleep 0.05
  done
  port=$(awk '/^PORT/{print $2; exit}' "$work/$name.out")
  [ -n "$port" ] || { echo "ab_flag.sh: server $name printed no port" >&2; cat "$work/$name.out" >&2; exit 1; }
}

for placement in one_cpu unpinned; do
  pin=()
  [ $placement = one_cpu ] && pin=(taskset -c 0)
  servers=()
  start_server a
  port_a=$port
  if [ "$side" = server ]; then
    start_server b "${flags[@]}"
    port_b=$port
    client_b=()
  else
    port_b=$port_a
    client_b=("${flags[@]}")
  fi
  for round in $(seq "$rounds"); do
    order=(A B)
    [ $((round % 2)) = 0 ] && order=(B A)
    for v in "${order[@]}"; do
      port=$port_a extra=()
      [ $v = B ] && port=$port_b extra=("${client_b[@]}")
      for w in $workloads; do
        if [ $w = W5 ]; then  # a fresh server, whose peak RSS is part of the result
          server_flags=()
          [ $v = B ] && [ "$side" = server ] && server_flags=("${flags[@]}")
          start_server w5 "${server_flags[@]}"
          w5_pid=${servers[-1]}
          line=$("${pin[@]}" "$b/geerpc_bench_client" --port "$port" --workload W5 --server-pid "$w5_pid" --peer "$v" \
            "${extra[@]}" 2>/dev/null)
          kill "$w5_pid"
          wait "$w5_pid" 2>/dev/null || true
          unset 'servers[-1]'
          port=$port_a
          [ $v = B ] && port=$port_b
        else
          line=$("${pin[@]}" "$b/geerpc_bench_client" --port "$port" --workload $w --peer "$v" "${extra[@]}" 2>/dev/null)
        fi
        echo "$placement $round $line" | tee -a "$out"
      done
    done
  done
  kill "${servers[@]}"
  wait "${servers[@]}" 2>/dev/null || true
  servers=()
done

echo "B = $side $flag; medians of $rounds rounds (calls/s), and the median of each round's B/A"
awk '{ split($6, kv, "="); key = $1 " " $5; v[key " " $4] = v[key " " $4] " " kv[2]; seen[key] = 1
       run[key " " $2 " " $4] = kv[2]; rounds[$2] = 1 }
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  END {
    for (k in seen) {
      paired = ""
      for (r in rounds) paired = paired " " run[k " " r " B"] / run[k " " r " A"]
      a = median(v[k " A"]); bb = median(v[k " B"])
      printf "%s A %d B %d B/A %.3f paired %.3f\n", k, a, bb, bb / a, median(paired)
    }
  }' "$out" | sort
