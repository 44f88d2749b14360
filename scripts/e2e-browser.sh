#!/usr/bin/env bash
# The UI in headless Chromium against the daemon's WebSocket, end to end: builds the UI
# and the `weft` binary, gives `weft serve` a fresh WEFT_HOME and workspace (the daemon
# serves ui/dist from WEFT_UI_DIR), opens the page it prints (token in the fragment)
# with ui/e2e/browser.e2e.test.mjs (playwright-core, the system's Chromium), stops the
# daemon with `weft daemon stop`, and fails if any process of the run is left.
#   scripts/e2e-browser.sh            # build (debug) and test
#   WEFT_E2E_SKIP_BUILD=1 …           # reuse the last build
#   WEFT_CHROMIUM=/path/to/chromium … # another Chromium than /usr/bin/chromium
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"
export WEFT_CHROMIUM="${WEFT_CHROMIUM:-/usr/bin/chromium}"
[ -x "$WEFT_CHROMIUM" ] || { echo "no Chromium at $WEFT_CHROMIUM (Debian: apt-get install chromium)" >&2; exit 1; }

if [ -z "${WEFT_E2E_SKIP_BUILD:-}" ]; then
    npm --prefix ui run build --silent
    cargo build -p weft-cli
fi
WEFT_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/weft"
[ -x "$WEFT_BIN" ] || { echo "no weft binary at $WEFT_BIN" >&2; exit 1; }
[ -f "$ROOT/ui/dist/index.html" ] || { echo "no UI build in ui/dist" >&2; exit 1; }

RUN_DIR="$(mktemp -d /tmp/weft-e2e-browser.XXXXXX)"
mkdir -p "$RUN_DIR/home" "$RUN_DIR/workspace"
echo "# browser e2e workspace" > "$RUN_DIR/workspace/README.md"
SHOTS="$ROOT/artifacts/screenshots"
mkdir -p "$SHOTS"
export WEFT_HOME="$RUN_DIR/home" WEFT_UI_DIR="$ROOT/ui/dist" WEFT_BIN
# Whatever the run starts (serve, the daemon, agents, Chromium) carries RUN_DIR in its
# environment: that is how its leftovers are found, and only those are ever touched.
export WEFT_E2E_RUN_DIR="$RUN_DIR"

leftovers() {
    local pid
    for env in /proc/[0-9]*/environ; do
        pid="${env#/proc/}"; pid="${pid%/environ}"
        [ "$pid" = "$$" ] && continue
        [ "$pid" = "$BASHPID" ] && continue
        grep -qs "$RUN_DIR" "$env" 2>/dev/null || continue
        # Not a child of this script still running a command substitution of it.
        [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "e2e-browser.sh" ] && continue
        echo "$pid"
    done
}

# True while PID is still this run's daemon (not a reused pid).
is_daemon() { grep -qs "$RUN_DIR" "/proc/$1/environ" || tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -q "weft.*daemon"; }

SERVE_PID=""
DAEMON_PID=""
cleanup() {
    local status=$?
    [ -n "$SERVE_PID" ] && kill -INT "$SERVE_PID" 2>/dev/null || true
    "$WEFT_BIN" daemon stop >/dev/null 2>&1 || true
    [ -n "$SERVE_PID" ] && wait "$SERVE_PID" 2>/dev/null || true
    for pid in $(leftovers); do kill "$pid" 2>/dev/null || true; done
    if [ -n "${DAEMON_PID:-}" ] && is_daemon "$DAEMON_PID"; then kill "$DAEMON_PID" 2>/dev/null || true; fi
    # A passing run leaves nothing behind; a failing one keeps its logs to read.
    if [ "$status" = 0 ]; then rm -rf "$RUN_DIR"; else echo "the run's files are kept in $RUN_DIR" >&2; fi
}
trap cleanup EXIT

# A Claude Code session of the user's own (a recorded transcript) for the library to find.
mkdir -p "$RUN_DIR/claude/projects/-work"
cp "$ROOT/crates/library/tests/fixtures/claude_session.jsonl" \
    "$RUN_DIR/claude/projects/-work/2beba834-ea9e-4d74-9e9f-b4a9f23cf57b.jsonl"
export CLAUDE_CONFIG_DIR="$RUN_DIR/claude"
# The other agents' homes are the run's own too: the library would otherwise index the
# machine's (thousands of codex rollouts on a build box push the test's session out of
# the list).
mkdir -p "$RUN_DIR/codex" "$RUN_DIR/gemini"
export CODEX_HOME="$RUN_DIR/codex" GEMINI_CLI_HOME="$RUN_DIR/gemini"

"$WEFT_BIN" serve --listen 127.0.0.1:0 >"$RUN_DIR/serve.out" 2>"$RUN_DIR/serve.log" &
SERVE_PID=$!
UI_URL=""
for _ in $(seq 600); do
    UI_URL="$(sed -n 's/^weft: browser UI at \(http[^ ]*\).*/\1/p' "$RUN_DIR/serve.log" | head -1)"
    [ -n "$UI_URL" ] && break
    kill -0 "$SERVE_PID" 2>/dev/null || { echo "weft serve exited:" >&2; cat "$RUN_DIR/serve.log" >&2; exit 1; }
    sleep 0.1
done
[ -n "$UI_URL" ] || { echo "weft serve printed no browser UI line in 60 s:" >&2; cat "$RUN_DIR/serve.log" >&2; exit 1; }
DAEMON_PID="$("$WEFT_BIN" daemon status --json 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(JSON.parse(s).pid??"")}catch{}})' || true)"
echo "e2e: $WEFT_BIN serve, daemon pid ${DAEMON_PID:-?}, WEFT_HOME $WEFT_HOME, UI ${UI_URL%%#*}"

status=0
WEFT_UI_URL="$UI_URL" WEFT_WORKSPACE_DIR="$RUN_DIR/workspace" SCREENSHOT_DIR="$SHOTS" \
    node --test --test-concurrency=1 ui/e2e/browser.e2e.test.mjs || status=$?

# The suite stopped the daemon (`weft daemon stop`); make sure, then `weft serve` ends
# with its listener.
"$WEFT_BIN" daemon stop >/dev/null 2>&1 || true
kill -INT "$SERVE_PID" 2>/dev/null || true
wait "$SERVE_PID" 2>/dev/null || true
SERVE_PID=""
for _ in $(seq 100); do [ -z "$(leftovers)" ] && break; sleep 0.2; done
left="$(leftovers)"
# The daemon, even if it cleared its environment.
if [ -n "$DAEMON_PID" ] && is_daemon "$DAEMON_PID" && ! grep -qw "$DAEMON_PID" <<<"$left"; then
    left="$left $DAEMON_PID"
fi
left="$(echo $left)"
if [ -n "$left" ]; then
    echo "processes left behind:" >&2
    for pid in $left; do echo "  $pid $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | cut -c1-160)" >&2; done
    status=1
fi
if [ "$status" -ne 0 ]; then
    echo "--- weft serve"; tail -50 "$RUN_DIR/serve.log" || true
    echo "--- daemon log"; cat "$WEFT_HOME"/logs/* 2>/dev/null | tail -80 || true
fi
echo "screenshots: $SHOTS/browser-*.png"
exit "$status"
