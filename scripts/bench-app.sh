#!/usr/bin/env bash
# Measures the desktop app for BENCHMARKS.md ("Desktop app"): launch to interactive,
# idle PSS (app + WebKit processes) beside a bare Tauri window, the same with a
# 10,000-tool-call session open, and frame times while a reply streams into it; then
# (issue 34) switching views and sessions, to the first frame, with that session open;
# PSS and the same switches with 2,000 more sessions in the sidebar (a second
# WEFT_HOME, the app started through a wrapper that sets it); the UI bundle's gzip size.
# Release builds; Xvfb and tauri-driver are started here; fresh WEFT_HOMEs per run.
# Prints a JSON object (also saved to artifacts/bench-app.json).
#   WEFT_BENCH_CALLS=N            calls in the big session (10000)
#   WEFT_BENCH_MANY_SESSIONS=N    small sessions in the second home (2000; 0: skip it)
#   WEFT_BENCH_SWITCH_ROUNDS=N    rounds of each switch (7)
#   WEFT_BENCH_ONLY_LAUNCH=1      launch times only (with their phases), then stop
#   WEFT_BENCH_PROFILE=debug      the debug builds (for a quick look; figures are release)
#   WEFT_BENCH_SETTLE_MS, WEFT_BENCH_LAUNCHES, WEFT_BENCH_SKIP_BUILD: see ui/e2e/bench.mjs
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
CALLS="${WEFT_BENCH_CALLS:-10000}"
MANY="${WEFT_BENCH_MANY_SESSIONS:-2000}"
PROFILE="${WEFT_BENCH_PROFILE:-release}"
RELEASE="--release"; [ "$PROFILE" = release ] || RELEASE=""

if [ -z "${WEFT_BENCH_SKIP_BUILD:-}" ]; then
    scripts/setup.sh setup_desktop_app
    npm --prefix ui run build --silent
    cargo build $RELEASE -p weft-app --features tauri/custom-protocol --bin weft-app --example bare --example seed_big_session
    cargo build $RELEASE -p weft-cli
fi

RUN_DIR="$(mktemp -d /tmp/weft-bench.XXXXXX)"
mkdir -p "$RUN_DIR/home" "$RUN_DIR/workspace"
echo "# bench workspace" > "$RUN_DIR/workspace/README.md"
export WEFT_HOME="$RUN_DIR/home"
# The big session and one small one to switch from.
BIG_KEY="$("$TARGET/$PROFILE/examples/seed_big_session" "$RUN_DIR/workspace" "$CALLS" 1)"
echo "seeded $BIG_KEY with $CALLS tool calls" >&2
# A second home: the same big session and MANY small ones, for a full sidebar. The app
# reads WEFT_HOME from its environment, which tauri-driver passes on unchanged, so it
# is launched through a wrapper that sets it (exec: the process is weft-app itself).
if [ "$MANY" -gt 0 ]; then
    mkdir -p "$RUN_DIR/home-many" "$RUN_DIR/many"
    echo "# bench workspace, many sessions" > "$RUN_DIR/many/README.md"
    seed_start=$(date +%s)
    MANY_KEY="$(WEFT_HOME="$RUN_DIR/home-many" "$TARGET/$PROFILE/examples/seed_big_session" "$RUN_DIR/many" "$CALLS" "$MANY")"
    echo "seeded $MANY small sessions and $MANY_KEY in $(( $(date +%s) - seed_start )) s" >&2
    printf '#!/bin/sh\nWEFT_HOME="%s" exec "%s" "$@"\n' "$RUN_DIR/home-many" "$TARGET/$PROFILE/weft-app" > "$RUN_DIR/weft-app-many"
    chmod +x "$RUN_DIR/weft-app-many"
fi

PIDS=()
cleanup() {
    "$TARGET/$PROFILE/weft" daemon stop >/dev/null 2>&1 || true
    WEFT_HOME="$RUN_DIR/home-many" "$TARGET/$PROFILE/weft" daemon stop >/dev/null 2>&1 || true
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    # What the apps started that outlived them (the session bus GTK autolaunches
    # headless) carries this run's WEFT_HOME in its environment.
    for env in /proc/[0-9]*/environ; do
        pid="${env#/proc/}"; pid="${pid%/environ}"
        [ "$pid" = "$$" ] && continue
        grep -qs "$RUN_DIR" "$env" 2>/dev/null && kill "$pid" 2>/dev/null || true
    done
}
trap cleanup EXIT
free_port() { node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'; }
for n in $(seq 90 140); do [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ] || { DISPLAY_NUM=$n; break; }; done
Xvfb ":$DISPLAY_NUM" -screen 0 1280x800x24 -nolisten tcp >"$RUN_DIR/xvfb.log" 2>&1 &
PIDS+=($!)
export DISPLAY=":$DISPLAY_NUM"
for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X$DISPLAY_NUM" ] && break; sleep 0.1; done
PORT="$(free_port)"
NO_AT_BRIDGE=1 tauri-driver --port "$PORT" --native-port "$(free_port)" \
    --native-driver "$(command -v WebKitWebDriver)" >"$RUN_DIR/tauri-driver.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do (echo >"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done

mkdir -p artifacts
WEFT_APP_BIN="$TARGET/$PROFILE/weft-app" WEFT_BARE_BIN="$TARGET/$PROFILE/examples/bare" \
    WEFT_E2E_PORT="$PORT" WEFT_WORKSPACE_DIR="$RUN_DIR/workspace" WEFT_BIG_SESSION="$BIG_KEY" \
    WEFT_BIN="$TARGET/$PROFILE/weft" WEFT_BENCH_CALLS="$CALLS" WEFT_BENCH_MANY_SESSIONS="$MANY" \
    WEFT_MANY_APP_BIN="$RUN_DIR/weft-app-many" WEFT_MANY_WORKSPACE_DIR="$RUN_DIR/many" WEFT_MANY_BIG_SESSION="${MANY_KEY:-}" \
    WEFT_UI_DIST="$ROOT/ui/dist" \
    node ui/e2e/bench.mjs | tee artifacts/bench-app.json
