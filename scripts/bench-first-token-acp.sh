#!/usr/bin/env bash
# Time from the prompt to the first text for an ACP agent: the real Qwen Code against
# the testkit's scripted Chat Completions API on loopback, `qwen -p -o stream-json` run
# by hand (a new session, and a resumed one), and `weft run --stream --agent qwen`
# (ACP, `qwen --acp`) with the warm pool (the process started ahead by `weft agents
# warm`, past `initialize` and `session/new` or `session/load`) and without it. Each
# figure is the time from the command's start to the first stdout line carrying the
# reply's first word, so Weft's own client start counts against it. The sibling of
# scripts/bench-first-token.sh (claude), -codex.sh and -gemini.sh.
#   scripts/bench-first-token-acp.sh [RUNS]   (default 5; release builds; BENCH_NO_BUILD=1)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${1:-5}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
cd "$ROOT"
if [ -z "${BENCH_NO_BUILD:-}" ]; then
    cargo build -q --release -p weft-cli --bin weft
    cargo build -q --release -p weft-acp --example scripted_chat
fi
WEFT="${WEFT_BIN:-$CARGO_TARGET_DIR/release/weft}"
SERVER="$CARGO_TARGET_DIR/release/examples/scripted_chat"
QWEN="${WEFT_QWEN_BIN:-$ROOT/.tools/agents/node_modules/.bin/qwen}"
[ -x "$QWEN" ] || { echo "no qwen at $QWEN: run scripts/setup.sh setup_acp_agents" >&2; exit 1; }
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
mkdir -p "$TMP/home/.qwen" "$TMP/work"
# An OpenAI-compatible key, no Qwen login, no usage statistics (as the ACP suite's
# qwen_setup).
echo '{"security":{"auth":{"selectedType":"openai"}},"privacy":{"usageStatisticsEnabled":false}}' \
    >"$TMP/home/.qwen/settings.json"
export HOME="$TMP/home" OPENAI_BASE_URL="$(head -1 "$TMP/srv.out")" OPENAI_API_KEY=sk-test \
    OPENAI_MODEL=mock-model WEFT_HOME="$TMP/weft-home" WEFT_QWEN_BIN="$QWEN" \
    XDG_CONFIG_HOME="$TMP/home/.config" XDG_STATE_HOME="$TMP/home/.local/state"
cd "$TMP/work"
# shellcheck source=lib/first-token.sh
source "$ROOT/scripts/lib/first-token.sh"

direct_new() { $FIRST -- "$QWEN" -o stream-json -p "say the words"; }
direct_resume() { $FIRST -- "$QWEN" -o stream-json --continue -p "say the words"; }
weft_new() { $FIRST_WEFT -- "$WEFT" run --stream --agent qwen "say the words"; }
weft_resume() { $FIRST_WEFT -- "$WEFT" run --stream --session "$1" "say the words"; }
# Qwen Code takes seconds to start: let the warm one get past `session/new`.
settle() { sleep "${BENCH_SETTLE:-8}"; }

"$QWEN" -o json -p "hello" </dev/null >/dev/null 2>&1
KEY="$("$WEFT" run --json --agent qwen "hello" </dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["sessionKey"])')"

first_token_rounds qwen "" "$KEY"
first_token_report "qwen $("$QWEN" --version 2>/dev/null | head -1)" "qwen -p" "qwen -p --continue"
