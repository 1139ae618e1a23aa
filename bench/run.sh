#!/usr/bin/env bash
# Runs geerpc's benchmark and the peers (raw TCP, Go net/rpc, gRPC) interleaved, in one pass, with
# the same CPU placement for all, and writes the results, a ratio table and a plot.
#
#   bench/run.sh                        everything: 3 rounds x (PIN=same, PIN=none)
#   SCALE=0.05 ROUNDS=1 bench/run.sh    a quick smoke pass
#
# Environment:
#   ROUNDS=3             rounds; each runs every peer once per placement (medians are reported)
#   PLACEMENTS="same none"  same: every process on CPU 0; none: unpinned
#   WORKLOADS="W1 W2 W3 W4 W5"
#   SCALE=1              multiplies call counts (W5 keeps 1,000 connections)
#   PEERS="geerpc raw-tcp go-netrpc grpc"   (go-jsonrpc too: Go's net/rpc/jsonrpc client against Go's
#                        jsonrpc server, as go-jsonrpc, and against geerpc's JSON-RPC server, the
#                        threaded and blocking transports of TRANSPORTS started with --codecs
#                        binary,json, as go-jsonrpc-geerpc-<transport>; W1 to W4; bench/go_jsonrpc)
#   PEERS_DIR=../shared/peers   where the peers live (copied to a scratch folder to build)
#   INSTALL_DEPS=0       1: apt-get install the peers' toolchains (golang-go, libgrpc++-dev,
#                        protobuf-compiler-grpc) and gnuplot when missing
#   STORM_RUNS=10        timeout storms (storm.hpp) per placement, each against a fresh server; 0: none
#   OVERLOAD_SECONDS=8   the overload bench (overload.cpp: the adaptive concurrency limit off, then on,
#                        against a server that thrashes), seconds of load for each, unpinned, into
#                        overload.txt; 0: none
#   CALLGRIND=1          0: no instruction counts (they run only where valgrind is installed)
#   TRANSPORTS="threaded plain blocking"   geerpc's transports to run
#   IO_THREADS="1 2"     the threaded server once per reactor count (server_options.threads.io_threads),
#                        named geerpc-threaded-io<N>, with each server thread's CPU time per call
#                        ("threadcpu"/"reactorcpu" lines in raw.txt); unset: the default count, as
#                        geerpc-threaded
#   TLS=0                1: each geerpc transport also over TLS (certificates made here with the
#                        openssl command), as geerpc-<transport>-tls, and again with OpenSSL's
#                        idle buffers kept (release_idle_buffers = false) as geerpc-<transport>-tls-keep;
#                        with grpc in PEERS, gRPC's synchronous server and stubs (bench/grpc_tls) with
#                        the same certificate as grpc-sync-tls, beside the same programs in plaintext
#                        as grpc-sync (the shared peer then runs grpc-callback alone)
#   JSON=0               1: the threaded and blocking transports (those in TRANSPORTS) also with the
#                        JSON codec, W1, W2 and W4 only, as geerpc-<transport>-json: clients with
#                        --codec json against a server of both codecs (--codecs binary,json)
#   HEDGING=0            1: also geerpc_bench_hedging (hedged against unhedged balanced calls, one
#                        slow server), once, unpinned, into $OUT/hedging.txt
#   OUT=bench/results/<date>   where raw.txt, table.md and plot.svg go
#   BUILD_DIR=build/bench      where geerpc's programs are built (Release)
#   BACKGROUND_LOAD=0    N busy processes at normal priority beside client and server for the whole
#                        run (background_load.sh): a busy machine, as in production
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
ROUNDS=${ROUNDS:-3}
PLACEMENTS=${PLACEMENTS:-"same none"}
WORKLOADS=${WORKLOADS:-"W1 W2 W3 W4 W5"}
SCALE=${SCALE:-1}
STORM_RUNS=${STORM_RUNS:-10}
OVERLOAD_SECONDS=${OVERLOAD_SECONDS:-8}
CALLGRIND=${CALLGRIND:-1}
PEERS=${PEERS:-"geerpc raw-tcp go-netrpc grpc"}
PEERS_DIR=${PEERS_DIR:-"$root/../shared/peers"}
INSTALL_DEPS=${INSTALL_DEPS:-0}
OUT=${OUT:-"$here/results/$(date +%Y%m%d-%H%M%S)"}
CLIENT_TIMEOUT=${CLIENT_TIMEOUT:-600}
IO_THREADS=${IO_THREADS:-}
TRANSPORTS=${TRANSPORTS:-"threaded plain blocking"}
TLS=${TLS:-0}
JSON=${JSON:-0}
HEDGING=${HEDGING:-0}
BUILD_DIR=${BUILD_DIR:-"$root/build/bench"}

if [ "$INSTALL_DEPS" = 1 ]; then
  need=()
  for p in golang-go libgrpc++-dev protobuf-compiler-grpc gnuplot-nox; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
  [ ${#need[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 4096 ]; then ulimit -n 4096; fi

mkdir -p "$OUT"
raw="$OUT/raw.txt"
: >"$raw"
: >"$OUT/stderr.txt"
: >"$OUT/callgrind.txt"  # this run's counts only, like raw.txt
scratch=$(mktemp -d)
server_pid=""
# shellcheck source=background_load.sh
source "$here/background_load.sh"
cleanup() {
  stop_background_load
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  rm -rf "$scratch"
}
trap cleanup EXIT

echo "# building geerpc's benchmark (Release)" >&2
cmake -S "$root" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DGEERPC_BUILD_BENCH=ON \
  -DGEERPC_BUILD_TESTS=OFF -DGEERPC_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$BUILD_DIR" -j2 >/dev/null
bin="$BUILD_DIR/bench"
# The peers' scripts build next to their sources, and PEERS_DIR may be read-only.
if [ "$PEERS" != geerpc ]; then
  [ -d "$PEERS_DIR" ] || { echo "no peers in $PEERS_DIR (set PEERS_DIR, or PEERS=geerpc)" >&2; exit 1; }
  cp -r "$PEERS_DIR" "$scratch/peers"
  chmod -R u+w "$scratch/peers"
fi

wants() { [[ " $WORKLOADS " == *" $1 "* ]]; }

# Under TLS=1, the gRPC peer over TLS and in plaintext is ours (bench/grpc_tls), built beside geerpc's
# programs when libgrpc++ is installed.
grpc_bin="$BUILD_DIR/grpc_tls"
grpc_tls=0
if [ "$TLS" = 1 ] && [[ " $PEERS " == *" grpc "* ]]; then
  echo "# building the gRPC peer over TLS (bench/grpc_tls)" >&2
  if bash "$here/grpc_tls/build.sh" "$grpc_bin" >&2; then
    grpc_tls=1
  else
    echo "# grpc-sync and grpc-sync-tls skipped: bench/grpc_tls did not build (see above)" >&2
  fi
fi

if [ "$TLS" = 1 ]; then  # a throwaway P-256 certificate for 127.0.0.1, which the clients trust alone
  mkdir -p "$scratch/tls"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$scratch/tls/key.pem" -out "$scratch/tls/cert.pem" 2>/dev/null
  # The floor: what OpenSSL alone costs a W1 and a W4 call's records, in memory on one thread.
  "$bin/geerpc_bench_tls_floor" --cert "$scratch/tls/cert.pem" --key "$scratch/tls/key.pem" | tee "$OUT/tls_floor.txt"
fi

# A server's port comes only from that server: it prints "PORT <n> address=<host:port> pid=<pid>" on
# its stdout, which goes to a file made afresh (and uniquely named) for it before it starts, and
# only a line naming its own pid counts. No earlier server's output, and no file left behind, can
# hand a client another server's port.
SERVER_START_TIMEOUT=${SERVER_START_TIMEOUT:-20}  # seconds a server may take to print its address
await_server_port() {  # pid, output file, name; sets port, or fails saying why
  local pid=$1 out=$2 name=$3
  port=""
  for _ in $(seq 1 $((SERVER_START_TIMEOUT * 20))); do
    port=$(awk -v pid="$pid" '$1 == "PORT" && $NF == ("pid=" pid) { print $2; exit }' "$out")
    [ -z "$port" ] || return 0
    if ! kill -0 "$pid" 2>/dev/null; then
      local status=0
      wait "$pid" 2>/dev/null || status=$?
      echo "$name server (pid $pid) exited with status $status before printing its address:" >&2
      cat "$out" "$out.err" >&2
      return 1
    fi
    sleep 0.05
  done
  echo "$name server (pid $pid) printed no address within $SERVER_START_TIMEOUT s:" >&2
  cat "$out" "$out.err" >&2
  kill "$pid" 2>/dev/null || true
  return 1
}

server_args=()  # more flags for the next server (--io-threads, --tls-*, --codecs)
client_args=()  # more flags for its clients (--tls-*, --codec)
run_workloads="W1 W2 W3 W4 W5"  # those of WORKLOADS the next server's runs take
runs() { wants "$1" && [[ " $run_workloads " == *" $1 "* ]]; }
thread_cpu=0    # 1: the clients report the server's threads' CPU time per call
start_geerpc_server() {  # transport, pin prefix...; sets server_pid and port
  local transport=$1 out
  shift
  out=$(mktemp "$scratch/geerpc-$transport-server.XXXXXX")
  "$@" "$bin/geerpc_bench_server" --transport "$transport" "${server_args[@]}" >"$out" 2>"$out.err" &
  server_pid=$!
  await_server_port "$server_pid" "$out" "geerpc-$transport" || exit 1
}

start_grpc_server() {  # pin prefix...; sets server_pid and port; uses server_args
  local out
  out=$(mktemp "$scratch/grpc-server.XXXXXX")
  "$@" "$grpc_bin/grpc_tls_server" "${server_args[@]}" >"$out" 2>"$out.err" &
  server_pid=$!
  await_server_port "$server_pid" "$out" grpc-sync || exit 1
}

stop_server() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

# geerpc: threaded (tuning::automatic), plain (basic_threaded<tuning::none>: the core without a
# heuristic) and blocking; W1 and W2 also with every call carrying a 1 s deadline and a 1 s handle
# timeout, to show what the timeouts cost on the fast path.
run_geerpc() {  # pin
  local pin=()
  [ "$1" = same ] && pin=(taskset -c 0)
  for transport in $TRANSPORTS; do
    local counts=default
    [ "$transport" = threaded ] && [ -n "$IO_THREADS" ] && counts=$IO_THREADS
    for io in $counts; do
      local name="geerpc-$transport"
      server_args=() client_args=() thread_cpu=0
      if [ "$io" != default ]; then
        name="geerpc-$transport-io$io"
        server_args=(--io-threads "$io") thread_cpu=1
      fi
      run_geerpc_server "$transport" "$name"
    done
    if [ "$TLS" = 1 ]; then
      local keys=(--tls-cert "$scratch/tls/cert.pem" --tls-key "$scratch/tls/key.pem")
      server_args=("${keys[@]}") client_args=(--tls-ca "$scratch/tls/cert.pem") thread_cpu=0
      run_geerpc_server "$transport" "geerpc-$transport-tls"
      server_args=("${keys[@]}" --tls-keep-buffers) client_args=(--tls-ca "$scratch/tls/cert.pem" --tls-keep-buffers)
      run_geerpc_server "$transport" "geerpc-$transport-tls-keep"
    fi
    if [ "$JSON" = 1 ] && { [ "$transport" = threaded ] || [ "$transport" = blocking ]; }; then
      server_args=(--codecs "binary,json") client_args=(--codec json) thread_cpu=0 run_workloads="W1 W2 W4"
      run_geerpc_server "$transport" "geerpc-$transport-json"
      run_workloads="W1 W2 W3 W4 W5"
    fi
  done
  server_args=() client_args=() thread_cpu=0
}

run_geerpc_server() {  # transport, peer name; uses pin, server_args
  local transport=$1 name=$2 cpu=()
  start_geerpc_server "$transport" "${pin[@]}"
  [ "$thread_cpu" = 0 ] || cpu=(--thread-cpu-of "$server_pid")
  for w in W1 W2 W3 W4; do
    runs "$w" || continue
    timeout "$CLIENT_TIMEOUT" "${pin[@]}" "$bin/geerpc_bench_client" --transport "$transport" --port "$port" \
      --workload "$w" --scale "$SCALE" --peer "$name" "${cpu[@]}" "${client_args[@]}" || true
    if [ "$transport" = threaded ] && [ ${#client_args[@]} -eq 0 ] && { [ "$w" = W1 ] || [ "$w" = W2 ]; }; then
      timeout "$CLIENT_TIMEOUT" "${pin[@]}" "$bin/geerpc_bench_client" --transport threaded --port "$port" \
        --workload "$w" --scale "$SCALE" --deadline-ms 1000 --handle-timeout-ms 1000 \
        --peer "$name-timeouts" || true
    fi
  done
  stop_server
  if runs W5; then  # a fresh server: its peak RSS is part of the result
    start_geerpc_server "$transport" "${pin[@]}"
    [ "$thread_cpu" = 0 ] || cpu=(--thread-cpu-of "$server_pid")
    timeout "$CLIENT_TIMEOUT" "${pin[@]}" "$bin/geerpc_bench_client" --transport "$transport" --port "$port" \
      --workload W5 --scale "$SCALE" --server-pid "$server_pid" --peer "$name" "${cpu[@]}" "${client_args[@]}" || true
    stop_server
  fi
}

# gRPC's synchronous server and stubs (bench/grpc_tls), in plaintext as grpc-sync, then over TLS with
# the certificate geerpc's TLS runs use, as grpc-sync-tls: gRPC's own TLS cost, in the same run.
run_grpc_tls() {  # pin
  local pin=()
  [ "$1" = same ] && pin=(taskset -c 0)
  server_args=() client_args=()
  run_grpc_server grpc-sync
  server_args=(--tls-cert "$scratch/tls/cert.pem" --tls-key "$scratch/tls/key.pem")
  client_args=(--tls-ca "$scratch/tls/cert.pem")
  run_grpc_server grpc-sync-tls
  server_args=() client_args=()
}

run_grpc_server() {  # peer name; uses pin, server_args, client_args
  local name=$1
  if wants W1 || wants W2 || wants W3 || wants W4; then
    start_grpc_server "${pin[@]}"
    for w in W1 W2 W3 W4; do
      wants "$w" || continue
      timeout "$CLIENT_TIMEOUT" "${pin[@]}" "$grpc_bin/grpc_tls_client" --port "$port" --workload "$w" \
        --scale "$SCALE" --peer "$name" "${client_args[@]}" || true
    done
    stop_server
  fi
  if wants W5; then  # a fresh server: its peak RSS is part of the result
    start_grpc_server "${pin[@]}"
    timeout "$CLIENT_TIMEOUT" "${pin[@]}" "$grpc_bin/grpc_tls_client" --port "$port" --workload W5 \
      --scale "$SCALE" --server-pid "$server_pid" --peer "$name" "${client_args[@]}" || true
    stop_server
  fi
}

# Go's jsonrpc client (bench/go_jsonrpc) against Go's jsonrpc server, then against geerpc's: the same
# client, so the ratio is the servers'. Each server again under geerpc's own jsonrpc@ client (the
# threaded transport, --codec json --jsonrpc), which leaves the servers more of the machine than Go's,
# and reports the server's CPU time per call (every thread of its process), whichever side bounds
# the calls/s.
run_jsonrpc_client() {  # peer name; uses pin, port
  for w in W1 W2 W3 W4; do
    wants "$w" || continue
    timeout "$CLIENT_TIMEOUT" "${pin[@]}" "$bin/geerpc_bench_client" --transport threaded --codec json --jsonrpc \
      --port "$port" --workload "$w" --scale "$SCALE" --peer "$1" --thread-cpu-of "$server_pid" || true
  done
}
go_jsonrpc_bin="$scratch/gojsonrpc"
run_go_jsonrpc() {  # pin
  local pin=() out workloads=${WORKLOADS// /,}
  [ "$1" = same ] && pin=(taskset -c 0)
  if [ ! -x "$go_jsonrpc_bin" ]; then
    (cd "$here/go_jsonrpc" && GOCACHE=$(go env GOCACHE 2>/dev/null || echo "$scratch/gocache") \
      go build -o "$go_jsonrpc_bin" .) || { echo "# go-jsonrpc skipped: bench/go_jsonrpc did not build" >&2; return; }
  fi
  out=$(mktemp "$scratch/go-jsonrpc-server.XXXXXX")
  rm -f "$out"
  "${pin[@]}" "$go_jsonrpc_bin" -mode server -addrfile "$out" -lifetime "${CLIENT_TIMEOUT}s" 2>"$out.err" &
  server_pid=$!
  for _ in $(seq 1 $((SERVER_START_TIMEOUT * 20))); do [ -s "$out" ] && break; sleep 0.05; done
  if [ -s "$out" ]; then
    timeout "$CLIENT_TIMEOUT" "${pin[@]}" "$go_jsonrpc_bin" -mode client -addr "$(cat "$out")" -peer go-jsonrpc \
      -workloads "$workloads" -scale "$SCALE" || true
    port=$(sed 's/.*://' "$out")
    run_jsonrpc_client geerpc-jsonrpc-go
  else
    echo "# go-jsonrpc server printed no address:" >&2
    cat "$out.err" >&2
  fi
  stop_server
  for transport in $TRANSPORTS; do
    [ "$transport" = threaded ] || [ "$transport" = blocking ] || continue
    server_args=(--codecs "binary,json")
    start_geerpc_server "$transport" "${pin[@]}"
    timeout "$CLIENT_TIMEOUT" "${pin[@]}" "$go_jsonrpc_bin" -mode client -addr "127.0.0.1:$port" \
      -peer "go-jsonrpc-geerpc-$transport" -workloads "$workloads" -scale "$SCALE" || true
    run_jsonrpc_client "geerpc-jsonrpc-geerpc-$transport"
    stop_server
    server_args=()
  done
}

run_peer() {  # name, pin
  local peer=$1 pin=$2 workloads=${WORKLOADS// /,}
  case "$peer" in
    geerpc) run_geerpc "$pin" ;;
    # BATCHED=1 adds raw-tcp-batched, whose writers coalesce frames queued behind a busy writer.
    raw-tcp) BATCHED=1 PIN=$pin WORKLOADS=$workloads SCALE=$SCALE bash "$scratch/peers/raw-tcp/run.sh" ;;
    go-netrpc)
      if ! command -v go >/dev/null; then echo "# go-netrpc skipped: no go (INSTALL_DEPS=1)" >&2; return; fi
      if [ "$pin" = same ]; then
        WORKLOADS=$workloads SCALE=$SCALE taskset -c 0 bash "$scratch/peers/go-netrpc/run.sh"
      else
        WORKLOADS=$workloads SCALE=$SCALE bash "$scratch/peers/go-netrpc/run.sh"
      fi
      ;;
    go-jsonrpc)
      if ! command -v go >/dev/null; then echo "# go-jsonrpc skipped: no go (INSTALL_DEPS=1)" >&2; return; fi
      run_go_jsonrpc "$pin"
      ;;
    grpc)
      if ! pkg-config --exists grpc++ 2>/dev/null; then echo "# grpc skipped: no grpc++ (INSTALL_DEPS=1)" >&2; return; fi
      if [ "$grpc_tls" = 0 ]; then
        PIN=$pin WORKLOADS=$workloads SCALE=$SCALE bash "$scratch/peers/grpc/run.sh"
      else  # grpc-sync comes from bench/grpc_tls, beside grpc-sync-tls
        MODES=callback PIN=$pin WORKLOADS=$workloads SCALE=$SCALE bash "$scratch/peers/grpc/run.sh"
        run_grpc_tls "$pin"
      fi
      ;;
  esac
}

start_background_load "$OUT"
for round in $(seq 1 "$ROUNDS"); do
  for pin in $PLACEMENTS; do
    for peer in $PEERS; do
      echo "# round $round pin=$pin peer $peer" >&2
      run_peer "$peer" "$pin" 2>>"$OUT/stderr.txt" | while read -r line; do
        case "$line" in bench\ * | threadcpu\ * | reactorcpu\ *) echo "$line round=$round pin=$pin" | tee -a "$raw" ;; esac
      done
    done
  done
done

# The timeout storm (storm.hpp), threaded transport: each run against a fresh server, whose threads
# and memory are part of the result; the floor it is judged against is measured in the same run.
if [[ " $PEERS " == *" geerpc "* ]]; then
  for pin in $PLACEMENTS; do
    prefix=()
    [ "$pin" = same ] && prefix=(taskset -c 0)
    for run in $(seq 1 "$STORM_RUNS"); do
      echo "# storm $run pin=$pin" >&2
      start_geerpc_server threaded "${prefix[@]}"
      timeout "$CLIENT_TIMEOUT" "${prefix[@]}" "$bin/geerpc_bench_client" --transport threaded --port "$port" \
        --workload storm --server-pid "$server_pid" 2>>"$OUT/stderr.txt" | while read -r line; do
        case "$line" in storm\ *) echo "$line round=$run pin=$pin" | tee -a "$raw" ;; esac
      done || true
      stop_server
      # The same storm across two hops (relay.hpp): the caller (A) calls B, whose handler passes each
      # call on to C with the deadline it inherits; each server fresh, C's handlers report when
      # they were told against the caller's deadline.
      echo "# two-hop storm $run pin=$pin" >&2
      start_geerpc_server threaded "${prefix[@]}"
      c_pid=$server_pid
      server_args=(--relay-to "$port")
      start_geerpc_server threaded "${prefix[@]}"
      server_args=()
      timeout "$CLIENT_TIMEOUT" "${prefix[@]}" "$bin/geerpc_bench_client" --transport threaded --port "$port" \
        --workload storm --peer geerpc-threaded-2hop --server-pid "$server_pid" 2>>"$OUT/stderr.txt" |
        while read -r line; do
          case "$line" in storm\ *) echo "$line round=$run pin=$pin" | tee -a "$raw" ;; esac
        done || true
      stop_server
      server_pid=$c_pid
      stop_server
    done
  done
fi

# The adaptive concurrency limit under overload (overload.cpp): client and server in one process.
if [[ " $PEERS " == *" geerpc "* ]] && [ "$OVERLOAD_SECONDS" != 0 ]; then
  echo "# overload" >&2
  timeout "$CLIENT_TIMEOUT" "$bin/geerpc_bench_overload" --seconds "$OVERLOAD_SECONDS" 2>>"$OUT/stderr.txt" |
    tee "$OUT/overload.txt" || true
fi

stop_background_load

if [ "$HEDGING" = 1 ]; then  # its own servers, in its own process
  timeout "$CLIENT_TIMEOUT" "$bin/geerpc_bench_hedging" | tee "$OUT/hedging.txt"
fi

# Instructions per W1 call: repeatable where the timings are not, so regressions show.
if [[ " $PEERS " == *" geerpc "* ]] && wants W1 && [ "$CALLGRIND" != 0 ] && command -v valgrind >/dev/null; then
  for transport in threaded plain blocking; do
    TRANSPORT=$transport bash "$here/callgrind.sh" "$BUILD_DIR" >>"$OUT/callgrind.txt" 2>>"$OUT/stderr.txt" || true
  done
  # What deadlines cost: every call with a 1 s deadline, the server with a 1 s handle timeout.
  TRANSPORT=threaded LABEL=deadlines CLIENT_ARGS="--deadline-ms 1000 --handle-timeout-ms 1000" \
    bash "$here/callgrind.sh" "$BUILD_DIR" >>"$OUT/callgrind.txt" 2>>"$OUT/stderr.txt" || true
fi

python3 "$here/report.py" "$raw" "$OUT"
echo "# results in $OUT" >&2
