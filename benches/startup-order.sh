#!/usr/bin/env bash
# Regenerates bins/cox/startup-order.txt: the functions a headless hello
# turn runs (scripted, and over loopback HTTP against `cox-bench mock`),
# which the release link places side by side (bins/cox/build.rs).
#
#   benches/startup-order.sh
#
# Why: the kernel maps a binary's code in 64 KB windows around each page a
# start touches. Left where the compiler put them, the ~2.4 MB of code a
# turn runs is spread over most of the 17 MB of text, and every window
# counts in the peak RSS. Listed here, lld lays them out together.
#
# It builds the release binary unstripped into its own target folder (the
# names must be the linker's, v0-mangled), runs both turns under
# callgrind (valgrind), and keeps every function of the cox binary that
# ran, in the order callgrind first lists them. Names that later code
# changes remove are skipped by the linker without a word; rerun this after
# large changes to the start path (docs/benchmarks.md says when it was).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=bins/cox/startup-order.txt
target=${COX_ORDER_TARGET:-/tmp/cox-order-target}
# The release profile itself, so the names are the release build's (they
# carry each crate's build hash); only the link-time strip is left out.
COX_KEEP_SYMBOLS=1 CARGO_TARGET_DIR=$target cargo build --release -q -p cox -p cox-bench
bin=$target/release/cox
scratch=$(mktemp -d)
trap 'kill "$mock_pid" 2>/dev/null || true; rm -rf "$scratch"' EXIT
mkdir -p "$scratch/home" "$scratch/work" "$scratch/mock"

(cd "$scratch/work" && env HOME="$scratch/home" COX_HOME="$scratch/home" \
  COX_PROVIDER=scripted COX_SCENARIO="$root/tests/scenarios/hello.toml" \
  valgrind --tool=callgrind --demangle=no --callgrind-out-file="$scratch/scripted.cg" \
  "$bin" run -p "create hello.txt" --permission-mode acceptEdits >/dev/null 2>&1)

"$target/release/cox-bench" mock --dir "$scratch/mock" --log "$scratch/mock.log" >"$scratch/mock.out" &
mock_pid=$!
for _ in $(seq 50); do
  [ -s "$scratch/mock.out" ] && break
  sleep 0.1
done
url=$(sed -n 's/^listening on //p' "$scratch/mock.out")
env HOME="$scratch/home" COX_HOME="$scratch/home" ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=dummy \
  valgrind --tool=callgrind --demangle=no --callgrind-out-file="$scratch/http.cg" \
  "$bin" run -p "create hello.txt containing hi" --cwd "$scratch/mock" \
  --permission-mode acceptEdits >/dev/null 2>&1

python3 - "$bin" "$out" "$scratch/scripted.cg" "$scratch/http.cg" <<'PY'
import re, sys
binary, out, profiles = sys.argv[1], sys.argv[2], sys.argv[3:]
names, seen = [], set()
for profile in profiles:
    objects, functions, current = {}, {}, None
    for line in open(profile):
        line = line.rstrip("\n")
        m = re.match(r"^(c?ob)=\((\d+)\)(?: (.*))?$", line)
        if m:
            kind, key, name = m.groups()
            if name:
                objects[key] = name
            if kind == "ob":
                current = objects.get(key)
            continue
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line)
        if m:
            kind, key, name = m.groups()
            if name:
                functions[key] = name
            if kind == "fn" and current == binary:
                name = functions.get(key)
                if name and name not in seen:
                    seen.add(name)
                    names.append(name)
with open(out, "w") as f:
    f.write("\n".join(names) + "\n")
print(f"{out}: {len(names)} functions")
PY
