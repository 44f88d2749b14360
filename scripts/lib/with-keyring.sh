#!/usr/bin/env bash
# Runs a command inside a D-Bus session of its own with an unlocked GNOME Keyring
# (the Secret Service the accounts keep their secrets in). The keyring lives in a
# throwaway folder, unlocked with a fixed password fed on stdin (CI has no stdin and
# no one to type one); the user's own keyrings are never touched.
#   scripts/lib/with-keyring.sh cargo test -p weft-accounts
set -euo pipefail
if [ "${WEFT_IN_KEYRING_SESSION:-}" = 1 ]; then
    keyring_dir="$(mktemp -d)"
    trap 'rm -rf "$keyring_dir"' EXIT
    mkdir -m 700 -p "$keyring_dir/keyrings"
    eval "$(printf 'weft-test\n' | XDG_DATA_HOME="$keyring_dir" \
        gnome-keyring-daemon --unlock --components=secrets)"
    export GNOME_KEYRING_CONTROL
    # The keyring daemon leaves with the session's bus, which dbus-run-session ends.
    status=0
    "$@" || status=$?
    exit "$status"
fi
if ! command -v dbus-run-session >/dev/null 2>&1 || ! command -v gnome-keyring-daemon >/dev/null 2>&1; then
    echo "with-keyring: dbus-run-session or gnome-keyring-daemon is missing (scripts/setup.sh setup_secret_service)" >&2
    exit 1
fi
WEFT_IN_KEYRING_SESSION=1 exec dbus-run-session -- "$0" "$@"
