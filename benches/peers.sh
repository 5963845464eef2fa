#!/usr/bin/env bash
# cox against Claude Code and Codex on the same turn, the same loopback mock
# model server, in the same run:
#   benches/peers.sh [RUNS]          (default 20 measured runs each)
#
# The turn: "create hello.txt containing hi", answered by `cox-bench mock`
# with one write (cox's `write`, Claude Code's `Write`, Codex's
# `apply_patch`) and then a short text. cox and Claude Code speak Anthropic
# Messages to it, Codex OpenAI Responses. The mock checks every write landed
# (and removes the file for the next run); the script prints how many did.
#
# The peers are installed with npm into $COX_PEERS_DIR (default
# ~/.cache/cox-peers), outside the repository, at the versions below, and
# run as their native binaries (not through node). Each runs offline in a
# clean environment (`env -i`) with a temporary HOME; nothing but loopback
# is reached. Wall times are min/median over RUNS runs after one unmeasured
# warm-up; peak RSS is the largest ru_maxrss (the process and its children).
#
# COX_BASELINE=/path/to/an/older/cox adds that binary to the same run, for
# before/after figures taken in one sitting.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
claude_version=2.1.197
codex_version=0.171.0
peers=${COX_PEERS_DIR:-$HOME/.cache/cox-peers}
prompt="create hello.txt containing hi"

cargo build --release -q -p cox -p cox-bench
bin=$PWD/target/release

installed() {
  node -p "require('$peers/node_modules/$1/package.json').version" 2>/dev/null || true
}
mkdir -p "$peers"
if [ "$(installed @anthropic-ai/claude-code)" != "$claude_version" ] ||
  [ "$(installed @openai/codex)" != "$codex_version" ]; then
  echo "installing the peers into $peers (npm)"
  [ -f "$peers/package.json" ] || echo '{"private": true}' >"$peers/package.json"
  (cd "$peers" && npm install --no-audit --no-fund --silent \
    "@anthropic-ai/claude-code@$claude_version" "@openai/codex@$codex_version")
fi
# Claude Code's postinstall puts its native binary in place of the stub;
# Codex's node launcher would only spawn the binary below.
claude=$peers/node_modules/@anthropic-ai/claude-code/bin/claude.exe
codex=$(ls "$peers"/node_modules/@openai/codex-linux-*/vendor/*/bin/codex | head -1)

# Not under /tmp: Codex refuses to set up its helpers under a temp dir.
scratch=$(mktemp -d "$peers/run.XXXXXX")
mock_pid=
cleanup() {
  [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
work=$scratch/work
mkdir -p "$work" "$scratch/home-cox" "$scratch/home-claude" "$scratch/home-codex/.codex"

"$bin/cox-bench" mock --dir "$work" --log "$scratch/mock.log" >"$scratch/mock.out" &
mock_pid=$!
for _ in $(seq 100); do
  [ -s "$scratch/mock.out" ] && break
  sleep 0.05
done
url=$(sed -n 's/^listening on //p' "$scratch/mock.out")
[ -n "$url" ] || { echo "the mock did not start" >&2; exit 1; }

cat >"$scratch/home-codex/.codex/config.toml" <<EOF
model = "gpt-5.5"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "$url/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
EOF

clean=(env -i "PATH=$PATH" LANG=C.UTF-8)
cox_cmd=("${clean[@]}" "HOME=$scratch/home-cox" "COX_HOME=$scratch/home-cox/.cox"
  "ANTHROPIC_BASE_URL=$url" ANTHROPIC_API_KEY=dummy
  "$bin/cox" run -p "$prompt" --cwd "$work" --permission-mode acceptEdits
  --output-format stream-json)
claude_cmd=("${clean[@]}" "HOME=$scratch/home-claude"
  "ANTHROPIC_BASE_URL=$url" ANTHROPIC_API_KEY=dummy
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1
  DISABLE_ERROR_REPORTING=1 DISABLE_AUTOUPDATER=1 DISABLE_BUG_COMMAND=1
  "$claude" -p "$prompt" --output-format stream-json --verbose
  --permission-mode acceptEdits)
codex_cmd=("${clean[@]}" "HOME=$scratch/home-codex"
  "CODEX_HOME=$scratch/home-codex/.codex" MOCK_API_KEY=dummy
  "$codex" exec --skip-git-repo-check -s workspace-write
  -c 'approval_policy="never"' "$prompt")

verified() {
  curl -s "$url/mock/stats" | sed 's/.*"verified":\([0-9]*\).*/\1/'
}

# key -> "median min rss"
declare -A figures
measure() {
  local key=$1 label=$2
  shift 2
  echo
  echo "== $label"
  (cd "$work" && "$@" </dev/null >/dev/null 2>&1) || true # warm-up
  local before out
  before=$(verified)
  out=$(cd "$work" && "$bin/cox-bench" exec "$runs" -- "$@" </dev/null 2>/dev/null)
  echo "$out" | grep -v '^command:\|cox-bench)'
  echo "writes verified by the mock: $(($(verified) - before)) of $runs"
  figures[$key]=$(echo "$out" | awk '
    /^runs:/ { gsub(",", ""); min = $5; med = $8 }
    /^peak RSS \(command\)/ { rss = $4 }
    END { print med, min, rss }')
}

echo "mock at $url; $runs measured runs each"
measure cox "$("$bin/cox" --version)" "${cox_cmd[@]}"
if [ -n "${COX_BASELINE:-}" ]; then
  mkdir -p "$scratch/home-base"
  measure base "baseline $COX_BASELINE" "${clean[@]}" "HOME=$scratch/home-base" \
    "COX_HOME=$scratch/home-base/.cox" "ANTHROPIC_BASE_URL=$url" ANTHROPIC_API_KEY=dummy \
    "$COX_BASELINE" run -p "$prompt" --cwd "$work" --permission-mode acceptEdits \
    --output-format stream-json
fi
measure claude "Claude Code $claude_version" "${claude_cmd[@]}"
measure codex "Codex $codex_version" "${codex_cmd[@]}"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
echo
echo "== headless hello turn against the peers (medians; min against min)"
against() {
  local who=$1 name=$2
  read -r cox_med cox_min cox_rss <<<"${figures[$who]}"
  for peer in claude codex; do
    read -r med min rss <<<"${figures[$peer]}"
    label=$([ "$peer" = claude ] && echo "Claude Code" || echo "Codex")
    printf '%-9s vs %-12s wall %s× (%s ms against %s ms; min %s×), peak RSS %s MB against %s MB\n' \
      "$name" "$label" "$(ratio "$cox_med" "$med")" "$cox_med" "$med" \
      "$(ratio "$cox_min" "$min")" "$cox_rss" "$rss"
  done
}
against cox cox
[ -n "${COX_BASELINE:-}" ] && against base baseline

echo
echo "== --version"
version() {
  local out
  out=$("$bin/cox-bench" exec 50 -- "$@" </dev/null 2>/dev/null)
  echo "$out" | awk '/^runs:/ { gsub(",", ""); print $8, $5 } /^peak RSS \(command\)/ { print $4 }' | tr '\n' ' '
}
read -r v_cox v_cox_min v_cox_rss <<<"$(version "${clean[@]}" "HOME=$scratch/home-cox" "$bin/cox" --version)"
read -r v_codex v_codex_min v_codex_rss <<<"$(version "${clean[@]}" "HOME=$scratch/home-codex" \
  "CODEX_HOME=$scratch/home-codex/.codex" "$codex" --version)"
read -r v_claude v_claude_min v_claude_rss <<<"$(version "${clean[@]}" "HOME=$scratch/home-claude" "$claude" --version)"
printf '%-12s median %s ms, min %s ms, %s MB\n' cox "$v_cox" "$v_cox_min" "$v_cox_rss" \
  "Codex" "$v_codex" "$v_codex_min" "$v_codex_rss" "Claude Code" "$v_claude" "$v_claude_min" "$v_claude_rss"
echo "cox --version: $(ratio "$v_cox" "$v_codex")× Codex's, $(ratio "$v_cox" "$v_claude")× Claude Code's (medians)"
if [ -n "${COX_BASELINE:-}" ]; then
  read -r v_base v_base_min v_base_rss <<<"$(version "${clean[@]}" "HOME=$scratch/home-base" "$COX_BASELINE" --version)"
  printf '%-12s median %s ms, min %s ms, %s MB (%s× Codex'"'"'s)\n' baseline "$v_base" "$v_base_min" \
    "$v_base_rss" "$(ratio "$v_base" "$v_codex")"
fi
