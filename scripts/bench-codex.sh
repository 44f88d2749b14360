#!/usr/bin/env bash
# Wall time of the same scripted Codex turn through `weft run --agent codex` (codex
# app-server over JSON-RPC, driven by the kernel) and through `codex exec --json`
# directly, both against the testkit's scripted Responses server on loopback (a
# 200-delta streamed reply), each run a fresh process. Prints the medians and their
# ratio.
#   scripts/bench-codex.sh [RUNS]      (default 10; release builds of weft and the server)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${1:-10}"
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
"$SERVER" 200 >"$TMP/srv.out" &
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

direct; weft   # warm caches
: >"$TMP/direct"; : >"$TMP/weft"
for _ in $(seq "$RUNS"); do
    t=$(now); direct; echo $(( ($(now) - t) / 1000000 )) >>"$TMP/direct"
    t=$(now); weft; echo $(( ($(now) - t) / 1000000 )) >>"$TMP/weft"
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2))}'; }
md=$(median "$TMP/direct"); mw=$(median "$TMP/weft")
echo "runs: $RUNS (each a fresh process, one 200-delta streamed turn)"
echo "codex exec --json direct: median ${md} ms  (all: $(sort -n "$TMP/direct" | tr '\n' ' '))"
echo "weft run --agent codex:   median ${mw} ms  (all: $(sort -n "$TMP/weft" | tr '\n' ' '))"
awk -v w="$mw" -v d="$md" 'BEGIN { printf "ratio weft/direct: %.3f\n", w / d }'
