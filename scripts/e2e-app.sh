#!/usr/bin/env bash
# End-to-end tests of the built desktop app in its real WebView: builds the UI and the
# app, starts Xvfb and tauri-driver (over WebKitWebDriver) itself, runs the WebdriverIO
# suite in ui/e2e/ with a fresh WEFT_HOME and workspace, and saves screenshots to
# artifacts/screenshots/. Leaves no process behind.
#   scripts/e2e-app.sh            # build (debug) and test
#   WEFT_E2E_PROFILE=release …    # test a release build
#   WEFT_E2E_SKIP_BUILD=1 …       # reuse the last build
#   WEFT_E2E_FILES=ui/e2e/terminal.e2e.test.mjs …   # run only these test files
#   WEFT_E2E_NAME=remembers …                        # only the tests whose name matches
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PROFILE="${WEFT_E2E_PROFILE:-debug}"
export PATH="$HOME/.cargo/bin:$PATH"

if [ -z "${WEFT_E2E_SKIP_SETUP:-}" ]; then
    scripts/setup.sh setup_desktop_app
fi
if [ -z "${WEFT_E2E_SKIP_BUILD:-}" ]; then
    npm --prefix ui run build --silent
    # The app starts its kernel service from the `weft` binary beside it.
    if [ "$PROFILE" = release ]; then
        cargo build --release -p weft-app --features tauri/custom-protocol
        cargo build --release -p weft-cli
    else
        cargo build -p weft-app --features tauri/custom-protocol
        cargo build -p weft-cli
    fi
    cargo build -p weft-app --example scripted_anthropic --example seed_big_session
fi
APP_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/$PROFILE/weft-app"
WEFT_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/$PROFILE/weft"
[ -x "$APP_BIN" ] || { echo "no app binary at $APP_BIN" >&2; exit 1; }
[ -x "$WEFT_BIN" ] || { echo "no weft binary at $WEFT_BIN" >&2; exit 1; }

RUN_DIR="$(mktemp -d /tmp/weft-e2e.XXXXXX)"
mkdir -p "$RUN_DIR/home" "$RUN_DIR/workspace"
echo "# e2e workspace" > "$RUN_DIR/workspace/README.md"
SHOTS="$ROOT/artifacts/screenshots"
mkdir -p "$SHOTS"

# A 10,000-call session and 2,000 small ones in a workspace of their own (find in a
# long session, a sidebar of thousands): ui/e2e/daily.e2e.test.mjs. Written into the
# store before any daemon runs.
mkdir -p "$RUN_DIR/big"
# (Not exported: a process started from here with RUN_DIR in its environment counts as
# the run's, e.g. in claude.e2e's check that no agent outlives the daemon.)
BIG_KEY="$(WEFT_HOME="$RUN_DIR/home" "${CARGO_TARGET_DIR:-$ROOT/target}/debug/examples/seed_big_session" \
    "$RUN_DIR/big" "${WEFT_E2E_BIG_CALLS:-10000}" "${WEFT_E2E_MANY_SESSIONS:-2000}")"

# What the app opens goes through the desktop's real handlers, pointed at a recorder:
# links via the opener plugin and xdg-open to this run's default x-scheme-handler (an
# XDG config and data home of its own), files to the configured editor (WEFT_OPEN_WITH).
OPENED="$RUN_DIR/opened.txt"
printf '#!/bin/sh\nprintf "%%s\\n" "$*" >> "%s"\n' "$OPENED" > "$RUN_DIR/record-open.sh"
chmod +x "$RUN_DIR/record-open.sh"
mkdir -p "$RUN_DIR/xdg-config" "$RUN_DIR/xdg-data/applications"
cat > "$RUN_DIR/xdg-data/applications/weft-e2e-open.desktop" <<DESKTOP
[Desktop Entry]
Type=Application
Name=Weft e2e opener
Exec=$RUN_DIR/record-open.sh url %u
MimeType=x-scheme-handler/http;x-scheme-handler/https;x-scheme-handler/mailto;
NoDisplay=true
DESKTOP
printf '[Default Applications]\nx-scheme-handler/http=weft-e2e-open.desktop\nx-scheme-handler/https=weft-e2e-open.desktop\nx-scheme-handler/mailto=weft-e2e-open.desktop\n' \
    > "$RUN_DIR/xdg-config/mimeapps.list"
OPEN_ENV=(XDG_CONFIG_HOME="$RUN_DIR/xdg-config" XDG_DATA_HOME="$RUN_DIR/xdg-data" WEFT_OPEN_WITH="$RUN_DIR/record-open.sh file")

# A certificate authority of the run's own, trusted by the app (on top of the system's),
# for a loopback https server the tests run: a remote image loaded on click comes from
# it through the shell, and any request the window makes unasked would reach it:
# ui/e2e/remote.e2e.test.mjs.
TLS="$RUN_DIR/tls"
mkdir -p "$TLS"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=weft-e2e-ca \
    -keyout "$TLS/ca.key" -out "$TLS/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=127.0.0.1 \
    -keyout "$TLS/key.pem" -out "$TLS/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > "$TLS/ext.cnf"
openssl x509 -req -in "$TLS/server.csr" -CA "$TLS/ca.pem" -CAkey "$TLS/ca.key" -CAcreateserial -days 2 \
    -extfile "$TLS/ext.cnf" -out "$TLS/cert.pem" 2>/dev/null
cat "${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}" "$TLS/ca.pem" > "$TLS/roots.pem" 2>/dev/null || cp "$TLS/ca.pem" "$TLS/roots.pem"
OPEN_ENV+=(SSL_CERT_FILE="$TLS/roots.pem")
export WEFT_E2E_TLS_CERT="$TLS/cert.pem" WEFT_E2E_TLS_KEY="$TLS/key.pem"

# An npm stand-in for the Agents view's Install (no registry here): it lays out what
# `npm install --prefix DIR PACKAGE@VERSION` would, a package whose bin prints its
# version: ui/e2e/agents.e2e.test.mjs.
mkdir -p "$RUN_DIR/npm"
cat > "$RUN_DIR/npm/npm" <<'NPM'
#!/bin/sh
prefix=""; spec=""
while [ $# -gt 0 ]; do
    case "$1" in --prefix) prefix="$2"; shift ;; -*) ;; *) spec="$1" ;; esac
    shift
done
pkg="${spec%@*}"; version="${spec##*@}"
case "$pkg" in
    @google/gemini-cli) bin=gemini ;; @openai/codex) bin=codex ;;
    @anthropic-ai/claude-code) bin=claude ;; *) bin=claude-agent-acp ;;
esac
echo "npm stand-in: installing $spec into $prefix"
mkdir -p "$prefix/node_modules/$pkg/dist" "$prefix/node_modules/.bin"
printf '{"name":"%s","version":"%s"}\n' "$pkg" "$version" > "$prefix/node_modules/$pkg/package.json"
printf '#!/bin/sh\necho %s\n' "$version" > "$prefix/node_modules/$pkg/dist/index.js"
chmod +x "$prefix/node_modules/$pkg/dist/index.js"
ln -sf "../$pkg/dist/index.js" "$prefix/node_modules/.bin/$bin"
echo "added 1 package in 0.1s"
NPM
chmod +x "$RUN_DIR/npm/npm"
OPEN_ENV+=(WEFT_NPM_BIN="$RUN_DIR/npm/npm")
export WEFT_E2E_NPM=1

free_port() { node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'; }
free_display() {
    for n in $(seq 90 140); do
        [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ] || { echo "$n"; return; }
    done
    echo "no free X display" >&2; exit 1
}

PIDS=()
stop_daemon() { WEFT_HOME="$RUN_DIR/home" "$WEFT_BIN" daemon stop >/dev/null 2>&1 || true; }
cleanup() {
    local status=$?
    stop_daemon
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    if declare -F remove_ssh_user >/dev/null; then remove_ssh_user; fi
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    # Only this run's processes are ever touched (several runs may share a machine and
    # the same app binary): what the apps left carries RUN_DIR in its environment.
    if declare -F leftovers >/dev/null; then
        for pid in $(leftovers); do kill "$pid" 2>/dev/null || true; done
    fi
    # A passing run leaves nothing behind; a failing one keeps its logs to read.
    if [ "$status" = 0 ]; then rm -rf "$RUN_DIR"; else echo "the run's files are kept in $RUN_DIR" >&2; fi
}
trap cleanup EXIT

DISPLAY_NUM="$(free_display)"
Xvfb ":$DISPLAY_NUM" -screen 0 1280x800x24 -nolisten tcp >"$RUN_DIR/xvfb.log" 2>&1 &
PIDS+=($!)
export DISPLAY=":$DISPLAY_NUM"
for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X$DISPLAY_NUM" ] && break; sleep 0.1; done

# The real `claude` CLI (installed by setup.sh into .tools/agents) against a scripted
# Anthropic server on loopback, with its own HOME: ui/e2e/claude.e2e.test.mjs.
CLAUDE_ENV=()
CLAUDE_BIN="${WEFT_CLAUDE_BIN:-$ROOT/.tools/agents/node_modules/.bin/claude}"
if [ -x "$CLAUDE_BIN" ]; then
    mkdir -p "$RUN_DIR/claude-home"
    echo '{"hasCompletedOnboarding":true}' > "$RUN_DIR/claude-home/.claude.json"
    "${CARGO_TARGET_DIR:-$ROOT/target}/debug/examples/scripted_anthropic" >"$RUN_DIR/anthropic.url" 2>"$RUN_DIR/anthropic.log" &
    PIDS+=($!)
    for _ in $(seq 100); do [ -s "$RUN_DIR/anthropic.url" ] && break; sleep 0.1; done
    ANTHROPIC_URL="$(head -1 "$RUN_DIR/anthropic.url")"
    CLAUDE_ENV=(HOME="$RUN_DIR/claude-home" WEFT_CLAUDE_BIN="$CLAUDE_BIN" ANTHROPIC_BASE_URL="$ANTHROPIC_URL"
        ANTHROPIC_API_KEY=sk-test IS_SANDBOX=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
        CLAUDE_CODE_MAX_RETRIES=0)
    # A Claude Code session of the user's own (a recorded transcript, moved to this run's
    # workspace so claude can resume it there) for the library and the sidebar to list:
    # ui/e2e/library.e2e.test.mjs. CLAUDE_CONFIG_DIR names claude's default folder under
    # that HOME, so the daemon's indexer and claude read the same one.
    NATIVE_DIR="$RUN_DIR/claude-home/.claude"
    NATIVE_PROJECT="$NATIVE_DIR/projects/$(printf %s "$RUN_DIR/workspace" | sed 's/[^A-Za-z0-9]/-/g')"
    mkdir -p "$NATIVE_PROJECT"
    sed "s|/home/dev/probe/claude/work|$RUN_DIR/workspace|g" "$ROOT/crates/library/tests/fixtures/claude_session.jsonl" \
        > "$NATIVE_PROJECT/2beba834-ea9e-4d74-9e9f-b4a9f23cf57b.jsonl"
    cp "$RUN_DIR/claude-home/.claude.json" "$NATIVE_DIR/.claude.json"
    CLAUDE_ENV+=(CLAUDE_CONFIG_DIR="$NATIVE_DIR")
    export WEFT_E2E_NATIVE_SEEDED=1
    # For the test runner: the real-claude suite runs only when these are set.
    export WEFT_E2E_CLAUDE=1 WEFT_E2E_ANTHROPIC_URL="$ANTHROPIC_URL"
    echo "e2e: real claude at $CLAUDE_BIN, scripted server $ANTHROPIC_URL"
elif [ "${CI:-}" = "true" ]; then
    echo "CI=true and no claude CLI at $CLAUDE_BIN (scripts/setup.sh setup_claude_code installs it)" >&2
    exit 1
else
    echo "e2e: no claude CLI at $CLAUDE_BIN; the real-claude turn is skipped"
fi

# Accounts keep their secrets in the Secret Service: the app (and the daemon it starts)
# gets a D-Bus session of its own with an unlocked throwaway GNOME Keyring in this run's
# folder: ui/e2e/accounts.e2e.test.mjs.
KEYRING_ENV=()
if command -v dbus-daemon >/dev/null 2>&1 && command -v gnome-keyring-daemon >/dev/null 2>&1; then
    mkdir -m 700 -p "$RUN_DIR/keyring/keyrings"
    { read -r BUS_ADDR; read -r BUS_PID; } < <(dbus-daemon --session --fork --print-address=1 --print-pid=1)
    PIDS+=("$BUS_PID")
    printf 'weft-e2e\n' | DBUS_SESSION_BUS_ADDRESS="$BUS_ADDR" XDG_DATA_HOME="$RUN_DIR/keyring" \
        gnome-keyring-daemon --unlock --components=secrets >/dev/null
    KEYRING_ENV=(DBUS_SESSION_BUS_ADDRESS="$BUS_ADDR")
    export WEFT_E2E_KEYRING=1
    # The same session's notification server: a real one (dunst, on the run's display).
    # A question's notification stays up until the test acts on it (`dunstctl action`,
    # a click on it) or closes it; any other (a turn finished) goes straight to the
    # history, so the one on screen is the question a test waits for: app.e2e and
    # hosts.e2e check that a question notifies and its click opens the session.
    if command -v dunst >/dev/null 2>&1; then
        printf '[global]\n  follow = none\n[urgency_low]\n  timeout = 0\n[urgency_normal]\n  timeout = 0\n[urgency_critical]\n  timeout = 0\n[not_a_question]\n  summary = "*"\n  skip_display = true\n[question]\n  summary = "*needs an answer"\n  skip_display = false\n' > "$RUN_DIR/dunstrc"
        DBUS_SESSION_BUS_ADDRESS="$BUS_ADDR" dunst -config "$RUN_DIR/dunstrc" >"$RUN_DIR/dunst.log" 2>&1 &
        PIDS+=($!)
        # Asked without activating (the bus would start a second dunst, of the default
        # config, for a call to the name before this one owns it).
        for _ in $(seq 50); do
            dbus-send --bus="$BUS_ADDR" --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner \
                string:org.freedesktop.Notifications 2>/dev/null | grep -q "boolean true" && break
            sleep 0.1
        done
        export WEFT_E2E_NOTIFY_BUS="$BUS_ADDR"
    elif [ "${CI:-}" = "true" ]; then
        echo "CI=true and no dunst (scripts/setup.sh setup_desktop_app installs it)" >&2
        exit 1
    else
        echo "e2e: no dunst; the notification checks are skipped"
    fi
elif [ "${CI:-}" = "true" ]; then
    echo "CI=true and no dbus-daemon or gnome-keyring-daemon (scripts/setup.sh setup_secret_service installs them)" >&2
    exit 1
else
    echo "e2e: no GNOME Keyring; the accounts test is skipped"
fi

# A remote host over real SSH (as crates/cli/tests/suite/hosts_rig.rs makes one): an
# sshd of this run on a free loopback port, a throwaway user who logs in with a key made
# here, and an ssh config of the run's own (WEFT_SSH_CONFIG) naming it: the app adds it,
# browses its folders and runs a turn there (ui/e2e/hosts.e2e.test.mjs). Needs root
# (to make the user) and openssh-server (scripts/setup.sh setup_ssh_hosts).
SSH_ENV=()
SSH_USER=""
if [ "$(id -u)" = 0 ] && [ -x /usr/sbin/sshd ] && command -v useradd >/dev/null; then
    SSH_DIR="$RUN_DIR/ssh-host"
    mkdir -p "$SSH_DIR" /run/sshd
    SSH_USER="weft-e2e-$(printf %x $$)"
    useradd -m -s /bin/bash "$SSH_USER"
    usermod -p '*' "$SSH_USER"   # no password, and not locked (`!` is, even for a key)
    ssh-keygen -q -t ed25519 -N "" -f "$SSH_DIR/id"
    ssh-keygen -q -t ed25519 -N "" -f "$SSH_DIR/hostkey"
    install -d -o "$SSH_USER" -g "$SSH_USER" -m 700 "/home/$SSH_USER/.ssh"
    install -o "$SSH_USER" -g "$SSH_USER" -m 600 "$SSH_DIR/id.pub" "/home/$SSH_USER/.ssh/authorized_keys"
    # A project to open through the folder browser.
    install -d -o "$SSH_USER" -g "$SSH_USER" "/home/$SSH_USER/proj" "/home/$SSH_USER/proj/.git" "/home/$SSH_USER/notes"
    SSH_PORT="$(free_port)"
    printf 'ListenAddress 127.0.0.1\nPort %s\nHostKey %s\nPidFile %s\nUsePAM no\nStrictModes no\nAllowUsers %s\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n' \
        "$SSH_PORT" "$SSH_DIR/hostkey" "$SSH_DIR/sshd.pid" "$SSH_USER" > "$SSH_DIR/sshd.conf"
    /usr/sbin/sshd -D -e -f "$SSH_DIR/sshd.conf" 2>"$SSH_DIR/sshd.log" &
    PIDS+=($!)
    for _ in $(seq 100); do grep -q "Server listening" "$SSH_DIR/sshd.log" 2>/dev/null && break; sleep 0.1; done
    printf 'Host weft-e2e-host\n  HostName 127.0.0.1\n  Port %s\n  User %s\nHost *\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking accept-new\n  LogLevel ERROR\n' \
        "$SSH_PORT" "$SSH_USER" "$SSH_DIR/id" "$SSH_DIR/known_hosts" > "$SSH_DIR/config"
    SSH_ENV=(WEFT_SSH_CONFIG="$SSH_DIR/config")
    export WEFT_E2E_SSH_DEST=weft-e2e-host WEFT_E2E_SSH_HOME="/home/$SSH_USER"
    echo "e2e: ssh host weft-e2e-host = $SSH_USER@127.0.0.1:$SSH_PORT"
elif [ "${CI:-}" = "true" ]; then
    echo "CI=true and no sshd or not root: the hosts e2e cannot run (scripts/setup.sh setup_ssh_hosts)" >&2
    exit 1
else
    echo "e2e: not root or no sshd; the hosts test is skipped"
fi
remove_ssh_user() {
    [ -n "$SSH_USER" ] || return 0
    pkill -KILL -u "$SSH_USER" 2>/dev/null || true
    for _ in $(seq 50); do pgrep -u "$SSH_USER" >/dev/null || break; sleep 0.1; done
    userdel -r -f "$SSH_USER" 2>/dev/null || true
}

PORT="$(free_port)"
NATIVE_PORT="$(free_port)"
env "${CLAUDE_ENV[@]}" "${OPEN_ENV[@]}" "${KEYRING_ENV[@]}" "${SSH_ENV[@]}" WEFT_HOME="$RUN_DIR/home" NO_AT_BRIDGE=1 tauri-driver --port "$PORT" --native-port "$NATIVE_PORT" \
    --native-driver "$(command -v WebKitWebDriver)" >"$RUN_DIR/tauri-driver.log" 2>&1 &
TD_PID=$!
PIDS+=($TD_PID)
for _ in $(seq 100); do
    (echo >"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.1
done

echo "e2e: app $APP_BIN, WEFT_HOME $RUN_DIR/home, display :$DISPLAY_NUM, tauri-driver :$PORT"
status=0
WEFT_E2E_BIG_KEY="$BIG_KEY" WEFT_E2E_BIG_DIR="$RUN_DIR/big" WEFT_E2E_OPENED="$OPENED" \
WEFT_APP_BIN="$APP_BIN" WEFT_BIN="$WEFT_BIN" WEFT_HOME_DIR="$RUN_DIR/home" WEFT_E2E_PORT="$PORT" WEFT_WORKSPACE_DIR="$RUN_DIR/workspace" \
    SCREENSHOT_DIR="$SHOTS" node --test --test-concurrency=1 ${WEFT_E2E_NAME:+--test-name-pattern="$WEFT_E2E_NAME"} \
    ${WEFT_E2E_FILES:-ui/e2e/} || status=$?
# Every app the suite launched has been closed: no app, WebKit or agent process of this
# run (they carry RUN_DIR in their environment) may be left behind.
leftovers() {
    local pid
    for env in /proc/[0-9]*/environ; do
        pid="${env#/proc/}"; pid="${pid%/environ}"
        [ "$pid" = "$$" ] && continue
        case " ${PIDS[*]} " in *" $pid "*) continue ;; esac
        grep -qs "$RUN_DIR" "$env" 2>/dev/null || continue
        # The WebDriver server is the harness's; the session bus and accessibility
        # daemons are desktop plumbing GTK autolaunches when there is no session bus
        # (headless runs). None is an app or agent process: stop them, don't count them.
        case "$(cat "/proc/$pid/comm" 2>/dev/null)" in
            WebKitWebDriver | dbus-launch | dbus-daemon | at-spi-bus-laun | at-spi2-registr | gnome-keyring-d)
                kill "$pid" 2>/dev/null || true
                continue ;;
        esac
        echo "$pid"
    done
}
kill "$TD_PID" 2>/dev/null || true
wait "$TD_PID" 2>/dev/null || true
# Closing the app ends no turn: the kernel service outlives its windows. Stopping it
# must leave nothing of this run behind.
stop_daemon
for _ in $(seq 50); do [ -z "$(leftovers)" ] && break; sleep 0.2; done
left="$(leftovers)"
if [ -n "$left" ]; then
    echo "processes left behind by the app:" >&2
    for pid in $left; do echo "  $pid $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | cut -c1-160)" >&2; done
    status=1
fi
if [ "$status" -ne 0 ]; then
    echo "--- tauri-driver log"; tail -50 "$RUN_DIR/tauri-driver.log" || true
    echo "--- app log"; cat "$RUN_DIR"/home/logs/weft* 2>/dev/null | tail -50 || true
    echo "--- daemon log"; tail -50 "$RUN_DIR"/home/logs/daemon.log 2>/dev/null || true
fi
echo "screenshots: $SHOTS"
exit "$status"
