#!/bin/bash
# Retention: alloclab prune on the history database of bench/scale.sh (RUNS runs of one
# experiment, ~1,000 samples each), keeping the samples of the last 10 runs. Checks that the
# file shrinks by at least 80% and that history, show, compare and fleet print exactly what they
# printed before; prints the sizes, the time prune took, and history's time (hyperfine) on the
# database before and after (the pruned runs' values are read from JSON instead of rows).
#
#   bench/prune.sh [BUILD_DIR] [RUNS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
runs=${2:-1000}
alloclab=$build/cli/alloclab
command -v hyperfine >/dev/null || { echo "hyperfine is needed: apt-get install hyperfine" >&2; exit 1; }
[[ -x $alloclab ]] || { echo "build alloclab first ($alloclab missing)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$root/bench/history-db.sh" "$build" "$work/full.db" "$runs"
sqlite3 "$work/full.db" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
cp "$work/full.db" "$work/pruned.db"

middle=$((runs / 2))
views() { # but for the lines that say what was pruned
    unpruned_views "$@" | grep -v -e '^[0-9]* of these runs are pruned' -e '^run [0-9]* was pruned '
}
unpruned_views() {
    local db=$1
    "$alloclab" history scale --db "$db"
    "$alloclab" history scale --last 200 --db "$db"
    "$alloclab" history scale --relative --last 200 --db "$db"
    "$alloclab" history scale --format csv --last "$runs" --db "$db"
    "$alloclab" show "$middle" --db "$db" | grep -v '^pruned '
    "$alloclab" compare "$middle" $((middle + 1)) --db "$db"
    "$alloclab" compare "$middle" $((middle + 1)) --relative --db "$db"
    "$alloclab" fleet scale --db "$db"
}
views "$work/full.db" >"$work/before.txt"
before=$(stat -c %s "$work/pruned.db")
start=$(date +%s.%N)
"$alloclab" prune scale --keep-last 10 --db "$work/pruned.db"
seconds=$(python3 -c "print(round($(date +%s.%N) - $start, 1))")
after=$(stat -c %s "$work/pruned.db")
views "$work/pruned.db" >"$work/after.txt"
if ! cmp -s "$work/before.txt" "$work/after.txt"; then
    diff "$work/before.txt" "$work/after.txt" | head -20
    echo "FAIL: the readers print otherwise after pruning" >&2
    exit 1
fi
echo "every reader printed the same ($(wc -l <"$work/before.txt") lines: history with its change points, show, compare, fleet)"
echo "prune: ${seconds}s; $((before / 1048576)) MiB -> $((after / 1048576)) MiB: $(( (before - after) * 100 / before ))% smaller"
(( (before - after) * 100 / before >= 80 )) || { echo "FAIL: less than 80% smaller" >&2; exit 1; }
hyperfine -N --warmup 3 --runs 20 --export-json "$work/times.json" \
    "$alloclab history scale --cell n=2 --variant b --last 200 --db $work/full.db" \
    "$alloclab history scale --cell n=2 --variant b --last 200 --db $work/pruned.db" \
    "$alloclab history scale --db $work/full.db" \
    "$alloclab history scale --db $work/pruned.db" >/dev/null
python3 - "$work/times.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    name = r["command"].split("/alloclab ", 1)[1]
    db = "pruned" if "pruned.db" in name else "full"
    print(f"  {name.split(' --db')[0]:55s} {db:6s} median {r['median'] * 1e3:6.1f} ms")
PY
