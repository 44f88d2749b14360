#!/usr/bin/env bash
# scripts/bench-hosts.sh [RUNS] [DELTAS]: the SSH transport to a host (docs/hosts.md),
# against a real sshd this script starts on a free loopback port for a throwaway user
# (as crates/cli/tests/suite/hosts_rig.rs does; needs root and openssh-server):
#   - first contact with a fresh host: `weft hosts add` (copy this weft there, hash it,
#     start nothing yet), wall time;
#   - a DELTAS-delta echo turn (default 20,000; the echo agent streams one delta per
#     word, with no pause: WEFT_ECHO_DELAY_MS=0 here, and through sshd's SetEnv on the
#     host) run with `weft run --json` locally and with `weft --host` through ssh:
#     median wall times of RUNS runs each (default 5) and their ratio (target ≤ 1.05);
#   - reconnect → resynced: a new client (`weft wait --json`) to the whole snapshot of
#     a session of 10,000 tool calls (seeded by the e2e's seed_big_session example into
#     each store before its daemon first runs), locally and through ssh;
#   - the idle cost of a connected host: CPU time over 30 s and RSS of the local ssh
#     processes (the shared connection and a client's `ssh … weft proxy`), and of the
#     host's `weft proxy` and daemon, while one client stays connected doing nothing.
# Uses target/release/weft when it exists, else target/debug/weft (WEFT_BIN overrides).
# Prints one line per figure; leaves no user, process or file behind.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${1:-5}"
DELTAS="${2:-20000}"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
WEFT="${WEFT_BIN:-}"
[ -n "$WEFT" ] || { [ -x "$TARGET/release/weft" ] && WEFT="$TARGET/release/weft"; } || WEFT="$TARGET/debug/weft"
[ -x "$WEFT" ] || { echo "no weft binary at $WEFT (cargo build -p weft-cli)" >&2; exit 1; }
[ "$(id -u)" = 0 ] && [ -x /usr/sbin/sshd ] || { echo "needs root and openssh-server (scripts/setup.sh setup_ssh_hosts)" >&2; exit 1; }

DIR="$(mktemp -d /tmp/weft-bench-hosts.XXXXXX)"
USER_NAME="weft-b-$(printf %x $$)"
SSHD_PID=""
cleanup() {
    WEFT_HOME="$DIR/home" "$WEFT" daemon stop >/dev/null 2>&1 || true
    ssh -F "$DIR/config" -o "ControlPath=$DIR/home/ssh/cm-%C" -O exit bench-host >/dev/null 2>&1 || true
    [ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null || true
    pkill -KILL -u "$USER_NAME" 2>/dev/null || true
    for _ in $(seq 50); do pgrep -u "$USER_NAME" >/dev/null || break; sleep 0.1; done
    userdel -r -f "$USER_NAME" 2>/dev/null || true
    rm -rf "$DIR"
}
trap cleanup EXIT

mkdir -p "$DIR/home" /run/sshd
useradd -m -s /bin/bash "$USER_NAME"
usermod -p '*' "$USER_NAME"
ssh-keygen -q -t ed25519 -N "" -f "$DIR/id"
ssh-keygen -q -t ed25519 -N "" -f "$DIR/hostkey"
install -d -o "$USER_NAME" -g "$USER_NAME" -m 700 "/home/$USER_NAME/.ssh"
install -o "$USER_NAME" -g "$USER_NAME" -m 600 "$DIR/id.pub" "/home/$USER_NAME/.ssh/authorized_keys"
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
printf 'ListenAddress 127.0.0.1\nPort %s\nHostKey %s\nPidFile %s\nUsePAM no\nStrictModes no\nAllowUsers %s\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nSetEnv WEFT_ECHO_DELAY_MS=0\n' \
    "$PORT" "$DIR/hostkey" "$DIR/sshd.pid" "$USER_NAME" > "$DIR/sshd.conf"
/usr/sbin/sshd -D -e -f "$DIR/sshd.conf" 2>"$DIR/sshd.log" &
SSHD_PID=$!
for _ in $(seq 100); do grep -q "Server listening" "$DIR/sshd.log" 2>/dev/null && break; sleep 0.1; done
printf 'Host bench-host\n  HostName 127.0.0.1\n  Port %s\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking accept-new\n  LogLevel ERROR\n' \
    "$PORT" "$USER_NAME" "$DIR/id" "$DIR/known_hosts" > "$DIR/config"

w() { env -u XDG_RUNTIME_DIR -u WEFT_HOST WEFT_HOME="$DIR/home" WEFT_SSH_CONFIG="$DIR/config" WEFT_ECHO_DELAY_MS=0 "$WEFT" "$@"; }
now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "weft: $WEFT ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
t0="$(now)"; w hosts add bench "bench-host" >/dev/null; t1="$(now)"
printf 'first contact (weft hosts add, fresh host): %.2f s (binary %s MB)\n' "$(echo "$t1 - $t0" | bc)" "$(( $(stat -c %s "$WEFT") >> 20 ))"

# A session of 10,000 tool calls on each side, written into each store before its daemon
# first runs (the e2e's seed): `weft wait --json` on it, from nothing to its whole
# snapshot, is a reconnect and a resync (RECONNECT below).
SEED="$TARGET/debug/examples/seed_big_session"
LKEY=""; RKEY=""
if [ -x "$SEED" ]; then
    mkdir -p "$DIR/big"
    LKEY="$(WEFT_HOME="$DIR/home" "$SEED" "$DIR/big" 10000 0)"
    install -o "$USER_NAME" -g "$USER_NAME" -m 755 "$SEED" "/home/$USER_NAME/seed"
    install -d -o "$USER_NAME" -g "$USER_NAME" "/home/$USER_NAME/big"
    RKEY="$(runuser -u "$USER_NAME" -- env HOME="/home/$USER_NAME" WEFT_HOME="/home/$USER_NAME/.weft" "/home/$USER_NAME/seed" "/home/$USER_NAME/big" 10000 0)"
fi

PROMPT="$(python3 -c 'import sys; print(" ".join(["word"] * int(sys.argv[1])))' "$DELTAS")"
run_turn() { # [--host bench]: the wall time of one turn, checked to have streamed every word
    local t0 t1 out
    t0="$(now)"
    out="$(w "$@" run --agent echo --json "$PROMPT")"
    t1="$(now)"
    # The prompt and the reply each hold every word.
    [ "$(printf %s "$out" | grep -o 'word' | wc -l)" -ge $(( 2 * DELTAS )) ] || { echo "a turn lost words" >&2; exit 1; }
    echo "$t1 - $t0" | bc
}
# One of each first: the daemons started, the shared connection up.
run_turn >/dev/null; run_turn --host bench >/dev/null
: > "$DIR/local"; : > "$DIR/ssh"
for _ in $(seq "$RUNS"); do run_turn >> "$DIR/local"; run_turn --host bench >> "$DIR/ssh"; done
L="$(median < "$DIR/local")"; S="$(median < "$DIR/ssh")"
printf '%s-delta echo turn, median of %s: local %.3f s, through ssh %.3f s, ratio %.3f (runs: local %s; ssh %s)\n' \
    "$DELTAS" "$RUNS" "$L" "$S" "$(echo "$S / $L" | bc -l)" "$(tr '\n' ' ' < "$DIR/local")" "$(tr '\n' ' ' < "$DIR/ssh")"

if [ -n "$RKEY" ]; then
    : > "$DIR/rl"; : > "$DIR/rs"
    for _ in $(seq "$RUNS"); do
        t0="$(now)"; w wait --json "$LKEY" > "$DIR/snap"; t1="$(now)"; echo "$t1 - $t0" | bc >> "$DIR/rl"
        t0="$(now)"; w --host bench wait --json "$RKEY" > "$DIR/snap"; t1="$(now)"; echo "$t1 - $t0" | bc >> "$DIR/rs"
    done
    printf 'RECONNECT: a new client to its whole snapshot (weft wait --json), a session of 10,000 tool calls (%s KB of JSON), median of %s: local %.3f s, through ssh %.3f s (runs: local %s; ssh %s)\n' \
        "$(( $(stat -c %s "$DIR/snap") >> 10 ))" "$RUNS" "$(median < "$DIR/rl")" "$(median < "$DIR/rs")" "$(tr '\n' ' ' < "$DIR/rl")" "$(tr '\n' ' ' < "$DIR/rs")"
fi

# Idle: one link connected (`ssh … weft proxy` over the shared connection, as a
# client's), nothing running, for 30 s.
BIN="$(python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["hosts"][0]; print(h["home"] + "/.local/share/weft/" + h["installed"]["version"] + "/weft")' "$DIR/home/hosts.json")"
mkfifo "$DIR/in"
ssh -F "$DIR/config" -o "ControlPath=$DIR/home/ssh/cm-%C" -T bench-host "$BIN" proxy < "$DIR/in" >/dev/null 2>&1 &
LINK=$!
exec 9>"$DIR/in"
sleep 3
ticks() { # total utime+stime of the pids given, in clock ticks
    local t=0 p
    for p in "$@"; do
        [ -r "/proc/$p/stat" ] || continue
        t=$(( t + $(awk '{print $14 + $15}' "/proc/$p/stat") ))
    done
    echo "$t"
}
rss_kb() { local t=0 p; for p in "$@"; do t=$(( t + $(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0) )); done; echo "$t"; }
LOCAL_SSH="$(pgrep -f "ssh .*bench-host" | tr '\n' ' ')"
REMOTE="$(pgrep -u "$USER_NAME" -f 'weft (proxy|daemon)' | tr '\n' ' ')"
# shellcheck disable=SC2086
a1="$(ticks $LOCAL_SSH)"; b1="$(ticks $REMOTE)"
sleep 30
# shellcheck disable=SC2086
a2="$(ticks $LOCAL_SSH)"; b2="$(ticks $REMOTE)"
HZ="$(getconf CLK_TCK)"
# shellcheck disable=SC2086
printf 'idle connected host over 30 s: local ssh client of the link (%s process; the shared connection not counted) %s ms CPU, RSS %s MB; host weft proxy + daemon (%s processes) %s ms CPU, RSS %s MB\n' \
    "$(echo $LOCAL_SSH | wc -w)" "$(( (a2 - a1) * 1000 / HZ ))" "$(( $(rss_kb $LOCAL_SSH) / 1024 ))" \
    "$(echo $REMOTE | wc -w)" "$(( (b2 - b1) * 1000 / HZ ))" "$(( $(rss_kb $REMOTE) / 1024 ))"
exec 9>&-
wait "$LINK" || true
