#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time, starting from the checked-in corpus (copied, so
# the repository is not touched). A crash fails the run and prints the input in base64: save it
# under fuzz/regressions/<target>/ so every build replays it from then on.
#   tools/run_fuzzers.sh BUILD_DIR [SECONDS_EACH]
set -euo pipefail
build=${1:?usage: tools/run_fuzzers.sh BUILD_DIR [SECONDS_EACH]}
seconds=${2:-30}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for target in codec frame handshake; do
  mkdir -p "$work/$target" "$work/$target-crashes"
  cp fuzz/corpus/"$target"/* "$work/$target/"
  if ! "$build/fuzz/fuzz_$target" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 \
      -print_final_stats=1 -artifact_prefix="$work/$target-crashes/" "$work/$target" >"$work/$target.log" 2>&1; then
    status=1
    tail -40 "$work/$target.log"
    for crash in "$work/$target-crashes"/*; do
      [ -f "$crash" ] && { echo "crash input for $target (base64):"; base64 -w0 "$crash"; echo; }
    done
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$target.log" | grep -o '[0-9]*$' || echo "?")
  echo "fuzz_$target: $runs executions in ${seconds}s"
done
exit $status
