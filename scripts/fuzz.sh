#!/usr/bin/env bash
# scripts/fuzz.sh [RUNS] [TARGET...]: coverage-guided fuzzing of every parser Weft feeds
# untrusted bytes to (tests/fuzz: claude_lines codex_lines gemini_lines acp_lines
# line_reader patch frames library_files shell patch_ts), RUNS executions each (default
# 100000), with cargo-fuzz on
# the stable toolchain (--sanitizer none: libFuzzer's coverage guidance without ASan,
# which needs nightly). Each target starts from its corpus (tests/fuzz/corpus/<target>:
# the recorded fixtures); new coverage goes to a scratch folder, and a crash is
# copied into the corpus, where `cargo test -p weft-fuzz-targets` replays it from then on.
# FUZZ_SECONDS=N caps each target's run at N seconds as well (the executions reached are
# what the table reports). Inputs are capped at 64 KB, but for the two targets whose cost
# grows with the input and whose structure fits in less: `shell` (a command line; 4 KB)
# and `library_files` (session files of JSON lines; 16 KB). Uncapped, their corpora grew
# to inputs of tens of KB and ran at about a thousand executions a second. Prints executions and crashes per target; exits 1 if any
# target crashed. patch_ts runs the UI's TypeScript applier under node (one process
# per fuzzer, fed JSON lines): it needs `npm ci` in ui/ first. Do not stop a fuzzer
# (SIGSTOP) for longer than libFuzzer's per-input `-timeout` (1,200 s): its watchdog
# counts wall time, reports the input it was on as a timeout, and this script would
# keep that input as a regression.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUNS="${1:-100000}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(claude_lines codex_lines gemini_lines acp_lines line_reader patch frames library_files shell patch_ts)
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}/fuzz"
cd "$ROOT/tests/fuzz"
cargo +stable fuzz build --fuzz-dir fuzz --sanitizer none -O >/dev/null
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failed=0
printf '| target | executions | crashes | corpus seeds | seconds |\n|---|---:|---:|---:|---:|\n'
for t in "${TARGETS[@]}"; do
    mkdir -p "$scratch/$t"
    log="$scratch/$t.log"
    start=$(date +%s)
    crashes=0
    case "$t" in
        shell) max_len=4096 ;;
        library_files) max_len=16384 ;;
        *) max_len=65536 ;;
    esac
    if ! cargo +stable fuzz run --fuzz-dir fuzz --sanitizer none -O "$t" "$scratch/$t" "corpus/$t" -- \
        -runs="$RUNS" ${FUZZ_SECONDS:+-max_total_time="$FUZZ_SECONDS"} -max_len="$max_len" -rss_limit_mb=2048 -artifact_prefix="$scratch/$t-" >"$log" 2>&1; then
        crashes=1
        failed=1
        for a in "$scratch/$t"-crash-* "$scratch/$t"-oom-* "$scratch/$t"-timeout-*; do
            [ -e "$a" ] && cp "$a" "corpus/$t/$(basename "$a" | sed "s/^$t-//")" && echo "kept $a as a regression in corpus/$t" >&2
        done
        tail -20 "$log" >&2
    fi
    # A crashed run has no "Done" line (and grep's no-match must not end the script).
    execs=$(grep -oE 'Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' | tail -1 || true)
    [ -n "$execs" ] || execs=$(grep -oE '^#[0-9]+' "$log" | tr -d '#' | tail -1 || true)
    printf '| %s | %s | %s | %s | %s |\n' "$t" "${execs:-0}" "$crashes" "$(ls "corpus/$t" | wc -l)" "$(( $(date +%s) - start ))"
done
exit "$failed"
