#!/usr/bin/env bash
# Installs everything Weft's builds and tests need on Debian 12: idempotent,
# non-interactive, safe under CI=true. Each part of the project owns one function
# below; `scripts/setup.sh` runs them all, `scripts/setup.sh <function>…` runs some.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export DEBIAN_FRONTEND=noninteractive

# apt-get install, once per run, only what is missing.
APT_UPDATED=0
apt_install() {
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    if [ "$APT_UPDATED" -eq 0 ]; then
        $sudo apt-get update -qq
        APT_UPDATED=1
    fi
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# The desktop app (src-tauri, ui/): Tauri's system libraries, the UI's npm packages,
# the Tauri CLI (from npm, prebuilt) and tauri-driver + WebKitWebDriver for the
# WebView end-to-end tests under Xvfb.
setup_desktop_app() {
    apt_install libwebkit2gtk-4.1-dev libgtk-3-dev libsoup-3.0-dev \
        libayatana-appindicator3-dev librsvg2-dev build-essential pkg-config libssl-dev \
        file xvfb xauth webkit2gtk-driver xdotool imagemagick dbus-x11 at-spi2-core \
        procps ca-certificates
    (
        cd "$ROOT/ui"
        if [ -f package-lock.json ]; then
            # npm ci wipes node_modules; skip it when the lock file is already installed.
            if ! cmp -s package-lock.json node_modules/.package-lock.json 2>/dev/null; then
                npm ci --no-audit --no-fund --loglevel=error
            fi
        else
            npm install --no-audit --no-fund --loglevel=error
        fi
    )
    if ! command -v tauri-driver >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/tauri-driver" ]; then
        cargo install tauri-driver --locked
    fi
}

ALL_STEPS=(setup_desktop_app)

if [ $# -eq 0 ]; then
    set -- "${ALL_STEPS[@]}"
fi
for step in "$@"; do
    echo "== $step"
    "$step"
done
