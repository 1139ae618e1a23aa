#!/usr/bin/env bash
# Runs Go's net/rpc/jsonrpc client (main.go here) against a geerpc server (tests/json/CMakeLists.txt,
# test jsonrpc.go_client.<transport>, label go):
#   run.sh GO SERVER_PROGRAM TRANSPORT WORK_DIR
# GO is the go command; SERVER_PROGRAM the JSON tests' program, whose hidden case "[.go_server]"
# serves on loopback with TRANSPORT (blocking or threaded) and writes its address to a file.
# Builds the client offline, with Go's cache and home under WORK_DIR; starts the server, runs the
# client with a time limit, and stops the server by its PID. Exits with the client's status.
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: run.sh GO SERVER_PROGRAM TRANSPORT WORK_DIR" >&2; exit 2; }
go=$1 server_program=$2 transport=$3 work=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$work"

# The standard library only: no module to download (GOPROXY=off makes sure), nothing written to
# the user's home or Go cache.
export HOME=$work GOCACHE=$work/gocache GOPATH=$work/gopath GOPROXY=off GOFLAGS= GO111MODULE=auto
client=$work/jsonrpc_client
timeout 300 "$go" build -o "$client" "$here/main.go"

address_file=$work/address.$transport
rm -f "$address_file"
GEERPC_JSONRPC_ADDRESS_FILE=$address_file GEERPC_JSONRPC_TRANSPORT=$transport \
  "$server_program" "jsonrpc: a server for the Go client" >"$work/server.$transport.log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT

for _ in $(seq 100); do
  [ -s "$address_file" ] && break
  kill -0 "$server_pid" 2>/dev/null || { echo "the server exited:" >&2; cat "$work/server.$transport.log" >&2; exit 1; }
  sleep 0.1
done
[ -s "$address_file" ] || { echo "the server wrote no address within 10 s" >&2; exit 1; }
address=$(cat "$address_file")
echo "geerpc server ($transport) at $address"
timeout 60 "$client" -addr "$address"
