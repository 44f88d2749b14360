#!/usr/bin/env bash
# Installs everything Weft's builds and tests need on Debian 12: idempotent,
# non-interactive, safe under CI=true. Each part of the project owns one function
# below; `scripts/setup.sh` runs them all, `scripts/setup.sh <function>…` runs some.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export DEBIAN_FRONTEND=noninteractive

# apt-get install, once per run, only what is missing.
APT_UPDATED=0
# The version agents.toml (the one list of pins, also embedded by the registry) gives
# package $1: its line is `"NAME" = "VERSION"`. Empty (and set-up stops) when it is not there.
pin() {
    local v
    v="$(awk -F'"' -v name="$1" '$2 == name { print $4; exit }' "$ROOT/agents.toml")"
    [ -n "$v" ] || { echo "agents.toml pins no $1" >&2; exit 1; }
    echo "$v"
}

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
# WebView end-to-end tests under Xvfb, with dunst as their desktop's notification
# server; bubblewrap for the sandbox, and strace for the shell guard's corpus test
# (what it calls safe, run traced).
setup_desktop_app() {
    apt_install libwebkit2gtk-4.1-dev libgtk-3-dev libsoup-3.0-dev \
        libayatana-appindicator3-dev librsvg2-dev build-essential pkg-config libssl-dev \
        file xvfb xauth webkit2gtk-driver xdotool imagemagick dbus-x11 at-spi2-core \
        procps ca-certificates bubblewrap strace dunst
    (
        cd "$ROOT/ui"
        if [ -f package-lock.json ]; then
            # npm ci wipes node_modules; skip it when the lock file is already installed
            # (npm's hidden lock file lists what is installed: the same packages at the
            # same versions, less the root entry and optional ones this platform skips).
            if ! node -e '
                const fs = require("fs");
                const want = JSON.parse(fs.readFileSync("package-lock.json", "utf8")).packages;
                const have = JSON.parse(fs.readFileSync("node_modules/.package-lock.json", "utf8")).packages;
                for (const [k, p] of Object.entries(want))
                    if (k !== "" && !p.optional && have[k]?.version !== p.version) process.exit(1);
                for (const [k, p] of Object.entries(have)) if (want[k]?.version !== p.version) process.exit(1);
            ' 2>/dev/null; then
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
CLAUDE_CODE_VERSION="$(pin "@anthropic-ai/claude-code")"
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
CODEX_VERSION="$(pin "@openai/codex")"
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
GEMINI_CLI_VERSION="$(pin "@google/gemini-cli")"
CLAUDE_AGENT_ACP_VERSION="$(pin "@agentclientprotocol/claude-agent-acp")"
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

# The ACP driver's other agents, pinned, into the same project-local .tools/agents:
# Qwen Code, GitHub Copilot CLI, codex-acp, Auggie and Amp from npm; Hermes Agent and
# Kimi CLI from PyPI, each in its own venv under .tools/ with its command linked into
# .tools/agents/node_modules/.bin (where tests and `weft` look). Kimi CLI needs Python
# >= 3.12: the newest python3.1x found is used. Every install is pinned to an exact
# version and retried once; one that still fails stops set-up with its name (a
# missing agent would otherwise only show later, as failed tests under CI=true).
QWEN_CODE_VERSION="$(pin "@qwen-code/qwen-code")"
COPILOT_CLI_VERSION="$(pin "@github/copilot")"
CODEX_ACP_VERSION="$(pin "@zed-industries/codex-acp")"
AUGGIE_VERSION="$(pin "@augmentcode/auggie")"
AMP_VERSION="$(pin "@sourcegraph/amp")"
HERMES_AGENT_VERSION="$(pin "hermes-agent[acp]")"
KIMI_CLI_VERSION="$(pin "kimi-cli")"
ACP_AMP_VERSION="$(pin "acp-amp")"
retry() { "$@" || { echo "retrying: $*" >&2; sleep 5; "$@"; }; }
npm_pkg_version() {
    node -p "require(process.argv[1]).version" "$1/package.json" 2>/dev/null || true
}
# pip_venv DIR PYTHON PACKAGE==VERSION: a venv at .tools/DIR with the pinned package
# (made again when another version is there).
pip_venv() {
    local venv="$ROOT/.tools/$1" python="$2" spec="$3"
    local name="${spec%%\[*}" want="${spec##*==}"
    name="${name%%==*}"
    if [ "$("$venv/bin/python" -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p')" != "$want" ]; then
        rm -rf "$venv"
        # Debian's own python3 makes venvs only with python3-venv installed.
        "$python" -m venv "$venv" 2>/dev/null || {
            rm -rf "$venv"
            apt_install python3-venv
            "$python" -m venv "$venv"
        }
        retry "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$spec"
    fi
    echo "$spec in $venv"
}
# pip_agent DIR PYTHON PACKAGE==VERSION COMMAND…: pip_venv, with the commands linked
# into .tools/agents/node_modules/.bin.
pip_agent() {
    local dir="$1"
    pip_venv "$1" "$2" "$3"
    shift 3
    mkdir -p "$ROOT/.tools/agents/node_modules/.bin"
    for cmd in "$@"; do
        ln -sf "$ROOT/.tools/$dir/bin/$cmd" "$ROOT/.tools/agents/node_modules/.bin/$cmd"
    done
}
setup_acp_agents() {
    local dir="$ROOT/.tools/agents"
    local nm="$dir/node_modules"
    command -v npm >/dev/null 2>&1 || apt_install nodejs npm
    mkdir -p "$dir"
    [ -f "$dir/package.json" ] || echo '{"name":"weft-agents","private":true}' >"$dir/package.json"
    if [ "$(npm_pkg_version "$nm/@qwen-code/qwen-code")" = "$QWEN_CODE_VERSION" ] \
        && [ "$(npm_pkg_version "$nm/@github/copilot")" = "$COPILOT_CLI_VERSION" ] \
        && [ "$(npm_pkg_version "$nm/@zed-industries/codex-acp")" = "$CODEX_ACP_VERSION" ] \
        && [ "$(npm_pkg_version "$nm/@augmentcode/auggie")" = "$AUGGIE_VERSION" ] \
        && [ "$(npm_pkg_version "$nm/@sourcegraph/amp")" = "$AMP_VERSION" ]; then
        echo "qwen, copilot, codex-acp, auggie and amp already in $dir"
    else
        retry npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
            "@qwen-code/qwen-code@$QWEN_CODE_VERSION" \
            "@github/copilot@$COPILOT_CLI_VERSION" \
            "@zed-industries/codex-acp@$CODEX_ACP_VERSION" \
            "@augmentcode/auggie@$AUGGIE_VERSION" \
            "@sourcegraph/amp@$AMP_VERSION"
    fi
    for bin in qwen copilot codex-acp auggie amp; do
        test -x "$nm/.bin/$bin" || { echo "setup_acp_agents: $bin is missing" >&2; return 1; }
    done
    local py311="" py_kimi=""
    for c in "$HOME/.pyenv/versions/3.11"*/bin/python3 python3.11 python3; do
        if [ -z "$py311" ] && "$c" -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; then
            py311="$c"
        fi
    done
    [ -n "$py311" ] || { echo "setup_acp_agents: hermes-agent needs Python >= 3.11" >&2; return 1; }
    # A pyenv shim answers `command -v` for a version it will not run: try each.
    for v in 3.13 3.12; do
        for c in "$HOME/.pyenv/versions/$v"*/bin/python3 "python$v"; do
            if [ -z "$py_kimi" ] && "$c" -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null; then
                py_kimi="$c"
            fi
        done
    done
    pip_agent hermes "$py311" "hermes-agent[acp]==$HERMES_AGENT_VERSION" hermes
    pip_agent acp-amp "$py311" "acp-amp==$ACP_AMP_VERSION" acp-amp
    if [ -n "$py_kimi" ]; then
        pip_agent kimi "$py_kimi" "kimi-cli==$KIMI_CLI_VERSION" kimi
    else
        echo "setup_acp_agents: kimi-cli needs Python >= 3.12 and none was found" >&2
        return 1
    fi
}

# The browser UI's end-to-end test (scripts/e2e-browser.sh): Debian's Chromium, driven
# headless by playwright-core from the UI's npm packages (no browser download).
setup_browser() {
    # iproute2: scripts/e2e-phone.sh addresses its network namespace with ip(8).
    apt_install chromium iproute2
    command -v chromium >/dev/null 2>&1 && command -v ip >/dev/null 2>&1
}

# Accounts keep their secrets in the OS secret store: the Secret Service over D-Bus
# (keyring's dbus backend links libdbus). The tests run under their own D-Bus session
# with a throwaway, unlocked GNOME Keyring (scripts/lib/with-keyring.sh).
setup_secret_service() {
    apt_install gnome-keyring dbus libdbus-1-dev
    command -v gnome-keyring-daemon >/dev/null 2>&1 && command -v dbus-run-session >/dev/null 2>&1
}

# Remote hosts' tests (crates/cli/tests/suite/hosts.rs): a real OpenSSH server per test
# on loopback, and the login shells whose parsing broke other tools' SSH set-up.
setup_ssh_hosts() {
    apt_install openssh-client openssh-server fish csh
    test -x /usr/sbin/sshd && command -v fish >/dev/null 2>&1 && command -v csh >/dev/null 2>&1
}

# The Matrix surface's tests (surfaces/matrix/tests): a real Synapse homeserver per test
# run on loopback, from PyPI into .tools/synapse (SQLite, users registered by shared
# secret: no e-mail, no federation, nothing off this machine).
SYNAPSE_VERSION=1.163.2
setup_matrix() {
    # curl: the tests' admin calls; setpriv (util-linux): Synapse dies with its test.
    apt_install curl util-linux
    pip_venv synapse python3 "matrix-synapse==$SYNAPSE_VERSION"
    test -x "$ROOT/.tools/synapse/bin/register_new_matrix_user"
}

ALL_STEPS=(setup_desktop_app setup_secret_service setup_claude_code setup_codex setup_gemini_acp setup_acp_agents setup_browser setup_ssh_hosts setup_matrix)

if [ $# -eq 0 ]; then
    set -- "${ALL_STEPS[@]}"
fi
for step in "$@"; do
    echo "== $step"
    "$step"
done
