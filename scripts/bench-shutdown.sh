#!/usr/bin/env bash
# How long `weft daemon stop` takes with N live Claude Code sessions (each keeps its
# long-lived `claude` process between turns), against the scripted Anthropic server:
# drivers are shut down in parallel, so N sessions should not cost N times one.
#   scripts/bench-shutdown.sh [N]      (default 10; release builds)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
N="${1:-10}"
# shellcheck source=lib/scripted-claude.sh
source "$ROOT/scripts/lib/scripted-claude.sh"
scripted_claude 20
# Only weft commands carry the mark (the daemon and its agents inherit it), so a scan
# of /proc finds this run's processes and not the scan itself.
MARK="WEFT_BENCH_MARK=$TMP"
w() { env "$MARK" "$WEFT" "$@"; }
marked() {
    local f p
    for f in /proc/[0-9]*/environ; do
        p="${f#/proc/}"; p="${p%/environ}"
        grep -qsa "$MARK" "$f" 2>/dev/null || continue
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "${1:-}" ] && continue
        echo "$p"
    done
}
for _ in $(seq "$N"); do w run --agent claude "say the words" >/dev/null; done
echo "sessions: $N, agent processes alive before stop: $(marked weft | wc -l)"
t=$(date +%s%N)
w daemon stop
echo "weft daemon stop: $(( ($(date +%s%N) - t) / 1000000 )) ms"
echo "processes of the run left after stop: $(marked | wc -l)"
