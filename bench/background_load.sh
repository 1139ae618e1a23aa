# Sourced by bench/run.sh and bench/ab.sh: BACKGROUND_LOAD=N starts N busy processes at normal
# priority, unpinned, beside the benchmark's clients and servers, for as long as the run lasts (a
# production machine is seldom idle), and stops them, by their PIDs, when the run ends. Each one is
# bounded by BACKGROUND_LOAD_MAX_S seconds (default 3 hours) should the run be killed without
# cleaning up. The count is written to $OUT/load.txt, which the reports print.
BACKGROUND_LOAD=${BACKGROUND_LOAD:-0}
BACKGROUND_LOAD_MAX_S=${BACKGROUND_LOAD_MAX_S:-10800}
background_pids=()

start_background_load() {  # out dir
  [[ "$BACKGROUND_LOAD" =~ ^[0-9]+$ ]] || { echo "BACKGROUND_LOAD must be a count, not '$BACKGROUND_LOAD'" >&2; exit 2; }
  echo "$BACKGROUND_LOAD" >"$1/load.txt"
  local i
  for ((i = 0; i < BACKGROUND_LOAD; i++)); do
    # timeout passes the TERM it gets on to the loop.
    timeout "$BACKGROUND_LOAD_MAX_S" bash -c 'while :; do :; done' &
    background_pids+=("$!")
  done
  [ "$BACKGROUND_LOAD" -eq 0 ] || echo "# background load: $BACKGROUND_LOAD busy processes (pids ${background_pids[*]})" >&2
}

stop_background_load() {
  local pid
  for pid in "${background_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${background_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  background_pids=()
}
