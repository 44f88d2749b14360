#!/usr/bin/env bash
# The Matrix surface's benchmark: prompt message -> first reply message, turn end ->
# final edit, edits per turn and the bot's RSS, with the bot's message limit lifted
# and under Synapse's defaults. Needs the Synapse venv (scripts/setup.sh), a built
# `weft` (WEFT_BIN or $CARGO_TARGET_DIR/debug/weft) and a Secret Service (run under
# scripts/lib/with-keyring.sh, which this does). Prints one BENCH line per mode.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
exec "$here/../../scripts/lib/with-keyring.sh" cargo test --test all bench_matrix_surface -- --ignored --nocapture --test-threads 1
