#!/usr/bin/env bash
# scripts/faults.sh [N] [SEED] [--only KIND,KIND]: injects N faults (default 50, seed 1)
# into turns through a real `weft daemon` and prints the table of faults by kind x
# outcome (tests/faults). Exits non-zero when any fault lost an event, left a process,
# ended dishonestly, broke the next prompt or left a client with another snapshot.
# Root (or CAP_SYS_ADMIN) lets it mount the small tmpfs the disk faults need; without,
# those are reported as skipped with the reason.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export PATH="$ROOT/.tools/agents/node_modules/.bin:$PATH"
# Two builds: `--bin weft` would also restrict weft-faults to a bin named weft (it has
# none), leaving a stale weft-faults in place.
cargo build --quiet -p weft-cli --bin weft
cargo build --quiet -p weft-faults --bins
exec "$CARGO_TARGET_DIR/debug/weft-faults" "$@"
