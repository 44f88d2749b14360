#!/usr/bin/env python3
"""Runs a command and prints the milliseconds from its start to the first line of its
standard output that contains MARK (then lets it finish, its output dropped).
    first-line.py MARK [--skip N] -- COMMAND [ARGS...]
--skip N looks past the first N lines: `weft run --stream`'s first line is the
session's snapshot as the client found it, which for a resumed session whose new
turn had not begun yet is the previous turn, with the previous reply's words."""
import subprocess
import sys
import time

mark = sys.argv[1].encode()
opts = sys.argv[2:sys.argv.index("--")]
skip = int(opts[opts.index("--skip") + 1]) if "--skip" in opts else 0
cmd = sys.argv[sys.argv.index("--") + 1:]
start = time.monotonic()
proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
first = None
for n, line in enumerate(proc.stdout):
    if first is None and n >= skip and mark in line:
        first = time.monotonic()
proc.wait()
if first is None:
    sys.exit(f"no line with {mark!r} from {cmd}")
print(round((first - start) * 1000))
