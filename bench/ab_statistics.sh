#!/usr/bin/env bash
# A/B: statistics on (default) vs off, one server each, W1 and W2, interleaved rounds, both placements.
set -euo pipefail
b=${BENCH_DIR:-build/bench}
out=${OUT:-ab_statistics.txt}
rounds=${ROUNDS:-4}
: > "$out"
for placement in same none; do
  pin=(); [ $placement = same ] && pin=(taskset -c 0)
  "${pin[@]}" $b/geerpc_bench_server --port 0 > /tmp/abs-on.out 2>&1 &
  pon=$!
  "${pin[@]}" $b/geerpc_bench_server --port 0 --no-statistics > /tmp/abs-off.out 2>&1 &
  poff=$!
  for _ in $(seq 100); do grep -q '^PORT' /tmp/abs-on.out && grep -q '^PORT' /tmp/abs-off.out && break; sleep 0.05; done
  port_on=$(awk '/^PORT/{print $2}' /tmp/abs-on.out)
  port_off=$(awk '/^PORT/{print $2}' /tmp/abs-off.out)
  for round in $(seq $rounds); do
    order=(on off); [ $((round % 2)) = 0 ] && order=(off on)
    for v in "${order[@]}"; do
      port=$port_on; [ $v = off ] && port=$port_off
      for w in W1 W2; do
        line=$("${pin[@]}" $b/geerpc_bench_client --port $port --workload $w --peer "stats-$v" 2>/dev/null)
        echo "$placement $round $line" | tee -a "$out"
      done
    done
  done
  kill $pon $poff; wait $pon $poff 2>/dev/null || true
done
