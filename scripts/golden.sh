#!/bin/bash
# Refactoring aid: what alloclab shows of a fixed database, to compare before and after a change
# that must not change any output (show/history JSON and text, the HTML report, exports).
#
#   scripts/golden.sh BUILD_DIR DB OUT_DIR
#
# When DB does not exist, it is made first with BUILD_DIR's binaries: runs that between them
# use most recorded run settings (fixed and auto samples, failures and exclusions, calibrate,
# aa_check, reported metrics, pinned CPUs, label and commit, a quick run, an import of
# hyperfine's JSON). Outputs: show in every format, the HTML report, history, fleet, compare,
# exports (stats, samples, hyperfine's layout), and show of a bundle of every run imported into
# a database of its own. Not covered: resumed and daemon-submitted runs.
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
    # expect STATUS CMD...: runs CMD, stops unless it exits STATUS (the crashing variant excluded: 9)
    expect() {
        local want=$1 rc=0
        shift
        "$@" >/dev/null 2>&1 || rc=$?
        [[ $rc == "$want" ]] || { echo "golden.sh: $* exited $rc, not $want" >&2; exit 1; }
    }
    expect 9 "$alloclab" run "$dir/fixed.yaml" --quiet --label first --commit abc123
    expect 9 "$alloclab" run "$dir/fixed.yaml" --quiet
    expect 0 "$alloclab" run "$dir/auto.yaml" --quiet
    expect 0 "$alloclab" quick -a glibc,mimalloc -r 3 -w 0 --quiet -- "$workload" sleep 2
    command -v hyperfine >/dev/null || { echo "golden.sh: hyperfine is needed (apt-get install hyperfine)" >&2; exit 1; }
    hyperfine --runs 3 --export-json "$dir/hf.json" 'sleep 0.01' 'sleep 0.02' >/dev/null 2>&1
    expect 0 "$alloclab" import "$dir/hf.json" --experiment imported
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
for id in $ids; do
    for format in csv json; do
        "$alloclab" export "$id" --what samples --format "$format" >"$out/samples-$id.$format" 2>&1 || true
    done
    "$alloclab" export "$id" --what hyperfine >"$out/hyperfine-$id.json" 2>&1 || true
done
# A bundle of every run, imported into a database of its own: what that one shows of them.
scratch=$(mktemp -d)
"$alloclab" export $ids --bundle "$scratch/all.bundle" >/dev/null 2>&1 &&
    ALLOCLAB_DB="$scratch/merged.db" "$alloclab" import "$scratch/all.bundle" >/dev/null 2>&1 &&
    for id in $(sqlite3 "$scratch/merged.db" "SELECT id FROM runs ORDER BY id"); do
        ALLOCLAB_DB="$scratch/merged.db" "$alloclab" show "$id" --format json |
            grep -v '"run_id"' >"$out/merged-show-$id.json" 2>&1 || true
    done
rm -rf "$scratch"
echo "$(ls "$out" | wc -l) outputs in $out"
