#!/usr/bin/env bash
# The cluster example: etcd, three nodes and a balanced client, on this machine's loopback.
#   examples/cluster/run.sh [build directory, default ./build]
# Uses the etcd at $ETCD_ENDPOINT when set; otherwise starts one (Debian: etcd-server) on free
# loopback ports with a temporary data directory, and stops it at the end. Stops what it started,
# by PID, on every way out.
set -euo pipefail
build=$(realpath "${1:-build}")
node=$build/examples/cluster_node
client=$build/examples/cluster_client
[ -x "$node" ] && [ -x "$client" ] ||
  { echo "build the example first: cmake --build $build --target cluster_node cluster_client" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

if [ -z "${ETCD_ENDPOINT:-}" ]; then
  client_port=$(free_port)
  peer_port=$(free_port)
  ETCD_ENDPOINT=http://127.0.0.1:$client_port
  etcd --name cluster-example --data-dir "$work/etcd" --logger zap \
    --listen-client-urls "$ETCD_ENDPOINT" --advertise-client-urls "$ETCD_ENDPOINT" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "cluster-example=http://127.0.0.1:$peer_port" >"$work/etcd.log" 2>&1 &
  pids+=($!)
  echo "etcd started at $ETCD_ENDPOINT (pid $!)"
fi

# Each node prints one line once registered (it waits for etcd up to 10 s).
declare -A node_pid
for name in alpha beta gamma; do
  "$node" "$ETCD_ENDPOINT" "$name" >"$work/$name.out" 2>&1 &
  node_pid[$name]=$!
  pids+=($!)
done
for name in alpha beta gamma; do
  for _ in $(seq 100); do
    grep -q registered "$work/$name.out" && break
    kill -0 "${node_pid[$name]}" 2>/dev/null || { cat "$work/$name.out" >&2; exit 1; }
    sleep 0.1
  done
  cat "$work/$name.out"
done

echo "300 calls over three nodes:"
"$client" "$ETCD_ENDPOINT" 300

kill -KILL "${node_pid[beta]}"
wait "${node_pid[beta]}" 2>/dev/null || true
echo "beta killed with SIGKILL; etcd lists it until its lease (3 s) expires, but calls fail over:"
"$client" "$ETCD_ENDPOINT" 300
sleep 4
echo "4 s later:"
"$client" "$ETCD_ENDPOINT" 300

kill -TERM "${node_pid[gamma]}"
wait "${node_pid[gamma]}" || true
cat "$work/gamma.out" | tail -1
echo "after gamma's graceful shutdown:"
"$client" "$ETCD_ENDPOINT" 300
