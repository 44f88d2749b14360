#!/usr/bin/env bash
# Runs every test Weft has: formatting and lints, the Rust workspace (unit, property,
# real-binary end-to-end), the UI's checks and tests, and the desktop app's WebView
# end-to-end suite. Installs what it needs first (scripts/setup.sh). CI runs exactly
# this (.ci/run), on a fresh clone, with CI=true and no stdin.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export CARGO_TERM_COLOR=never
# Build once, share the target dir: CI keeps it outside the clone between runs.
if [ "${CI:-}" = "true" ] && [ -z "${CARGO_TARGET_DIR:-}" ]; then
    export CARGO_TARGET_DIR="$HOME/.cache/weft/target"
fi
# A one-shot build gains nothing from incremental caches, which grow the shared target
# dir by gigabytes a run.
if [ "${CI:-}" = "true" ]; then
    export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
# The agent CLIs setup.sh installs into this checkout: binaries are found above the
# running executable or on PATH, never from the current folder, and CI keeps the
# target dir (so the test executables) outside the checkout.
export PATH="$ROOT/.tools/agents/node_modules/.bin:$PATH"

step() { echo; echo "==== $* ($(date +%H:%M:%S))"; }

step setup
"$ROOT/scripts/setup.sh"

step "cargo fmt"
cargo fmt --all -- --check

step "cargo deny (licences, bans, sources)"
# Offline: advisories need the RustSec database, which this network does not reach.
# `--offline` reads the crates from cargo's own cache, which a fresh machine has not
# filled yet: fetch them first (a no-op once they are there).
cargo fetch --locked
command -v cargo-deny >/dev/null 2>&1 || cargo install cargo-deny --locked
cargo deny --offline check licenses bans sources

step "cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

# The Matrix surface's workspace builds (and is linted) in the background, niced, in a
# target dir of its own (one target dir builds one thing at a time) while the
# workspace's tests run, which mostly wait on agents and servers: about five minutes
# of CPU that would otherwise add to the run. Its step below waits for it.
MATRIX_TARGET="$CARGO_TARGET_DIR-matrix"
MATRIX_LOG="$(mktemp /tmp/weft-matrix-build.XXXXXX)"
MATRIX_BUILD=""
if [ -f surfaces/matrix/Cargo.toml ]; then
    (
        cd surfaces/matrix
        export CARGO_TARGET_DIR="$MATRIX_TARGET"
        cargo fetch --locked
        nice -n 10 cargo build --all-targets --locked
        nice -n 10 cargo clippy --all-targets --locked -- -D warnings
    ) > "$MATRIX_LOG" 2>&1 &
    MATRIX_BUILD=$!
fi

step "cargo test (workspace)"
STARTED="$(date +%s)"
cargo test --workspace --locked --no-fail-fast
# The accounts' tests again, in a D-Bus session of their own with an unlocked throwaway
# keyring: there they must reach the real Secret Service (above, with no bus, they skip).
"$ROOT/scripts/lib/with-keyring.sh" cargo test --locked -p weft-accounts -p weft-cli --no-fail-fast -- secret accounts
# The Matrix surface: its own workspace (matrix-sdk's SQLite cannot link beside
# rusqlite), the same checks, and its tests against a real Synapse on loopback with
# the `weft` built above, under a throwaway keyring (the bot's token is a secret).
if [ -f surfaces/matrix/Cargo.toml ]; then
    step "Matrix surface: fmt, deny, clippy, tests (real Synapse)"
    if ! wait "$MATRIX_BUILD"; then
        cat "$MATRIX_LOG" >&2
        echo "the Matrix surface's build or clippy failed (above)" >&2
        exit 1
    fi
    tail -n 3 "$MATRIX_LOG"
    (
        cd surfaces/matrix
        cargo fmt --all -- --check
        cargo deny --offline check licenses bans sources
    )
    cargo build --locked -p weft-claude --example scripted_anthropic
    # Its tests wait on Synapse and the bot far more than on the CPU. The `weft` and the
    # scripted server they use are the main workspace's (named before CARGO_TARGET_DIR
    # changes: a command's assignments are made in order).
    WEFT_BIN="$CARGO_TARGET_DIR/debug/weft" \
        WEFT_SCRIPTED_ANTHROPIC="$CARGO_TARGET_DIR/debug/examples/scripted_anthropic" \
        CARGO_TARGET_DIR="$MATRIX_TARGET" \
        "$ROOT/scripts/lib/with-keyring.sh" \
        cargo test --manifest-path surfaces/matrix/Cargo.toml --locked --no-fail-fast -- --test-threads 4
fi
# Every test stops the daemon its own WEFT_HOME got: one still running was leaked.
leaked=""
for pid in $(pgrep -f "weft daemon run" || true); do
    [ "$(stat -c %Y "/proc/$pid" 2>/dev/null || echo 0)" -ge "$STARTED" ] || continue
    home="$(tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | sed -n 's/^WEFT_HOME=//p')"
    leaked="$leaked $pid"
    echo "a test left its daemon running: pid $pid, WEFT_HOME=$home" >&2
    kill "$pid" 2>/dev/null || true
done
[ -z "$leaked" ] || { echo "daemons left behind by the tests:$leaked" >&2; exit 1; }

if [ -f ui/package.json ]; then
    step "ui: typecheck, lint, unit tests"
    (cd ui && npm run --silent typecheck && npm run --silent lint && npm test --silent)
fi

if [ -x scripts/e2e-app.sh ]; then
    step "desktop app end-to-end (real WebView)"
    scripts/e2e-app.sh
fi

if [ -x scripts/e2e-browser.sh ]; then
    step "browser UI end-to-end (headless Chromium against the daemon)"
    scripts/e2e-browser.sh
fi

if [ -x scripts/e2e-phone.sh ]; then
    step "browser UI on a phone over TLS off loopback (network namespace)"
    WEFT_E2E_SKIP_BUILD=1 scripts/e2e-phone.sh
fi

step "all tests passed"
