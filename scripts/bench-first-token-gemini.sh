#!/usr/bin/env bash
# Time from the prompt to the first text, with the real gemini against the testkit's
# scripted Gemini API on loopback: `gemini -p -o stream-json` run by hand (a new
# session, and `--resume latest`), and `weft run --stream --agent gemini` (ACP) with the
# warm pool (the process started ahead by `weft agents warm`, past `initialize`) and
# without it. Each figure is the time from the command's start to the first stdout line
# carrying the reply's first word, so Weft's own client start counts against it. The
# sibling of scripts/bench-first-token.sh (claude) and -codex.sh.
#   scripts/bench-first-token-gemini.sh [RUNS]   (default 5; release builds; BENCH_NO_BUILD=1)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${1:-5}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
cd "$ROOT"
if [ -z "${BENCH_NO_BUILD:-}" ]; then
    cargo build -q --release -p weft-cli --bin weft
    cargo build -q --release -p weft-gemini --example scripted_gemini
fi
WEFT="${WEFT_BIN:-$CARGO_TARGET_DIR/release/weft}"
SERVER="$CARGO_TARGET_DIR/release/examples/scripted_gemini"
GEMINI="${WEFT_GEMINI_BIN:-$ROOT/.tools/agents/node_modules/.bin/gemini}"
[ -x "$GEMINI" ] || { echo "no gemini at $GEMINI: run scripts/setup.sh setup_gemini_acp" >&2; exit 1; }
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
mkdir -p "$TMP/home/.gemini" "$TMP/work"
# The API key, no Google login, no usage statistics (as the tests' GEMINI_KEY_SETTINGS).
echo '{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false}}' \
    >"$TMP/home/.gemini/settings.json"
export HOME="$TMP/home" GEMINI_API_KEY=test-key GOOGLE_GEMINI_BASE_URL="$(head -1 "$TMP/srv.out")" \
    GEMINI_CLI_NO_RELAUNCH=true WEFT_HOME="$TMP/weft-home" WEFT_GEMINI_BIN="$GEMINI"
unset GEMINI_CLI_HOME
cd "$TMP/work"
# shellcheck source=lib/first-token.sh
source "$ROOT/scripts/lib/first-token.sh"

direct_new() { $FIRST -- "$GEMINI" --skip-trust -o stream-json -p "say the words"; }
direct_resume() { $FIRST -- "$GEMINI" --skip-trust -o stream-json --resume latest -p "say the words"; }
weft_new() { $FIRST_WEFT -- "$WEFT" run --stream --agent gemini "say the words"; }
weft_resume() { $FIRST_WEFT -- "$WEFT" run --stream --session "$1" "say the words"; }
# Gemini takes a few seconds to start: let the warm one get past `initialize`.
settle() { sleep 6; }

"$GEMINI" --skip-trust -o json -p "hello" </dev/null >/dev/null 2>&1
KEY="$("$WEFT" run --json --agent gemini "hello" </dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["sessionKey"])')"

first_token_rounds gemini "" "$KEY"
first_token_report "gemini $("$GEMINI" --version 2>/dev/null | head -1)" "gemini -p" "gemini -p --resume latest"
