#!/usr/bin/env bash
# Wall time of the same scripted Claude turn through `weft run --agent claude` and
# through `claude -p` directly, both against the testkit's scripted Anthropic server on
# loopback (a 200-delta streamed reply). Prints the medians and their ratio.
#   scripts/bench-claude.sh [RUNS]      (default 10; release builds of weft and the server)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${1:-10}"
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
"$SERVER" 200 >"$TMP/srv.out" &
SRV_PID=$!
for _ in $(seq 100); do [ -s "$TMP/srv.out" ] && break; sleep 0.05; done
URL="$(head -1 "$TMP/srv.out")"

mkdir -p "$TMP/home" "$TMP/work"
echo '{"hasCompletedOnboarding":true}' >"$TMP/home/.claude.json"
export HOME="$TMP/home" IS_SANDBOX=1 ANTHROPIC_BASE_URL="$URL" ANTHROPIC_API_KEY=sk-test \
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 WEFT_HOME="$TMP/weft-home" WEFT_CLAUDE_BIN="$CLAUDE"
cd "$TMP/work"

now() { date +%s%N; }
direct() { "$CLAUDE" -p --output-format stream-json --verbose --include-partial-messages \
    --permission-mode default "say the words" >/dev/null 2>&1; }
weft() { "$WEFT" run --agent claude "say the words" >/dev/null 2>&1; }

direct; weft   # warm caches
: >"$TMP/direct"; : >"$TMP/weft"
for _ in $(seq "$RUNS"); do
    t=$(now); direct; echo $(( ($(now) - t) / 1000000 )) >>"$TMP/direct"
    t=$(now); weft; echo $(( ($(now) - t) / 1000000 )) >>"$TMP/weft"
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2))}'; }
md=$(median "$TMP/direct"); mw=$(median "$TMP/weft")
echo "runs: $RUNS (each a fresh process, one 200-delta streamed turn)"
echo "claude -p direct:        median ${md} ms  (all: $(sort -n "$TMP/direct" | tr '\n' ' '))"
echo "weft run --agent claude: median ${mw} ms  (all: $(sort -n "$TMP/weft" | tr '\n' ' '))"
awk -v w="$mw" -v d="$md" 'BEGIN { printf "ratio weft/direct: %.3f\n", w / d }'
