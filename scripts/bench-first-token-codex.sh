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
# shellcheck source=lib/first-token.sh
source "$ROOT/scripts/lib/first-token.sh"

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

first_token_rounds codex "$TID" "$KEY"
first_token_report "$("$CODEX" --version 2>/dev/null | head -1)" "codex exec" "codex exec resume"
