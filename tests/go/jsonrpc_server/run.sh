#!/usr/bin/env bash
# Runs geerpc's jsonrpc@ client against Go's own net/rpc server served with jsonrpc.ServeConn
# (main.go here; tests/json/CMakeLists.txt, test jsonrpc.go_server.<transport>, label go):
#   run.sh GO CLIENT_PROGRAM TRANSPORT WORK_DIR
# GO is the go command; CLIENT_PROGRAM the JSON tests' program, whose hidden case
# "[.go_jsonrpc_server]" calls the server at GEERPC_GO_JSONRPC_ADDRESS with TRANSPORT (blocking or
# threaded). Builds the server offline, with Go's cache and home under WORK_DIR; starts it, runs the
# client with a time limit, and stops the server by its PID. Exits with the client's status.
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: run.sh GO CLIENT_PROGRAM TRANSPORT WORK_DIR" >&2; exit 2; }
go=$1 client_program=$2 transport=$3 work=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$work"

# The standard library only: no module to download (GOPROXY=off makes sure), nothing written to
# the user's home or Go cache.
export HOME=$work GOCACHE=$work/gocache GOPATH=$work/gopath GOPROXY=off GOFLAGS= GO111MODULE=auto
server=$work/jsonrpc_server
timeout 300 "$go" build -o "$server" "$here/main.go"

address_file=$work/address.$transport
rm -f "$address_file"
"$server" -address_file "$address_file" -limit 120s >"$work/server.$transport.log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT

for _ in $(seq 100); do
  [ -s "$address_file" ] && break
  kill -0 "$server_pid" 2>/dev/null || { echo "the server exited:" >&2; cat "$work/server.$transport.log" >&2; exit 1; }
  sleep 0.1
done
[ -s "$address_file" ] || { echo "the server wrote no address within 10 s" >&2; exit 1; }
address=$(cat "$address_file")
echo "Go net/rpc/jsonrpc server at $address; geerpc client on the $transport transport"
GEERPC_GO_JSONRPC_ADDRESS=$address GEERPC_JSONRPC_TRANSPORT=$transport \
  timeout 60 "$client_program" "[.go_jsonrpc_server]"
