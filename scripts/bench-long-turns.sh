#!/usr/bin/env bash
# Long turns through the real agents: scripts/bench-claude.sh and scripts/bench-codex.sh
# at each size (default 200, 20000 and 100000 deltas of 16 characters), RUNS alternating
# runs each (default 5), printing every ratio weft/direct. Run it on a quiet machine;
# `nice` it and note `uptime` beside the figures when it is not.
#   scripts/bench-long-turns.sh [RUNS] [SIZE...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${1:-5}"
shift || true
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(200 20000 100000)
for agent in claude codex; do
    for n in "${SIZES[@]}"; do
        echo "== $agent, $n deltas, $RUNS runs ($(uptime | sed 's/.*load/load/'))"
        "$ROOT/scripts/bench-$agent.sh" "$RUNS" "$n" | tail -5
    done
done
