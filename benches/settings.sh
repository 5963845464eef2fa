#!/usr/bin/env bash
# What setting a session up costs, with the settings a Claude Code user
# has (cox's config, ~/.claude/settings.json, a project's .cox/config.toml,
# .claude/settings.json, .claude/settings.local.json, .mcp.json,
# ~/.claude.json): the files one `cox run` opens (strace), and the
# scripted hello turn's wall time and peak RSS (cox-bench, interleaved).
#   benches/settings.sh [BEFORE_BIN_DIR]
# BEFORE_BIN_DIR: another release build's target/release to compare with
# (its `cox` is run in turn with this one's, ROUNDS rounds of 10 runs).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p cox -p cox-bench
repo=$PWD
after=$repo/target/release
before=${1:-}
rounds=${ROUNDS:-3}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
home=$scratch/home
work=$scratch/work
mkdir -p "$home/.claude" "$work/.cox" "$work/.claude" "$work/.git"
printf '[permissions]\nallow = ["Bash(cargo test:*)"]\n\n[budget]\nsession_usd = 5.0\n' >"$home/config.toml"
printf '{"permissions": {"deny": ["Read(./.env)"], "defaultMode": "acceptEdits"}, "env": {"FOO": "1"}}' \
  >"$home/.claude/settings.json"
printf '{"mcpServers": {}}' >"$home/.claude.json"
printf '[permissions]\ndeny = ["Bash(rm -rf:*)"]\n' >"$work/.cox/config.toml"
printf '{"permissions": {"ask": ["Bash(git push:*)"]}}' >"$work/.claude/settings.json"
printf '{}' >"$work/.claude/settings.local.json"
printf '{"mcpServers": {}}' >"$work/.mcp.json"

run() { # BIN_DIR, then cox run's own flags
  local bin=$1
  shift
  HOME=$home COX_HOME=$home COX_MANAGED_SETTINGS=$scratch/managed.json COX_PROVIDER=scripted \
    COX_SCENARIO="$repo/tests/scenarios/hello.toml" "$@"
}

opens() { # BIN_DIR
  local trace=$scratch/trace
  (cd "$work" && run "$1" strace -f -qq -e trace=open,openat,openat2 -o "$trace" \
    "$1/cox" run -p "create hello.txt containing hi" --permission-mode acceptEdits \
    --output-format json >/dev/null)
  for f in "$home/config.toml" "$home/.claude/settings.json" "$home/.claude.json" \
    "$work/.cox/config.toml" "$work/.claude/settings.json" \
    "$work/.claude/settings.local.json" "$work/.mcp.json"; do
    printf '  %-40s %s\n' "${f#"$scratch"/}" \
      "$(grep -F "\"$f\"" "$trace" | grep -vc ENOENT || true)"
  done
}

if command -v strace >/dev/null; then
  echo "== files opened by one cox run (this build)"
  opens "$after"
  if [ -n "$before" ]; then
    echo "== the same, $before"
    opens "$before"
  fi
fi

hello() { # BIN_DIR LABEL
  echo "-- $2"
  (cd "$work" && run "$1" "$after/cox-bench" exec 10 -- "$1/cox" run \
    -p "create hello.txt containing hi" --permission-mode acceptEdits \
    --output-format stream-json)
}

echo
echo "== the scripted hello turn, with these settings (10 runs a round)"
for i in $(seq "$rounds"); do
  [ -n "$before" ] && hello "$before" "before, round $i"
  hello "$after" "this build, round $i"
done
