#!/bin/bash
# Harness overhead: how alloclab's measurement of /bin/true compares with hyperfine's, measured
# in the same session on the same machine.
#
#   bench/harness-overhead.sh [BUILD_DIR] [RUNS]
#
# Reports, for RUNS samples of /bin/true:
#   - the median of a raw posix_spawn + waitpid loop (bench/spawn-loop.c): the floor
#   - hyperfine -N median wall time (the tool users reach for, no shell)
#   - alloclab median wall time per sample (its clock: spawn to reap) and the ratio
#   - alloclab's total wall time per sample, i.e. everything it does around a child too
#     (capture memfds, verification, one durable SQLite commit per sample)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-500}
alloclab=$build/cli/alloclab
command -v hyperfine >/dev/null || { echo "hyperfine is needed: apt-get install hyperfine" >&2; exit 1; }
[[ -x $alloclab ]] || { echo "build alloclab first ($alloclab missing)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/true.yaml" <<YAML
experiment: bench-true
command: [/bin/true]
allocators: {glibc: {}}
samples: $runs
warmup: 5
YAML

raw_median=$("$build/bench/spawn-loop" /bin/true "$runs")
hyperfine -N --warmup 5 --runs "$runs" --export-json "$work/hf.json" /bin/true >/dev/null 2>&1
hf_median=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["median"])' "$work/hf.json")

start=$(date +%s%N)
"$alloclab" run "$work/true.yaml" --db "$work/b.db" --quiet --format json >"$work/al.json"
total_ns=$(($(date +%s%N) - start))
al_median=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cells"][0]["results"]["glibc"]["median"])' "$work/al.json")

python3 - "$raw_median" "$hf_median" "$al_median" "$total_ns" "$runs" <<'PY'
import sys
raw, hf, al = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
total_ns, runs = int(sys.argv[4]), int(sys.argv[5])
children = runs + 5 + 1  # samples + warmups + the smoke run
print(f"/bin/true, {runs} samples")
print(f"  raw posix_spawn+waitpid loop  {raw * 1e6:9.1f} us")
print(f"  hyperfine -N median           {hf * 1e6:9.1f} us   ratio to raw {hf / raw:.2f}x")
print(f"  alloclab median (spawn-reap)  {al * 1e6:9.1f} us   ratio to raw {al / raw:.2f}x, to hyperfine {al / hf:.2f}x")
print(f"  alloclab wall per child       {total_ns / children / 1e3:9.1f} us   (incl. verification and one durable commit)")
PY
