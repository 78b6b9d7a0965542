#!/bin/bash
# Publishing: alloclab publish on the history database of bench/scale.sh (RUNS runs of one
# experiment, ~1,000 samples each: 1,000,000 samples for 1,000 runs) made a nightly history (a
# day apart, labels, commits, 4 machines), timed with hyperfine
# against alloclab --version (process start-up alone):
#   - from scratch: every page (a report per run, the experiment's timelines and fleet, the index)
#   - after one new run (a real one): its page, its experiment's two pages and the index
#   - again with nothing new: no page
# Targets (issue 33): from scratch under 10 s, after one new run under 1 s, on 2 cores.
#
#   bench/publish.sh [BUILD_DIR] [RUNS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-1000}
alloclab=$build/cli/alloclab
command -v hyperfine >/dev/null || { echo "hyperfine is needed: apt-get install hyperfine" >&2; exit 1; }
[[ -x $alloclab ]] || { echo "build alloclab first ($alloclab missing)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$work/scale.db
"$root/bench/history-db.sh" "$build" "$db" "$runs"
# As a nightly history looks: runs a day apart, each with its label and commit, on 4 machines
# (the clone of bench/scale.sh has one start time, no label, one machine).
sqlite3 "$db" "UPDATE runs SET started_at = strftime('%Y-%m-%dT%H:%M:%fZ', started_at, '-' || ($runs - id) || ' days'),
                               label = 'nightly-' || id, commit_id = printf('%07x%033x', id * 2654435761 % 268435456, id),
                               machine = 'node' || (id % 4 + 1)"
"$alloclab" publish "$work/base" --db "$db"
"$alloclab" run "$db.yaml" --db "$db" --quiet >/dev/null 2>&1 || true # one new run
written=$(cp -a "$work/base" "$work/check" && "$alloclab" publish "$work/check" --db "$db")
echo "after one new run: $written"
[[ $written == *" 4 written" ]] || { echo "expected 4 pages written after one new run" >&2; exit 1; }

hyperfine -N --warmup 1 --runs 5 --export-json "$work/times.json" \
    --prepare true --command-name "alloclab --version" "$alloclab --version" \
    --prepare "rm -rf $work/site" --command-name "publish from scratch" \
    "$alloclab publish $work/site --db $db --quiet" \
    --prepare "sh -c 'rm -rf $work/site && cp -a $work/base $work/site'" --command-name "publish after one new run" \
    "$alloclab publish $work/site --db $db --quiet" \
    --prepare true --command-name "publish, nothing new" "$alloclab publish $work/check --db $db --quiet" >/dev/null
python3 - "$work/times.json" "$(du -sm "$work/check" | cut -f1)" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
targets = {"publish from scratch": 10, "publish after one new run": 1}
for r in results:
    target = targets.get(r["command"])
    print(f"  {r['command']:28s} median {r['median'] * 1e3:8.1f} ms  (min {r['min'] * 1e3:8.1f}, max {r['max'] * 1e3:8.1f})"
          + (f"  target < {target} s: {'met' if r['max'] < target else 'MISSED'}" if target else ""))
print(f"  the site: {sys.argv[2]} MiB")
PY
