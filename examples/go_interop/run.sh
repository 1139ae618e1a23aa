#!/usr/bin/env bash
# The go_interop example: Go's net/rpc/jsonrpc and geerpc calling each other, on loopback.
#   examples/go_interop/run.sh [build directory, default ./build] [go command, default go]
# Builds arith.go (the standard library only, offline) into the build directory; starts the C++
# server and runs the Go client against it, then starts the Go server and runs the C++ client
# (jsonrpc@) against it. Stops what it started, by PID, on every way out; exits nonzero on a wrong
# answer (each client checks its own).
set -euo pipefail
build=$(realpath "${1:-build}")
go=${2:-go}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cpp=$build/examples/go_interop_arith
[ -x "$cpp" ] || { echo "build the example first: cmake --build $build --target go_interop_arith" >&2; exit 1; }

work=$build/examples/go_interop
mkdir -p "$work"
# Nothing downloaded (GOPROXY=off), nothing written to the user's home or Go cache.
export HOME=$work GOCACHE=$work/gocache GOPATH=$work/gopath GOPROXY=off GOFLAGS= GO111MODULE=auto
timeout 300 "$go" build -o "$work/arith" "$here/arith.go"

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

# Starts a server (its command, then the file it writes its address to) and sets $address to the
# address it wrote (not in a subshell: its PID must reach cleanup).
start_server() {
  local address_file=${*: -1}
  rm -f "$address_file"
  "$@" >"$address_file.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    [ -s "$address_file" ] && { address=$(cat "$address_file"); return; }
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  echo "the server $1 wrote no address:" >&2
  cat "$address_file.log" >&2
  return 1
}

start_server "$cpp" serve "$work/cpp.address"
echo "C++ server (JSON codec) at $address"
timeout 30 "$work/arith" -call "$address"

start_server "$work/arith" -serve "$work/go.address"
echo "Go server (jsonrpc.ServeConn) at $address"
timeout 30 "$cpp" call "$address"
echo "both ways: ok"
