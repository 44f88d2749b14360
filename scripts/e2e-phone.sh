#!/usr/bin/env bash
# The browser UI on a phone, over TLS off loopback, end to end. The script re-runs
# itself in a new network namespace (`unshare --net`; as root, or in a user namespace
# where the kernel allows one) that has loopback and one veth pair addressed
# 10.77.0.1/24, and no route out. There `weft serve --listen 10.77.0.1:0` serves the
# UI over TLS with the home's self-signed certificate, `weft serve --print-token` makes
# the phone's token and pairing link, and ui/e2e/phone.e2e.test.mjs opens that link in
# headless Chromium at a phone's viewport, accepting the certificate by its key
# fingerprint only. The namespace goes with the last process in it; the run's processes
# are found by RUN_DIR in their environment, and any left is a failure.
#   scripts/e2e-phone.sh            # build (debug) and test
#   WEFT_E2E_SKIP_BUILD=1 …         # reuse the last build
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"
export WEFT_CHROMIUM="${WEFT_CHROMIUM:-/usr/bin/chromium}"

if [ -z "${WEFT_PHONE_NETNS:-}" ]; then
    [ -x "$WEFT_CHROMIUM" ] || { echo "no Chromium at $WEFT_CHROMIUM (Debian: apt-get install chromium)" >&2; exit 1; }
    command -v ip >/dev/null || { echo "no ip(8) (Debian: apt-get install iproute2)" >&2; exit 1; }
    if [ -z "${WEFT_E2E_SKIP_BUILD:-}" ]; then
        npm --prefix ui run build --silent
        cargo build -p weft-cli
    fi
    if [ "$(id -u)" = 0 ]; then
        exec unshare --net -- env WEFT_PHONE_NETNS=1 "$0" "$@"
    fi
    exec unshare --user --map-root-user --net -- env WEFT_PHONE_NETNS=1 "$0" "$@"
fi

# In the namespace: loopback, and a non-loopback address on a veth pair.
ADDR=10.77.0.1
ip link set lo up
if ip link add weft0 type veth peer name weft1 2>/dev/null; then
    ip addr add "$ADDR/24" dev weft0
    ip link set weft0 up
    ip link set weft1 up
else
    # No veth in this kernel: the address on loopback's interface is as far from
    # 127.0.0.0/8 for the listener, which sees only the address.
    echo "e2e-phone: no veth here; $ADDR/32 goes on lo" >&2
    ip addr add "$ADDR/32" dev lo
fi
if ip route get 1.1.1.1 >/dev/null 2>&1; then
    echo "e2e-phone: the namespace has a route out; refusing to run" >&2
    exit 1
fi

WEFT_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/weft"
[ -x "$WEFT_BIN" ] || { echo "no weft binary at $WEFT_BIN" >&2; exit 1; }
[ -f "$ROOT/ui/dist/index.html" ] || { echo "no UI build in ui/dist" >&2; exit 1; }

RUN_DIR="$(mktemp -d /tmp/weft-e2e-phone.XXXXXX)"
mkdir -p "$RUN_DIR/home" "$RUN_DIR/workspace" "$RUN_DIR/claude" "$RUN_DIR/codex" "$RUN_DIR/gemini"
echo "# phone e2e workspace" > "$RUN_DIR/workspace/README.md"
SHOTS="$ROOT/artifacts/screenshots"
mkdir -p "$SHOTS"
export WEFT_HOME="$RUN_DIR/home" WEFT_UI_DIR="$ROOT/ui/dist" WEFT_BIN WEFT_E2E_RUN_DIR="$RUN_DIR"
export CLAUDE_CONFIG_DIR="$RUN_DIR/claude" CODEX_HOME="$RUN_DIR/codex" GEMINI_CLI_HOME="$RUN_DIR/gemini"

leftovers() {
    local pid
    for env in /proc/[0-9]*/environ; do
        pid="${env#/proc/}"; pid="${pid%/environ}"
        [ "$pid" = "$$" ] || [ "$pid" = "$BASHPID" ] && continue
        grep -qs "$RUN_DIR" "$env" 2>/dev/null || continue
        [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "e2e-phone.sh" ] && continue
        echo "$pid"
    done
}

SERVE_PID=""
cleanup() {
    local status=$?
    [ -n "$SERVE_PID" ] && kill -INT "$SERVE_PID" 2>/dev/null || true
    "$WEFT_BIN" daemon stop >/dev/null 2>&1 || true
    [ -n "$SERVE_PID" ] && wait "$SERVE_PID" 2>/dev/null || true
    for pid in $(leftovers); do kill "$pid" 2>/dev/null || true; done
    if [ "$status" = 0 ]; then rm -rf "$RUN_DIR"; else echo "the run's files are kept in $RUN_DIR" >&2; fi
}
trap cleanup EXIT

"$WEFT_BIN" serve --listen "$ADDR:0" >/dev/null 2>"$RUN_DIR/serve.log" &
SERVE_PID=$!
WS_URL=""
for _ in $(seq 600); do
    WS_URL="$(sed -n 's/^weft: serving on \(wss[^ ]*\).*/\1/p' "$RUN_DIR/serve.log" | head -1)"
    [ -n "$WS_URL" ] && grep -q "fingerprint" "$RUN_DIR/serve.log" && break
    kill -0 "$SERVE_PID" 2>/dev/null || { echo "weft serve exited:" >&2; cat "$RUN_DIR/serve.log" >&2; exit 1; }
    sleep 0.1
done
[ -n "$WS_URL" ] || { echo "weft serve printed no wss:// address in 60 s:" >&2; cat "$RUN_DIR/serve.log" >&2; exit 1; }
LISTEN="${WS_URL#wss://}"; LISTEN="${LISTEN%/ws}"
FINGERPRINT="$(sed -n 's/^weft: TLS key fingerprint[^:]*: //p' "$RUN_DIR/serve.log" | head -1)"

# The phone's token and pairing link (the QR code's text), as a user would make them.
"$WEFT_BIN" serve --print-token --listen "$LISTEN" --name phone >/dev/null 2>"$RUN_DIR/pair.log"
PAIR_URL="$(sed -n 's/^weft: or open .*: \(https:[^ ]*\)$/\1/p' "$RUN_DIR/pair.log" | head -1)"
grep -q "$FINGERPRINT" "$RUN_DIR/pair.log" || { echo "--print-token showed another fingerprint:" >&2; grep -v token "$RUN_DIR/pair.log" >&2; exit 1; }
echo "e2e-phone: $WEFT_BIN serve on $LISTEN (TLS, key fingerprint $FINGERPRINT), WEFT_HOME $WEFT_HOME"

status=0
WEFT_PAIR_URL="$PAIR_URL" WEFT_FINGERPRINT="$FINGERPRINT" WEFT_WORKSPACE_DIR="$RUN_DIR/workspace" SCREENSHOT_DIR="$SHOTS" \
    node --test --test-concurrency=1 ui/e2e/phone.e2e.test.mjs || status=$?

"$WEFT_BIN" daemon stop >/dev/null 2>&1 || true
kill -INT "$SERVE_PID" 2>/dev/null || true
wait "$SERVE_PID" 2>/dev/null || true
SERVE_PID=""
for _ in $(seq 100); do [ -z "$(leftovers)" ] && break; sleep 0.2; done
left="$(echo $(leftovers))"
if [ -n "$left" ]; then
    echo "processes left behind:" >&2
    for pid in $left; do echo "  $pid $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | cut -c1-160)" >&2; done
    status=1
fi
if [ "$status" -ne 0 ]; then
    echo "--- weft serve"; tail -50 "$RUN_DIR/serve.log" || true
    echo "--- daemon log"; cat "$WEFT_HOME"/logs/* 2>/dev/null | tail -80 || true
fi
echo "screenshots: $SHOTS/phone-*.png"
exit "$status"
