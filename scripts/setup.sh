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

# The Claude Code driver's real-binary tests: the pinned CLI from its npm package into
# the project-local, gitignored .tools/agents (tests and `weft` find it there before
# PATH). Re-running is a no-op once that version is installed.
CLAUDE_CODE_VERSION="2.1.197"
setup_claude_code() {
    local dir="$ROOT/.tools/agents"
    local bin="$dir/node_modules/.bin/claude"
    if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "^$CLAUDE_CODE_VERSION "; then
        echo "claude $CLAUDE_CODE_VERSION already in $dir"
        return 0
    fi
    command -v npm >/dev/null 2>&1 || apt_install nodejs npm
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{"name":"weft-agents","private":true}' >"$dir/package.json"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
        "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"
    # The package's postinstall puts the native binary in place of a stub; run it
    # ourselves when npm's script policy skipped it.
    if ! "$bin" --version >/dev/null 2>&1; then
        (cd "$dir/node_modules/@anthropic-ai/claude-code" && node install.cjs)
    fi
    "$bin" --version
}

# The Codex driver's real-binary tests: the pinned codex CLI from its npm package into
# the same project-local .tools/agents as Claude Code (tests and `weft` find it there
# before PATH). The package pulls its native binary in as an optional dependency.
CODEX_VERSION="0.171.0"
setup_codex() {
    local dir="$ROOT/.tools/agents"
    local bin="$dir/node_modules/.bin/codex"
    if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q " $CODEX_VERSION\$"; then
        echo "codex $CODEX_VERSION already in $dir"
        return 0
    fi
    command -v npm >/dev/null 2>&1 || apt_install nodejs npm
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{"name":"weft-agents","private":true}' >"$dir/package.json"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
        "@openai/codex@$CODEX_VERSION"
    "$bin" --version
}

# The Gemini and ACP drivers' real-binary tests: the pinned Gemini CLI (headless
# stream-json and `gemini --acp`) and claude-agent-acp (Claude Code over ACP) from
# their npm packages into the same project-local .tools/agents. claude-agent-acp brings
# its own Claude agent SDK; the tests point it at the pinned `claude` above.
GEMINI_CLI_VERSION="0.61.0"
CLAUDE_AGENT_ACP_VERSION="0.49.0"
setup_gemini_acp() {
    local dir="$ROOT/.tools/agents"
    local gemini="$dir/node_modules/.bin/gemini"
    local acp_pkg="$dir/node_modules/@agentclientprotocol/claude-agent-acp/package.json"
    if [ -x "$gemini" ] && [ "$("$gemini" --version 2>/dev/null)" = "$GEMINI_CLI_VERSION" ] \
        && grep -q "\"version\": \"$CLAUDE_AGENT_ACP_VERSION\"" "$acp_pkg" 2>/dev/null; then
        echo "gemini $GEMINI_CLI_VERSION and claude-agent-acp $CLAUDE_AGENT_ACP_VERSION already in $dir"
        return 0
    fi
    command -v npm >/dev/null 2>&1 || apt_install nodejs npm
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{"name":"weft-agents","private":true}' >"$dir/package.json"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
        "@google/gemini-cli@$GEMINI_CLI_VERSION" \
        "@agentclientprotocol/claude-agent-acp@$CLAUDE_AGENT_ACP_VERSION"
    "$gemini" --version
    test -x "$dir/node_modules/.bin/claude-agent-acp"
}

# The browser UI's end-to-end test (scripts/e2e-browser.sh): Debian's Chromium, driven
# headless by playwright-core from the UI's npm packages (no browser download).
setup_browser() {
    apt_install chromium
    command -v chromium >/dev/null 2>&1
}

ALL_STEPS=(setup_desktop_app setup_claude_code setup_codex setup_gemini_acp setup_browser)

if [ $# -eq 0 ]; then
    set -- "${ALL_STEPS[@]}"
fi
for step in "$@"; do
    echo "== $step"
    "$step"
done
