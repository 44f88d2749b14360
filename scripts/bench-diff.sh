#!/usr/bin/env bash
# A 20,000-line diff in the review's diff view, in headless Chromium (issue 35): the
# time from mount to the first frame with it drawn, and every frame while it scrolls
# top to end at 240 px a frame, unified and side by side (the target: no frame over
# 50 ms). Serves ui/bench/diff.html with vite's dev server, drives the page with
# playwright-core, prints JSON and a summary. `scripts/bench-diff.sh [LINES] [RUNS]`.
set -euo pipefail
cd "$(dirname "$0")/../ui"
LINES="${1:-20000}" RUNS="${2:-3}" node bench/drive-diff.mjs
