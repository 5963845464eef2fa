#!/usr/bin/env bash
# What MCP servers cost a headless run: the scripted hello turn's wall time
# and peak RSS with 0, 1, 3 and 10 stdio servers configured (the test
# server tests/mcp/fake-server.js under node, sandboxed as a person's
# servers are), and with one that takes 5 s to answer its handshake (the
# run waits for it: a headless run waits for its servers, up to
# MCP_TIMEOUT, 30 s by default); then, where a person types (`cox acp`,
# an editor's first prompt), the time from `session/new` to the first
# prompt's answer with a quick server and one that takes 5 s: the prompt
# must not wait past the first second, and the quick server's tools must
# be in it.
#   benches/mcp-startup.sh [RUNS]
# The wall time is the whole run: setup, the servers' handshakes (all at
# once), the turn, the end. The peak RSS is cox-bench's wait4 figure for
# the cox process, whose waited-for children (the servers it ends) count
# in it: the largest of them, not their sum.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
runs=${1:-10}
cargo build --release -q -p cox -p cox-bench
bin=$repo/target/release
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/work"

config() { # N [START_MS]
  local n=$1 start=${2:-0}
  : >"$scratch/home/config.toml"
  for i in $(seq "$n"); do
    printf '[mcp_servers.s%s]\ncommand = "node"\nargs = ["%s"]\nenv = { FAKE_START_MS = "%s" }\n\n' \
      "$i" "$repo/tests/mcp/fake-server.js" "$start" >>"$scratch/home/config.toml"
  done
}

measure() { # LABEL
  echo "== $1"
  (cd "$scratch/work" && HOME=$scratch/home COX_HOME=$scratch/home COX_PROVIDER=scripted \
    COX_SCENARIO="$repo/tests/scenarios/hello.toml" \
    "$bin/cox-bench" exec "$runs" -- "$bin/cox" run -p "create hello.txt containing hi" \
    --permission-mode acceptEdits --output-format stream-json | grep -E "wall|RSS \(command")
}

mkdir -p "$scratch/home"
for n in 0 1 3 10; do
  config "$n"
  measure "$n stdio server(s)"
done
config 1 5000
measure "one server answering after 5 s"

echo "== over ACP: session/new to the first prompt's answer, a quick server and a 5 s one"
python3 - "$bin/cox" "$repo" "$scratch" "$runs" <<'PY'
import json, os, statistics, subprocess, sys, time
cox, repo, scratch, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
script = os.path.join(repo, "tests/mcp/fake-server.js")
open(os.path.join(scratch, "home/config.toml"), "w").close()
times = []
for _ in range(runs):
    env = dict(os.environ, HOME=f"{scratch}/home", COX_HOME=f"{scratch}/home",
               COX_PROVIDER="scripted", COX_SCENARIO=f"{repo}/tests/scenarios/mcp_late.toml")
    agent = subprocess.Popen([cox, "acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, env=env)
    n = 0
    def call(method, params):
        global n
        n += 1
        agent.stdin.write(json.dumps({"jsonrpc": "2.0", "id": n, "method": method,
                                      "params": params}) + "\n")
        agent.stdin.flush()
        while True:
            message = json.loads(agent.stdout.readline())
            if message.get("id") == n and "method" not in message:
                return message
    call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    server = lambda name, start: {"name": name, "command": "node", "args": [script],
                                  "env": [{"name": "FAKE_START_MS", "value": start}]}
    started = time.monotonic()
    new = call("session/new", {"cwd": f"{scratch}/work", "mcpServers": [
        server("quick", "0"), server("late", "5000")]})
    answer = call("session/prompt", {"sessionId": new["result"]["sessionId"],
                                     "prompt": [{"type": "text", "text": "one"}]})
    times.append((time.monotonic() - started) * 1000)
    assert answer.get("result", {}).get("stopReason") == "end_turn", answer
    agent.stdin.close()
    agent.kill()
    agent.wait()
print(f"runs: {runs}, first answer min {min(times):.0f} ms, median {statistics.median(times):.0f} ms, max {max(times):.0f} ms")
PY
