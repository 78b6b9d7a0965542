#!/bin/bash
# Refactoring aid: what alloclab shows of a fixed database, to compare before and after a change
# that must not change any output (show/history JSON and text, the HTML report, exports).
#
#   scripts/golden.sh BUILD_DIR DB OUT_DIR
#
# When DB does not exist, it is made first with BUILD_DIR's binaries: runs that between them
# use every recorded run setting (fixed and auto samples, failures and exclusions, calibrate,
# aa_check, reported metrics, pinned CPUs, label and commit, an import of hyperfine's JSON).
# Then every output is written to OUT_DIR. Make the database with the old build, write OUT_DIR
# with the old and with the new build, and `diff -r` the two.
set -euo pipefail

build=$(realpath "$1")
db=$(realpath -m "$2")
out=$3
alloclab="$build/cli/alloclab"
workload="$build/tests/workloads/alloclab-workload"
export ALLOCLAB_DB="$db"

make_fixtures() {
    local dir
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' RETURN
    cat >"$dir/fixed.yaml" <<YAML
experiment: fixed
command: ["$workload", sleep, "{ms}"]
params: {ms: ["5", "20"]}
allocators:
  glibc: {}
  jemalloc: {preload: jemalloc, env: {MALLOC_CONF: "dirty_decay_ms:500"}}
  crashing: {command: ["$workload", crash]}
baseline: glibc
samples: 4
warmup: 1
verify: none
calibrate: true
aa_check: true
cpus: auto
YAML
    cat >"$dir/auto.yaml" <<YAML
experiment: auto
command: ["$workload", report, ops, "{v}"]
params: {v: ["10", "20"]}
metrics: {ops: {unit: ops/s, better: higher}}
metric: reported:ops
allocators: {glibc: {}, mimalloc: {preload: mimalloc}}
samples: auto
verify: stdout
verify_ignore: ["^x"]
outliers: exclude
correction: bh
YAML
    "$alloclab" run "$dir/fixed.yaml" --quiet --label first --commit abc123 || true
    "$alloclab" run "$dir/fixed.yaml" --quiet || true
    "$alloclab" run "$dir/auto.yaml" --quiet || true
    if command -v hyperfine >/dev/null; then
        hyperfine --runs 3 --export-json "$dir/hf.json" 'sleep 0.01' 'sleep 0.02' >/dev/null
        "$alloclab" import "$dir/hf.json" --experiment imported || true
    fi
}

[[ -e $db ]] || make_fixtures
mkdir -p "$out"
ids=$(sqlite3 "$db" "SELECT id FROM runs ORDER BY id")
for id in $ids; do
    for format in json table csv markdown; do
        "$alloclab" show "$id" --format "$format" >"$out/show-$id.$format" 2>&1 || echo "exit $?" >>"$out/show-$id.$format"
    done
    "$alloclab" report "$id" -o "$out/report-$id.html" >/dev/null 2>&1 || echo "exit $?" >"$out/report-$id.err"
    "$alloclab" export "$id" --what stats --format json >"$out/stats-$id.json" 2>&1 || true
done
for experiment in $(sqlite3 "$db" "SELECT name FROM experiments ORDER BY name"); do
    for format in json table; do
        "$alloclab" history "$experiment" --format "$format" >"$out/history-$experiment.$format" 2>&1 || true
    done
    "$alloclab" fleet "$experiment" --format json >"$out/fleet-$experiment.json" 2>&1 || true
done
first=$(sqlite3 "$db" "SELECT min(id) FROM runs WHERE experiment_id = (SELECT id FROM experiments WHERE name = 'fixed')")
second=$(sqlite3 "$db" "SELECT max(id) FROM runs WHERE experiment_id = (SELECT id FROM experiments WHERE name = 'fixed')")
"$alloclab" compare "$first" "$second" --format json >"$out/compare.json" 2>&1 || true
"$alloclab" report "$second" --compare "$first" --history -o "$out/report-compare.html" >/dev/null 2>&1 || true
"$alloclab" runs >"$out/runs.txt" 2>&1 || true
echo "$(ls "$out" | wc -l) outputs in $out"
