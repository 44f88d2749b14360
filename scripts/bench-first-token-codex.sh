#!/usr/bin/env bash
# Time from the prompt to the first text, with the real codex against the testkit's
# scripted Responses server on loopback: `codex exec --json` run by hand (a new
# session, and `resume`), and `weft run --stream --agent codex` with the warm pool (the
# `codex app-server` started ahead by `weft agents warm`, as the app does when an agent
# is chosen or a session is opened) and without it. Each figure is the time from the
# command's start to the first line carrying the reply's first word, so Weft's own
# client start counts against it. `codex exec --json` prints no deltas, only the
# finished message: with a short reply (20 deltas) that is within a few ms of its first
# delta. Prints the medians and the warm pool's memory. The sibling of
# scripts/bench-first-token.sh (claude).
#   scripts/bench-first-token-codex.sh [RUNS]   (default 7; release builds; BENCH_NO_BUILD=1)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${1:-7}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
cd "$ROOT"
# BENCH_NO_BUILD=1 uses the release builds already there (a tree others are editing).
if [ -z "${BENCH_NO_BUILD:-}" ]; then
    cargo build -q --release -p weft-cli --bin weft
    cargo build -q --release -p weft-codex --example scripted_responses
fi
WEFT="${WEFT_BIN:-$CARGO_TARGET_DIR/release/weft}"
SERVER="$CARGO_TARGET_DIR/release/examples/scripted_responses"
CODEX="${WEFT_CODEX_BIN:-$ROOT/.tools/agents/node_modules/.bin/codex}"
[ -x "$CODEX" ] || { echo "no codex at $CODEX: run scripts/setup.sh setup_codex" >&2; exit 1; }
TMP="$(mktemp -d)"
SRV_PID=""
cleanup() {
    WEFT_HOME="$TMP/weft-home" "$WEFT" daemon stop >/dev/null 2>&1 || true
    [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
"$SERVER" 20 >"$TMP/srv.out" &
SRV_PID=$!
for _ in $(seq 100); do [ -s "$TMP/srv.out" ] && break; sleep 0.05; done
URL="$(head -1 "$TMP/srv.out")"
mkdir -p "$TMP/home" "$TMP/work"
# CODEX_HOME outside /tmp's helper restriction does not matter: danger-full-access.
export HOME="$TMP/home" CODEX_HOME="$TMP/home" BENCH_KEY=sk-test WEFT_HOME="$TMP/weft-home" \
    WEFT_CODEX_BIN="$CODEX" WEFT_CODEX_BASE_URL="$URL" WEFT_CODEX_API_KEY_ENV=BENCH_KEY \
    WEFT_CODEX_SANDBOX=danger-full-access WEFT_CODEX_APPROVAL_POLICY=never \
    WEFT_CODEX_CONFIG='model="mock-model"'
cd "$TMP/work"
FIRST="python3 $ROOT/scripts/lib/first-line.py word0"
# `weft run --stream`'s first line is the snapshot as found: for a resumed session
# whose turn had not begun, the previous reply (see first-line.py).
FIRST_WEFT="python3 $ROOT/scripts/lib/first-line.py word0 --skip 1"
# As in bench-first-token.sh: warm under python, like the timed runs.
warm() { python3 -c 'import os, sys; os.execvp(sys.argv[1], sys.argv[1:])' "$WEFT" agents warm "$@"; }
# Idle processes close after 1 s (so a resume is a cold start); a warm one waits 60 s.
export WEFT_AGENT_IDLE_SECS=1 WEFT_WARM_POOL_SECS=60
"$WEFT" trust --yes >/dev/null

CX=(-c model='"mock-model"' -c model_provider='"weft"' -c model_providers.weft.name='"Weft"'
    -c model_providers.weft.base_url="\"$URL\"" -c model_providers.weft.wire_api='"responses"'
    -c model_providers.weft.env_key='"BENCH_KEY"')
direct_new() { $FIRST -- "$CODEX" exec --json --skip-git-repo-check -s danger-full-access "${CX[@]}" \
    "say the words"; }
direct_resume() { $FIRST -- "$CODEX" exec --json --skip-git-repo-check -s danger-full-access "${CX[@]}" \
    resume "$1" "say the words"; }
weft_new() { $FIRST_WEFT -- "$WEFT" run --stream --agent codex "say the words"; }
weft_resume() { $FIRST_WEFT -- "$WEFT" run --stream --session "$1" "say the words"; }
settle() { sleep 3; }

# One session each way to resume, and caches warmed.
TID="$("$CODEX" exec --json --skip-git-repo-check -s danger-full-access "${CX[@]}" "hello" </dev/null 2>/dev/null \
    | python3 -c 'import json,sys
for l in sys.stdin:
    e = json.loads(l)
    if e.get("type") == "thread.started": print(e["thread_id"])')"
KEY="$("$WEFT" run --json --agent codex "hello" </dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["sessionKey"])')"

for f in direct_new direct_resume weft_cold_new weft_warm_new weft_cold_resume weft_warm_resume; do : >"$TMP/$f"; done
for _ in $(seq "$RUNS"); do
    direct_new >>"$TMP/direct_new"
    direct_resume "$TID" >>"$TMP/direct_resume"
    weft_new >>"$TMP/weft_cold_new"
    warm codex >/dev/null; settle
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
echo "runs: $RUNS; prompt to the first text ($("$CODEX" --version 2>/dev/null | head -1))"
row "codex exec, new session" direct_new
row "codex exec resume" direct_resume
row "weft run, new session, no warm process" weft_cold_new
row "weft run, new session, warm pool" weft_warm_new
row "weft run, resumed after idle close, cold" weft_cold_resume
row "weft run, resumed after idle close, warm" weft_warm_resume
awk -v w="$(median "$TMP/weft_warm_new")" -v d="$(median "$TMP/direct_new")" \
    'BEGIN { printf "new session: weft warm / codex exec = %.2f (target <= 0.5)\n", w / d }'
awk -v w="$(median "$TMP/weft_warm_resume")" -v d="$(median "$TMP/direct_resume")" \
    'BEGIN { printf "resumed:     weft warm / codex exec resume = %.2f\n", w / d }'
python3 -c 'import json,sys
w = json.load(open(sys.argv[1])).get("warm", [])
print("warm pool before the prompt: %d process(es), %s MB" % (len(w), " + ".join("%.0f" % (p["rssBytes"] / 1048576) for p in w) or "0"))' "$TMP/status.json"
