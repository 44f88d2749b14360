#!/usr/bin/env bash
# Installs what the desktop app needs (scripts/setup.sh setup_desktop_app: Debian
# packages, the UI's npm packages), builds the UI and a release build of the app, and
# launches it. Arguments go to the app, e.g. `scripts/run-app.sh --workspace ~/src/x`.
# The echo agent works with no account; other agents appear once their CLIs are found.
#   WEFT_HOME        state folder (default ~/.weft): sessions, logs, recent workspaces
#   WEFT_WORKSPACE   a workspace folder to open at start
#   WEFT_RUN_PROFILE debug for a faster first build (default release)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PROFILE="${WEFT_RUN_PROFILE:-release}"

"$ROOT/scripts/setup.sh" setup_desktop_app
npm --prefix ui run build --silent
# The app starts its kernel service (`weft daemon`) from the `weft` binary beside it.
if [ "$PROFILE" = release ]; then
    cargo build --release -p weft-app --features tauri/custom-protocol
    cargo build --release -p weft-cli
else
    cargo build -p weft-app --features tauri/custom-protocol
    cargo build -p weft-cli
fi
BIN="${CARGO_TARGET_DIR:-$ROOT/target}/$PROFILE/weft-app"

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
    echo "No display: start the app under Xvfb with e.g." >&2
    echo "  Xvfb :99 -screen 0 1280x800x24 -nolisten tcp & DISPLAY=:99 $BIN" >&2
    exit 1
fi
exec "$BIN" "$@"
