#!/usr/bin/env bash
# The Claude Agent SDK's query() round trip with cox as its CLI, against
# the same call with Claude Code, on the same loopback mock model server,
# in the same run:
#   benches/agent_sdk.sh [RUNS]      (default 10 measured runs each)
#
# The task is the hello turn `cox-bench mock` answers (a write, then a short
# text). The SDK (PyPI claude-agent-sdk, in a virtualenv) and Claude Code
# (npm, its native binary) are installed outside the repository, as
# benches/peers.sh does; nothing but loopback is reached.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
claude_version=2.1.197
sdk_version=0.2.189
peers=${COX_PEERS_DIR:-$HOME/.cache/cox-peers}
sdk_python=${COX_CI_CACHE:-$HOME/.cache/cox-ci}/agent-sdk-$sdk_version

cargo build --release -q -p cox -p cox-bench
bin=$PWD/target/release

if [ ! -x "$sdk_python/bin/python" ] || ! "$sdk_python/bin/python" -c 'import claude_agent_sdk' 2>/dev/null; then
  python3 -m venv "$sdk_python"
  "$sdk_python/bin/pip" install --quiet --disable-pip-version-check "claude-agent-sdk==$sdk_version"
fi
mkdir -p "$peers"
if [ "$(node -p "require('$peers/node_modules/@anthropic-ai/claude-code/package.json').version" 2>/dev/null || true)" != "$claude_version" ]; then
  [ -f "$peers/package.json" ] || echo '{"private": true}' >"$peers/package.json"
  (cd "$peers" && npm install --no-audit --no-fund --silent "@anthropic-ai/claude-code@$claude_version")
fi
claude=$peers/node_modules/@anthropic-ai/claude-code/bin/claude.exe

scratch=$(mktemp -d)
mock_pid=
cleanup() {
  [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
mkdir -p "$scratch/work"
"$bin/cox-bench" mock --dir "$scratch/work" --log "$scratch/mock.log" >"$scratch/mock.out" &
mock_pid=$!
for _ in $(seq 100); do
  [ -s "$scratch/mock.out" ] && break
  sleep 0.05
done
url=$(sed -n 's/^listening on //p' "$scratch/mock.out")
[ -n "$url" ] || { echo "the mock did not start" >&2; exit 1; }

"$sdk_python/bin/python" benches/agent_sdk.py "$runs" "$scratch/work" "$url" \
  "cox $("$bin/cox" --version | awk '{print $2}')=$bin/cox" \
  "Claude Code $claude_version=$claude"
