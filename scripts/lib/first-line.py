#!/usr/bin/env python3
"""Runs a command and prints the milliseconds from its start to the first line of its
standard output that contains MARK (then lets it finish, its output dropped).
    first-line.py MARK -- COMMAND [ARGS...]"""
import subprocess
import sys
import time

mark = sys.argv[1].encode()
cmd = sys.argv[sys.argv.index("--") + 1:]
start = time.monotonic()
proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
first = None
for line in proc.stdout:
    if first is None and mark in line:
        first = time.monotonic()
proc.wait()
if first is None:
    sys.exit(f"no line with {mark!r} from {cmd}")
print(round((first - start) * 1000))
