#!/usr/bin/env bash
# CPU time (user + system, from /proc) that Weft spends on one scripted Claude turn of
# DELTAS deltas: the daemon's share (its /proc/PID/stat before and after the turn) and the
# `weft run` client's, RUNS turns, each printed, then the medians. CPU time is the steady
# figure on a shared machine where wall time is not; the real `claude` spends its own
# beside it (printed too, from a direct `claude -p` run).
#   scripts/bench-claude-cpu.sh [RUNS] [DELTAS]   (default 5 and 20000; release builds)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${1:-5}"
DELTAS="${2:-20000}"
# shellcheck source=lib/scripted-claude.sh
source "$ROOT/scripts/lib/scripted-claude.sh"
scripted_claude "$DELTAS"

TICK=$(getconf CLK_TCK)
# utime + stime of a process, in ms (fields 14 and 15; the name in field 2 has no spaces).
cpu_ms() { awk -v t="$TICK" '{ print int(($14 + $15) * 1000 / t) }' "/proc/$1/stat"; }
# The CPU of a command's children (the function's own processes), from bash's `times`
# around it in a subshell: `/usr/bin/time` cannot run a shell function.
child_ms() { ( "$@" >/dev/null 2>&1 || true; times ) | tail -1 \
    | awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/); print int((u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000) }'; }

weft_run >/dev/null 2>&1   # starts the daemon, warms caches
PID=$("$WEFT" daemon status --json | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' | head -1)
[ -n "$PID" ] || { echo "no daemon pid" >&2; exit 1; }
: >"$TMP/d"; : >"$TMP/c"; : >"$TMP/a"
for i in $(seq "$RUNS"); do
    before=$(cpu_ms "$PID")
    client=$(child_ms weft_run)
    daemon=$(( $(cpu_ms "$PID") - before ))
    agent=$(child_ms claude_direct)
    echo "run $i: daemon ${daemon} ms, client ${client} ms, claude alone ${agent} ms"
    echo "$daemon" >>"$TMP/d"; echo "$client" >>"$TMP/c"; echo "$agent" >>"$TMP/a"
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "medians over $RUNS turns of $DELTAS deltas: daemon $(median "$TMP/d") ms," \
    "client $(median "$TMP/c") ms, claude alone $(median "$TMP/a") ms"
