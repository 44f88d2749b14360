#!/usr/bin/env bash
# Wall time of the same scripted Claude turn through `weft run --agent claude` and
# through `claude -p` directly, both against the testkit's scripted Anthropic server on
# loopback (a streamed reply of DELTAS deltas of 16 characters, default 200), the two
# alternating, each run a fresh process. Prints the medians and their ratio.
#   scripts/bench-claude.sh [RUNS] [DELTAS]   (default 10 and 200; release builds)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${1:-10}"
DELTAS="${2:-200}"
# shellcheck source=lib/scripted-claude.sh
source "$ROOT/scripts/lib/scripted-claude.sh"
scripted_claude "$DELTAS"

now() { date +%s%N; }
direct() { claude_direct >/dev/null 2>&1; }
weft() { weft_run >/dev/null 2>&1; }

direct; weft   # warm caches
: >"$TMP/direct"; : >"$TMP/weft"
for _ in $(seq "$RUNS"); do
    t=$(now); direct; echo $(( ($(now) - t) / 1000000 )) >>"$TMP/direct"
    t=$(now); weft; echo $(( ($(now) - t) / 1000000 )) >>"$TMP/weft"
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2))}'; }
md=$(median "$TMP/direct"); mw=$(median "$TMP/weft")
echo "runs: $RUNS (each a fresh process, one $DELTAS-delta streamed turn)"
echo "claude -p direct:        median ${md} ms  (all: $(sort -n "$TMP/direct" | tr '\n' ' '))"
echo "weft run --agent claude: median ${mw} ms  (all: $(sort -n "$TMP/weft" | tr '\n' ' '))"
awk -v w="$mw" -v d="$md" 'BEGIN { printf "ratio weft/direct: %.3f\n", w / d }'
