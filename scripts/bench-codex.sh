#!/usr/bin/env bash
# Wall time of the same scripted Codex turn through `weft run --agent codex` (codex
# app-server over JSON-RPC, driven by the kernel), through `codex exec --json` directly,
# and through `codex app-server` alone (scripts/lib/codex-app-server-turn.py: the same
# handshake and overrides as Weft's driver, every line read and dropped), all against
# the testkit's scripted Responses server on loopback (a streamed reply of DELTAS deltas
# of 16 characters, default 200), alternating, each run a fresh process. Prints the
# medians and the ratios. `codex exec --json` prints no deltas at all (only the finished
# message), so the app-server alone — which writes a JSON-RPC notification per delta —
# is the agent-alone figure for what Weft drives.
#   scripts/bench-codex.sh [RUNS] [DELTAS]   (default 10 and 200; release builds)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${1:-10}"
DELTAS="${2:-200}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
cd "$ROOT"
cargo build -q --release -p weft-cli --bin weft
cargo build -q --release -p weft-codex --example scripted_responses
WEFT="$CARGO_TARGET_DIR/release/weft"
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
"$SERVER" "$DELTAS" >"$TMP/srv.out" &
SRV_PID=$!
for _ in $(seq 100); do [ -s "$TMP/srv.out" ] && break; sleep 0.05; done
URL="$(head -1 "$TMP/srv.out")"

mkdir -p "$TMP/home" "$TMP/work"
export HOME="$TMP/home" CODEX_HOME="$TMP/home" BENCH_KEY=sk-test WEFT_HOME="$TMP/weft-home" \
    WEFT_CODEX_BIN="$CODEX" WEFT_CODEX_BASE_URL="$URL" WEFT_CODEX_API_KEY_ENV=BENCH_KEY \
    WEFT_CODEX_SANDBOX=danger-full-access WEFT_CODEX_APPROVAL_POLICY=never \
    WEFT_CODEX_CONFIG='model="mock-model"'
cd "$TMP/work"

now() { date +%s%N; }
direct() { "$CODEX" exec --json --skip-git-repo-check -s danger-full-access \
    -c model='"mock-model"' -c model_provider='"weft"' -c model_providers.weft.name='"Weft"' \
    -c model_providers.weft.base_url="\"$URL\"" -c model_providers.weft.wire_api='"responses"' \
    -c model_providers.weft.env_key='"BENCH_KEY"' "say the words" </dev/null >/dev/null 2>&1; }
weft() { "$WEFT" run --agent codex "say the words" </dev/null >/dev/null 2>&1; }
app() { python3 "$ROOT/scripts/lib/codex-app-server-turn.py" "$CODEX" "$URL" BENCH_KEY \
    "say the words" </dev/null >/dev/null 2>&1; }

direct; app; weft   # warm caches
: >"$TMP/direct"; : >"$TMP/app"; : >"$TMP/weft"
for _ in $(seq "$RUNS"); do
    t=$(now); direct; echo $(( ($(now) - t) / 1000000 )) >>"$TMP/direct"
    t=$(now); app; echo $(( ($(now) - t) / 1000000 )) >>"$TMP/app"
    t=$(now); weft; echo $(( ($(now) - t) / 1000000 )) >>"$TMP/weft"
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2))}'; }
md=$(median "$TMP/direct"); ma=$(median "$TMP/app"); mw=$(median "$TMP/weft")
echo "runs: $RUNS (each a fresh process, one $DELTAS-delta streamed turn)"
echo "codex exec --json direct: median ${md} ms  (all: $(sort -n "$TMP/direct" | tr '\n' ' '))"
echo "codex app-server alone:   median ${ma} ms  (all: $(sort -n "$TMP/app" | tr '\n' ' '))"
echo "weft run --agent codex:   median ${mw} ms  (all: $(sort -n "$TMP/weft" | tr '\n' ' '))"
awk -v w="$mw" -v a="$ma" 'BEGIN { printf "ratio weft/app-server: %.3f\n", w / a }'
awk -v w="$mw" -v d="$md" 'BEGIN { printf "ratio weft/direct: %.3f\n", w / d }'
