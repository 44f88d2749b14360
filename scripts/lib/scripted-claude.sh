# Sourced by the Claude benchmarks: release builds of `weft` and the testkit's scripted
# Anthropic server, the server started streaming `$1` deltas per reply, an isolated
# HOME, WEFT_HOME and workspace under $TMP (removed on exit, with the daemon stopped),
# and the environment that points the real `claude` at the server (WEFT_BIN=PATH runs
# another `weft` build, for an A/B). Leaves the caller
# in the workspace with WEFT, CLAUDE and TMP set, and `claude_direct` and `weft_run`.
# shellcheck shell=bash
scripted_claude() {
    local deltas="$1"
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
    cd "$ROOT"
    # BENCH_NO_BUILD=1 uses the release builds already there (a tree others are editing).
    if [ -z "${BENCH_NO_BUILD:-}" ]; then
        cargo build -q --release -p weft-cli --bin weft
        cargo build -q --release -p weft-claude --example scripted_anthropic
    fi
    WEFT="${WEFT_BIN:-$CARGO_TARGET_DIR/release/weft}"
    local server="$CARGO_TARGET_DIR/release/examples/scripted_anthropic"
    CLAUDE="${WEFT_CLAUDE_BIN:-$ROOT/.tools/agents/node_modules/.bin/claude}"
    [ -x "$CLAUDE" ] || { echo "no claude at $CLAUDE: run scripts/setup.sh setup_claude_code" >&2; exit 1; }
    TMP="$(mktemp -d)"
    SRV_PID=""
    trap scripted_claude_cleanup EXIT
    "$server" "$deltas" >"$TMP/srv.out" &
    SRV_PID=$!
    for _ in $(seq 100); do [ -s "$TMP/srv.out" ] && break; sleep 0.05; done
    mkdir -p "$TMP/home" "$TMP/work"
    echo '{"hasCompletedOnboarding":true}' >"$TMP/home/.claude.json"
    export HOME="$TMP/home" IS_SANDBOX=1 ANTHROPIC_BASE_URL="$(head -1 "$TMP/srv.out")" \
        ANTHROPIC_API_KEY=sk-test CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
        WEFT_HOME="$TMP/weft-home" WEFT_CLAUDE_BIN="$CLAUDE"
    cd "$TMP/work"
}

# The turn both ways: `claude -p` as Weft's driver runs it, and `weft run`.
claude_direct() { "$CLAUDE" -p --output-format stream-json --verbose --include-partial-messages \
    --permission-mode default "say the words"; }
weft_run() { "$WEFT" run --agent claude "say the words"; }

scripted_claude_cleanup() {
    WEFT_HOME="$TMP/weft-home" "$WEFT" daemon stop >/dev/null 2>&1 || true
    [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null
    rm -rf "$TMP"
}
