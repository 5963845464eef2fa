#!/usr/bin/env bash
# What MCP servers cost a headless run: the scripted hello turn's wall time
# and peak RSS with 0, 1, 3 and 10 stdio servers configured (the test
# server tests/mcp/fake-server.js under node, sandboxed as a person's
# servers are), and with one that takes 5 s to answer its handshake (the
# run waits for it: a headless run waits for its servers, up to
# MCP_TIMEOUT, 30 s by default).
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
