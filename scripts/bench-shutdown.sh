#!/usr/bin/env bash
# How long `weft daemon stop` takes with N live Claude Code sessions (each keeps its
# long-lived `claude` process between turns), against the scripted Anthropic server:
# drivers are shut down in parallel, so N sessions should not cost N times one.
#   scripts/bench-shutdown.sh [N]      (default 10; release builds)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
N="${1:-10}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
cd "$ROOT"
cargo build -q --release -p weft-cli --bin weft
cargo build -q --release -p weft-claude --example scripted_anthropic
WEFT="$CARGO_TARGET_DIR/release/weft"
SERVER="$CARGO_TARGET_DIR/release/examples/scripted_anthropic"
CLAUDE="${WEFT_CLAUDE_BIN:-$ROOT/.tools/agents/node_modules/.bin/claude}"
[ -x "$CLAUDE" ] || { echo "no claude at $CLAUDE: run scripts/setup.sh setup_claude_code" >&2; exit 1; }
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
mkdir -p "$TMP/home" "$TMP/work"
echo '{"hasCompletedOnboarding":true}' >"$TMP/home/.claude.json"
export HOME="$TMP/home" IS_SANDBOX=1 ANTHROPIC_BASE_URL="$(head -1 "$TMP/srv.out")" \
    ANTHROPIC_API_KEY=sk-test CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
    WEFT_HOME="$TMP/weft-home" WEFT_CLAUDE_BIN="$CLAUDE"
cd "$TMP/work"
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
