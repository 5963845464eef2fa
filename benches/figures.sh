#!/usr/bin/env bash
# The figures cox promises, from a release build. Run from anywhere:
#   benches/figures.sh
# Wall times are min/median over repeated runs; peak RSS is the child's
# ru_maxrss from wait4. See docs/benchmarks.md for the targets. The
# comparison with Claude Code and Codex is benches/peers.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p cox -p cox-headless -p cox-bench
bin=$PWD/target/release
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/work"

echo "== cox --version"
"$bin/cox-bench" exec 50 -- "$bin/cox" --version

echo
echo "== headless scripted hello turn (one write, then text)"
COX_HOME="$scratch/home" COX_PROVIDER=scripted COX_SCENARIO="$PWD/tests/scenarios/hello.toml" \
  "$bin/cox-bench" exec 30 -- "$bin/cox" run -p "create hello.txt containing hi" \
  --cwd "$scratch/work" --permission-mode acceptEdits --output-format stream-json

echo
echo "== the same turn through cox-headless"
COX_HOME="$scratch/home" COX_PROVIDER=scripted COX_SCENARIO="$PWD/tests/scenarios/hello.toml" \
  "$bin/cox-bench" exec 30 -- "$bin/cox-headless" run -p "create hello.txt containing hi" \
  --cwd "$scratch/work" --permission-mode acceptEdits --output-format stream-json

echo
echo "== creating a new cox.db (schema and all)"
"$bin/cox-bench" db 50

echo
echo "== core overhead per scripted turn (no tools)"
"$bin/cox-bench" turns 2000

echo
echo "== 10,000 streamed deltas through the session and the stream-json writer"
"$bin/cox-bench" deltas 10000

echo
echo "== SSE decoding, both wire formats (criterion; events/s is thrpt)"
cargo bench -q -p cox-providers --bench sse 2>/dev/null | grep -E '^sse/|thrpt'

echo
echo "== the first request of the hello session, bytes per part"
cargo test -q -p cox --test providers the_first_request -- --nocapture 2>&1 | grep 'first request'

echo
echo "== TUI: one frame with a long answer on screen (criterion)"
cargo bench -q -p cox-tui --bench frame 2>/dev/null | grep -E 'frame with|time:'

echo
echo "== hooks: one \`true\` PreToolUse hook over spawning it; a folder with none; a read-only turn with and without"
"$bin/cox-bench" hooks 200

echo
echo "== the sandbox: \`true\` unconfined, under bwrap and under the Landlock helper; the probe"
"$bin/cox-bench" sandbox 100

echo
echo "== a 100-command scripted session (bash \`true\` x 100), sandboxed and not"
{
  for _ in $(seq 100); do
    printf '[[turn]]\n[[turn.tool_call]]\nname = "bash"\ninput = { command = "true" }\n\n'
  done
  printf '[[turn]]\ntext = "done"\n'
} > "$scratch/hundred.toml"
for mode in workspace-write danger-full-access; do
  echo "-- --sandbox $mode"
  COX_HOME="$scratch/home" COX_PROVIDER=scripted COX_SCENARIO="$scratch/hundred.toml" \
    "$bin/cox-bench" exec 5 -- "$bin/cox" run -p "run true a hundred times" --cwd "$scratch/work" \
    --permission-mode bypassPermissions --sandbox "$mode" --output-format json
done

echo
echo "== checkpoints: snapshots, a file-tool and a shell call's extra time, a 100-file rewind (10,000 files)"
"$bin/cox-bench" checkpoints 10000

echo
echo "== MCP: three stdio servers' startup, one that never answers, what a call adds over bare JSON-RPC"
"$bin/cox-bench" mcp 200

echo
echo "== binary sizes"
for b in cox cox-headless cox-sandbox-exec; do
  printf '%-14s %8d bytes\n' "$b" "$(stat -c %s "$bin/$b")"
done
