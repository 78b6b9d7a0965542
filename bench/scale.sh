#!/bin/bash
# Scale: the store stays fast as history grows. Builds a database of RUNS runs of one
# experiment (4 cells x 4 variants, ~62 measured samples each: 1,000,000 samples for 1,000 runs)
# from one real run, then times with hyperfine:
#   - alloclab --version                         (the reference: process start-up alone)
#   - alloclab show RUN                          (one run's table: statistics, values, verdicts)
#   - alloclab history EXP --cell n=2 --variant b (one cell and variant, last 20 runs)
#   - alloclab history EXP --cell n=2            (one cell, all four variants)
#   - alloclab history EXP --cell n=2 --variant b --last 200
#   - alloclab history EXP --cell n=2 --relative (one cell, three variants over the baseline)
#   - alloclab history EXP [--relative]          (every cell and variant)
#   - alloclab compare RUN RUN+1 [--relative]    (two runs, cell by cell)
# Target: every one under 20 ms.
#
#   bench/scale.sh [BUILD_DIR] [RUNS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-1000}
alloclab=$build/cli/alloclab
command -v hyperfine >/dev/null || { echo "hyperfine is needed: apt-get install hyperfine" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "sqlite3 is needed: apt-get install sqlite3" >&2; exit 1; }
[[ -x $alloclab ]] || { echo "build alloclab first ($alloclab missing)" >&2; exit 1; }

work=$(mktemp -d)
[[ -n ${KEEP:-} ]] || trap 'rm -rf "$work"' EXIT
db=$work/scale.db
"$root/bench/history-db.sh" "$build" "$db" "$runs"

middle=$(( runs / 2 ))
hyperfine -N --warmup 3 --runs 30 --export-json "$work/times.json" \
    "$alloclab --version" \
    "$alloclab show $middle --db $db" \
    "$alloclab history scale --cell n=2 --variant b --db $db" \
    "$alloclab history scale --cell n=2 --db $db" \
    "$alloclab history scale --cell n=2 --variant b --last 200 --db $db" \
    "$alloclab history scale --cell n=2 --relative --db $db" \
    "$alloclab history scale --db $db" \
    "$alloclab history scale --relative --db $db" \
    "$alloclab compare $middle $((middle + 1)) --db $db" \
    "$alloclab compare $middle $((middle + 1)) --relative --db $db" >/dev/null
python3 - "$work/times.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
reference = results[0]["median"]
for r in results:
    name = r["command"].split("/alloclab ", 1)[1].split(" --db")[0]
    print(f"  {name:52s} median {r['median'] * 1e3:7.1f} ms  (+{(r['median'] - reference) * 1e3:6.1f} ms over start-up)")
PY
