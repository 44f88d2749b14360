#!/usr/bin/env bash
# Known advisories against every crate in Cargo.lock (cargo-audit over the RustSec
# advisory database). The database is a git repository; where its host is reachable,
# cargo-audit fetches it itself. Where it is not (the build machines), pass a local
# clone of it, and its date is printed beside the findings, since a stale database
# finds only what was known then:
#   scripts/audit.sh [ADVISORY_DB_DIR]        (or WEFT_ADVISORY_DB=DIR)
# Exits non-zero on a vulnerability; unmaintained and unsound crates are warnings,
# listed (the README's security section says which ones Weft has and why).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DB="${1:-${WEFT_ADVISORY_DB:-}}"
command -v cargo-audit >/dev/null 2>&1 || cargo install cargo-audit --locked
cd "$ROOT"
if [ -n "$DB" ]; then
    [ -d "$DB/crates" ] || { echo "$DB is not a clone of the RustSec advisory database" >&2; exit 2; }
    echo "advisory database: $DB, last commit $(git -C "$DB" log -1 --format=%cs 2>/dev/null || echo unknown)"
    exec cargo audit --db "$DB" --no-fetch --stale
fi
exec cargo audit
