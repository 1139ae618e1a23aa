#!/usr/bin/env bash
# A/B: the server's statistics off (B) against on (A, the default), W1 and W2 (bench/ab_flag.sh).
exec "$(dirname "${BASH_SOURCE[0]}")/ab_flag.sh" server --no-statistics
