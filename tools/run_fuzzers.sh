#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time, starting from the checked-in corpus (copied, so
# the repository is not touched) and the saved regressions, two at a time (JOBS; a fuzzer uses one core). A crash fails the
# run and prints the input in base64: save it under fuzz/regressions/<target>/ so every build
# replays it from then on.
#   tools/run_fuzzers.sh BUILD_DIR [SECONDS_EACH]
set -euo pipefail
build=${1:?usage: tools/run_fuzzers.sh BUILD_DIR [SECONDS_EACH]}
seconds=${2:-30}
jobs=${JOBS:-2}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One target's run; its report goes to $work/<target>.report, printed once every run has ended.
fuzz_one() {
  local target=$1 crash
  mkdir -p "$work/$target" "$work/$target-crashes"
  cp fuzz/corpus/"$target"/* "$work/$target/"
  # The saved regressions run first too (libFuzzer reads every directory it is given and writes new
  # inputs into the first only): the sanitizer builds leave the replay programs out and rely on this.
  local regressions=""
  [ -d "fuzz/regressions/$target" ] && regressions="fuzz/regressions/$target"
  if ! "$build/fuzz/fuzz_$target" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$work/$target-crashes/" "$work/$target" $regressions >"$work/$target.log" 2>&1; then
    touch "$work/$target.failed"
    tail -40 "$work/$target.log" >"$work/$target.report"
    for crash in "$work/$target-crashes"/*; do
      if [ -f "$crash" ]; then
        { echo "crash input for $target (base64):"; base64 -w0 "$crash"; echo; } >>"$work/$target.report"
      fi
    done
  fi
  local runs
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$target.log" | grep -o '[0-9]*$' || echo "?")
  echo "fuzz_$target: $runs executions in ${seconds}s" >>"$work/$target.report"
}

targets=(codec frame handshake schema)
# etcd's watch answer, where the build has geerpc::etcd's dependencies.
[ -x "$build/fuzz/fuzz_etcd_watch" ] && targets+=(etcd_watch)
# A TLS server's first bytes, where the build has OpenSSL (geerpc::tls).
[ -x "$build/fuzz/fuzz_tls_first_bytes" ] && targets+=(tls_first_bytes)
# The JSON codec, where the build has geerpc::json.
[ -x "$build/fuzz/fuzz_json" ] && targets+=(json)
# The JSON-RPC stream's translator and scanner, likewise.
[ -x "$build/fuzz/fuzz_jsonrpc" ] && targets+=(jsonrpc)
# The translator of a client calling Go's jsonrpc server (jsonrpc@), likewise.
[ -x "$build/fuzz/fuzz_jsonrpc_client" ] && targets+=(jsonrpc_client)
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  fuzz_one "$target" &
done
wait
status=0
for target in "${targets[@]}"; do
  cat "$work/$target.report"
  [ -e "$work/$target.failed" ] && status=1
done
exit $status
