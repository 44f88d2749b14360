#!/usr/bin/env bash
# scripts/bench-flood.sh: the daemon's resident memory under a flood of 200,000
# requests on one connection that reads no reply until it has sent them all
# (tests/faults/tests/hostile.rs), before the flood, at its peak and after it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
cargo build --quiet -p weft-cli --bin weft
/usr/bin/time -f "wall %e s" cargo test --quiet -p weft-faults --test hostile \
    a_flood_on_one_connection -- --nocapture 2>&1 | grep -E "^flood rss_kib|^wall|test result"
