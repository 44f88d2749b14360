#!/usr/bin/env bash
# Time from the prompt to the first text delta, with the real claude against the
# testkit's scripted Anthropic server on loopback: `claude -p` run by hand (a new
# session, and a resume), and `weft run --stream` with the warm pool (the process
# started ahead by `weft agents warm`, as the app does when an agent is chosen or a
# session is opened) and without it. Each figure is the time from the command's start
# to the first line carrying the reply's first word, so Weft's own client start counts
# against it. Prints the medians and the warm pool's memory.
#   scripts/bench-first-token.sh [RUNS]   (default 7; release builds)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${1:-7}"
# shellcheck source=lib/scripted-claude.sh
source "$ROOT/scripts/lib/scripted-claude.sh"
scripted_claude 20
FIRST="python3 $ROOT/scripts/lib/first-line.py word0"
# `weft run --stream`'s first line is the snapshot as found: for a resumed session
# whose turn had not begun, the previous reply (see first-line.py).
FIRST_WEFT="python3 $ROOT/scripts/lib/first-line.py word0 --skip 1"
# `weft agents warm` runs under python too: the warm pool matches a new session by the
# client's environment, and a python reached through a version manager's shim (pyenv)
# adds to PATH and sets its own variables, so a warm started from the shell itself was
# never a match for the timed run started by first-line.py.
warm() { python3 -c 'import os, sys; os.execvp(sys.argv[1], sys.argv[1:])' "$WEFT" agents warm "$@"; }
# Idle processes close after 1 s (so a resume is a cold start); a warm one waits 60 s.
export WEFT_AGENT_IDLE_SECS=1 WEFT_WARM_POOL_SECS=60
"$WEFT" trust --yes >/dev/null

direct_new() { $FIRST -- "$CLAUDE" -p --output-format stream-json --verbose --include-partial-messages \
    --permission-mode default "say the words"; }
direct_resume() { $FIRST -- "$CLAUDE" -p --output-format stream-json --verbose --include-partial-messages \
    --permission-mode default --resume "$1" "say the words"; }
weft_new() { $FIRST_WEFT -- "$WEFT" run --stream --agent claude "say the words"; }
weft_resume() { $FIRST_WEFT -- "$WEFT" run --stream --session "$1" "say the words"; }
# Settled: the process started ahead has read its settings and waits for its message.
settle() { sleep 3; }

# One session each way to resume, and caches warmed.
"$CLAUDE" -p --output-format json "hello" >"$TMP/direct.json" 2>/dev/null
SID="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["session_id"])' "$TMP/direct.json")"
KEY="$("$WEFT" run --json --agent claude "hello" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sessionKey"])')"

for f in direct_new direct_resume weft_cold_new weft_warm_new weft_cold_resume weft_warm_resume; do : >"$TMP/$f"; done
for _ in $(seq "$RUNS"); do
    direct_new >>"$TMP/direct_new"
    direct_resume "$SID" >>"$TMP/direct_resume"
    weft_new >>"$TMP/weft_cold_new"
    warm claude >/dev/null; settle
    "$WEFT" daemon status --json >"$TMP/status.json"
    weft_new >>"$TMP/weft_warm_new"
    sleep 2   # the idle close
    weft_resume "$KEY" >>"$TMP/weft_cold_resume"
    sleep 2
    warm --session "$KEY" >/dev/null; settle
    weft_resume "$KEY" >>"$TMP/weft_warm_resume"
    sleep 2
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2))}'; }
row() { printf '%-40s median %5s ms  (all: %s)\n' "$1" "$(median "$TMP/$2")" "$(sort -n "$TMP/$2" | tr '\n' ' ')"; }
echo "runs: $RUNS; prompt to the first text delta (claude $("$CLAUDE" --version 2>/dev/null | head -1))"
row "claude -p, new session" direct_new
row "claude -p --resume" direct_resume
row "weft run, new session, no warm process" weft_cold_new
row "weft run, new session, warm pool" weft_warm_new
row "weft run, resumed after idle close, cold" weft_cold_resume
row "weft run, resumed after idle close, warm" weft_warm_resume
awk -v w="$(median "$TMP/weft_warm_new")" -v d="$(median "$TMP/direct_new")" \
    'BEGIN { printf "new session: weft warm / claude -p = %.2f (target <= 0.5)\n", w / d }'
awk -v w="$(median "$TMP/weft_warm_resume")" -v d="$(median "$TMP/direct_resume")" \
    'BEGIN { printf "resumed:     weft warm / claude -p --resume = %.2f\n", w / d }'
python3 -c 'import json,sys
w = json.load(open(sys.argv[1])).get("warm", [])
print("warm pool before the prompt: %d process(es), %s MB" % (len(w), " + ".join("%.0f" % (p["rssBytes"] / 1048576) for p in w) or "0"))' "$TMP/status.json"
