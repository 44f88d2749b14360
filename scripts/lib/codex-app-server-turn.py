#!/usr/bin/env python3
"""One turn through `codex app-server` alone, as Weft's codex driver runs it (the same
handshake and the same `-c` overrides, no Weft in between): initialize, initialized,
thread/start, turn/start, then every line read (and dropped) until turn/completed;
stdin closed and the process waited for. The baseline scripts/bench-codex.sh sets
beside `weft run --agent codex`, since `codex exec --json` prints no deltas at all.

    codex-app-server-turn.py CODEX BASE_URL KEY_ENV PROMPT
"""
import json
import subprocess
import sys


def main():
    codex, url, key_env, prompt = sys.argv[1:5]
    overrides = [
        "features.default_mode_request_user_input=true",
        "suppress_unstable_features_warning=true",
        'model_provider="weft"',
        'model_providers.weft.name="Weft"',
        f"model_providers.weft.base_url={json.dumps(url)}",
        'model_providers.weft.wire_api="responses"',
        f"model_providers.weft.env_key={json.dumps(key_env)}",
        'model="mock-model"',
    ]
    args = [codex, "app-server"]
    for c in overrides:
        args += ["-c", c]
    proc = subprocess.Popen(
        args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        bufsize=1 << 18,
    )

    def send(msg):
        proc.stdin.write((json.dumps(msg) + "\n").encode())
        proc.stdin.flush()

    def answer(want):
        for line in proc.stdout:
            if line.startswith(b'{"id":%d,' % want) or b'"id":%d,"result"' % want in line:
                return json.loads(line)
        sys.exit(f"codex app-server exited before answering request {want}")

    send({"id": 1, "method": "initialize", "params": {
        "clientInfo": {"name": "bench", "title": "bench", "version": "0"},
        "capabilities": {"experimentalApi": True, "requestAttestation": False}}})
    answer(1)
    send({"method": "initialized"})
    send({"id": 2, "method": "thread/start", "params": {
        "cwd": ".", "approvalPolicy": "never", "sandbox": "danger-full-access"}})
    thread = answer(2)["result"]["thread"]["id"]
    send({"id": 3, "method": "turn/start", "params": {
        "threadId": thread,
        "input": [{"type": "text", "text": prompt, "text_elements": []}]}})
    for line in proc.stdout:
        if line.startswith(b'{"method":"turn/completed"'):
            break
    else:
        sys.exit("codex app-server exited before the turn completed")
    proc.stdin.close()
    proc.wait()


if __name__ == "__main__":
    main()
