#!/usr/bin/env bash
# scripts/load.sh [SECONDS] [ECHO] [CLAUDE]: ECHO echo sessions at full speed and CLAUDE
# real claude sessions against the scripted Anthropic server (default 60 s, 16 and 4)
# streaming at once through one real daemon; two clients subscribed to all, one more that
# reads nothing until the end (it must be resynced). Prints turns, patches, resyncs, the
# daemon's and the clients' memory (sampled every second, with the slope after warm-up)
# and whether every client's snapshots equal the daemon's and the store's.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export PATH="$ROOT/.tools/agents/node_modules/.bin:$PATH"
# Two builds: `--bin weft` would also restrict weft-faults to a bin named weft (it has
# none), leaving a stale weft-load in place.
cargo build --quiet -p weft-cli --bin weft
cargo build --quiet -p weft-faults --bins
exec "$CARGO_TARGET_DIR/debug/weft-load" "$@"
