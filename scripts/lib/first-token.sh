# The timed part of the scripts/bench-first-token*.sh scripts, one agent each: sourced
# after the script has set ROOT, RUNS, TMP and WEFT, exported the agent's environment,
# changed into the work folder, and defined
#   direct_new, direct_resume ID   the CLI by hand: a new session, a resumed one
#   weft_new, weft_resume KEY      `weft run --stream`: a new session, a resumed one
#   settle                         how long a process started ahead takes to be ready
# each printing one figure (ms from the command's start to the first line carrying
# the reply's first word, by scripts/lib/first-line.py).
# shellcheck shell=bash

FIRST="python3 $ROOT/scripts/lib/first-line.py word0"
# `weft run --stream`'s first line is the snapshot as found: for a resumed session
# whose turn had not begun, the previous reply (see first-line.py).
FIRST_WEFT="python3 $ROOT/scripts/lib/first-line.py word0 --skip 1"
# `weft agents warm` runs under python too: the warm pool matches a new session by the
# client's environment, and a python reached through a version manager's shim (pyenv)
# adds to PATH and sets its own variables, so a warm started from the shell itself was
# never a match for the timed run started by first-line.py.
warm() { python3 -c 'import os, sys; os.execvp(sys.argv[1], sys.argv[1:])' "$WEFT" agents warm "$@"; }
# Idle processes close after 1 s (so a resume is a cold start); a warm one waits 60 s.
export WEFT_AGENT_IDLE_SECS=1 WEFT_WARM_POOL_SECS=60
"$WEFT" trust --yes >/dev/null

# RUNS rounds of: the CLI new and resumed (ID), weft new without and with a process
# started ahead for AGENT, weft resumed (KEY) after an idle close without and with one.
first_token_rounds() {
    local agent="$1" id="$2" key="$3" f
    for f in direct_new direct_resume weft_cold_new weft_warm_new weft_cold_resume weft_warm_resume; do
        : >"$TMP/$f"
    done
    for _ in $(seq "$RUNS"); do
        direct_new >>"$TMP/direct_new"
        direct_resume "$id" >>"$TMP/direct_resume"
        weft_new >>"$TMP/weft_cold_new"
        warm "$agent" >/dev/null; settle
        "$WEFT" daemon status --json >"$TMP/status.json"
        weft_new >>"$TMP/weft_warm_new"
        sleep 2   # the idle close
        weft_resume "$key" >>"$TMP/weft_cold_resume"
        sleep 2
        warm --session "$key" >/dev/null; settle
        weft_resume "$key" >>"$TMP/weft_warm_resume"
        sleep 2
    done
}

median() { sort -n "$1" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2))}'; }
row() { printf '%-40s median %5s ms  (all: %s)\n' "$1" "$(median "$TMP/$2")" "$(sort -n "$TMP/$2" | tr '\n' ' ')"; }

# The medians, the ratios against the CLI (new: NEW_LABEL, resumed: RESUME_LABEL), and
# the warm pool's memory; VERSION names the CLI.
first_token_report() {
    local version="$1" new_label="$2" resume_label="$3"
    echo "runs: $RUNS; prompt to the first text ($version)"
    row "$new_label, new session" direct_new
    row "$resume_label" direct_resume
    row "weft run, new session, no warm process" weft_cold_new
    row "weft run, new session, warm pool" weft_warm_new
    row "weft run, resumed after idle close, cold" weft_cold_resume
    row "weft run, resumed after idle close, warm" weft_warm_resume
    awk -v w="$(median "$TMP/weft_warm_new")" -v d="$(median "$TMP/direct_new")" -v l="$new_label" \
        'BEGIN { printf "new session: weft warm / %s = %.2f (target <= 0.5)\n", l, w / d }'
    awk -v w="$(median "$TMP/weft_warm_resume")" -v d="$(median "$TMP/direct_resume")" -v l="$resume_label" \
        'BEGIN { printf "resumed:     weft warm / %s = %.2f\n", l, w / d }'
    python3 -c 'import json,sys
w = json.load(open(sys.argv[1])).get("warm", [])
print("warm pool before the prompt: %d process(es), %s MB" % (len(w), " + ".join("%.0f" % (p["rssBytes"] / 1048576) for p in w) or "0"))' "$TMP/status.json"
}
