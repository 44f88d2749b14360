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
# shellcheck source=lib/first-token.sh
source "$ROOT/scripts/lib/first-token.sh"

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

first_token_rounds claude "$SID" "$KEY"
first_token_report "claude $("$CLAUDE" --version 2>/dev/null | head -1)" "claude -p" "claude -p --resume"
