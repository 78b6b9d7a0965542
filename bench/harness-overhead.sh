#!/bin/bash
# Harness overhead: how alloclab's measurement of /bin/true compares with hyperfine's and with a
# raw spawn loop, on the same machine in the same session, over several interleaved rounds so
# that a single lucky (or unlucky) run is not the figure.
#
#   bench/harness-overhead.sh [BUILD_DIR] [RUNS] [ROUNDS]
#
# Each round measures RUNS samples of /bin/true with each contestant, in an order that rotates
# from round to round (none always goes first):
#   - raw: a posix_spawn + waitpid loop (bench/spawn-loop.c), the floor
#   - hyperfine -N (the tool users reach for, no shell)
#   - alloclab: its median per sample (its clock: spawn to reap), and its whole wall time per
#     child (capture memfds, verification, one durable SQLite commit per sample)
# Prints each round's medians and ratios, then the median ratio over the rounds with its range.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-500}
rounds=${3:-5}
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

measure() { # CONTESTANT ROUND: appends "ROUND CONTESTANT MEDIAN_S [WALL_PER_CHILD_S]" to results
    case $1 in
    raw) echo "$2 raw $("$build/bench/spawn-loop" /bin/true "$runs")" ;;
    hyperfine)
        hyperfine -N --warmup 5 --runs "$runs" --export-json "$work/hf.json" /bin/true >/dev/null 2>&1
        echo "$2 hyperfine $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["median"])' "$work/hf.json")"
        ;;
    alloclab)
        local start end
        start=$(date +%s%N)
        "$alloclab" run "$work/true.yaml" --db "$work/b.db" --quiet --format json >"$work/al.json"
        end=$(date +%s%N)
        echo "$2 alloclab $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cells"][0]["results"]["glibc"]["median"])' "$work/al.json") $(((end - start) / (runs + 6)))"
        ;;
    esac >>"$work/results"
}
contestants=(raw hyperfine alloclab)
for ((r = 0; r < rounds; r++)); do
    for ((k = 0; k < 3; k++)); do
        measure "${contestants[(r + k) % 3]}" "$r"
    done
done

python3 - "$work/results" "$runs" "$rounds" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
runs, rounds = int(sys.argv[2]), int(sys.argv[3])
by = {}
for r, name, median, *rest in rows:
    by.setdefault(int(r), {})[name] = (float(median), int(rest[0]) / 1e9 if rest else None)
print(f"/bin/true, {runs} samples per contestant, {rounds} rounds (order rotating)")
print("round   raw us  hyperfine us  alloclab us  alloclab/hyperfine  alloclab/raw  alloclab wall/child us")
to_hf, to_raw, wall = [], [], []
for r in sorted(by):
    raw, hf, (al, per_child) = by[r]["raw"][0], by[r]["hyperfine"][0], by[r]["alloclab"]
    to_hf.append(al / hf); to_raw.append(al / raw); wall.append(per_child)
    print(f"{r:5d} {raw * 1e6:8.1f} {hf * 1e6:13.1f} {al * 1e6:12.1f} {al / hf:19.3f} {al / raw:13.3f} {per_child * 1e6:22.1f}")
spread = lambda x: f"median {statistics.median(x):.3f} (range {min(x):.3f}-{max(x):.3f})"
print(f"alloclab / hyperfine -N: {spread(to_hf)}")
print(f"alloclab / raw loop:     {spread(to_raw)}")
print(f"alloclab wall per child: median {statistics.median(wall) * 1e6:.1f} us (incl. verification and one durable commit)")
PY
