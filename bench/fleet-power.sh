#!/bin/bash
# Fleet power: a 10% slowdown injected on one host is flagged there and nowhere else. Two hosts
# (host-a, host-b: this machine, the second database renamed as another host would name it) each
# run an experiment whose candidate variant does as much work as the baseline on host-a and 10%
# more on host-b (the workload's spin count: real children, wall time); their bundles are merged
# and `alloclab fleet` gives each host's within-run verdict. Repeated for SEEDS seeds. Target
# (issue 13): slower on host-b in >= 19 of 20, on host-a in 0 of 20.
#
#   bench/fleet-power.sh [BUILD_DIR] [SEEDS]   (BUILD_DIR configured with -DBUILD_TESTING=ON)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
seeds=${2:-20}
. "$root/bench/workload.sh" "$build"

spec() { # CANDIDATE_SPIN SEED
    cat <<YAML
experiment: power
command: ["$workload", spin, "$spin"]
allocators:
  baseline: {}
  candidate: {command: ["$workload", spin, "$1"]}
samples: 15
seed: $2
YAML
}
flagged_a=0 flagged_b=0
for seed in $(seq "$seeds"); do
    spec "$spin" "$seed" >"$work/a.yaml"
    spec "$((spin * 11 / 10))" "$seed" >"$work/b.yaml"
    "$alloclab" run "$work/a.yaml" --db "$work/a-$seed.db" --quiet >/dev/null
    "$alloclab" run "$work/b.yaml" --db "$work/b-$seed.db" --quiet >/dev/null
    sqlite3 "$work/a-$seed.db" "UPDATE hosts SET hostname = 'host-a'"
    sqlite3 "$work/b-$seed.db" "UPDATE hosts SET hostname = 'host-b'; UPDATE runs SET host_fingerprint = 'b'"
    for h in a b; do
        "$alloclab" export all --bundle "$work/$h-$seed.bundle" --db "$work/$h-$seed.db" >/dev/null
    done
    "$alloclab" import "$work/a-$seed.bundle" "$work/b-$seed.bundle" --db "$work/fleet-$seed.db" >/dev/null
    verdicts=$("$alloclab" fleet power --db "$work/fleet-$seed.db" --format csv |
        awk -F, 'NR > 1 {printf "%s=%s(%.3f) ", $4, $12, $8}')
    [[ $verdicts == *"host-a=slower"* ]] && flagged_a=$((flagged_a + 1))
    [[ $verdicts == *"host-b=slower"* ]] && flagged_b=$((flagged_b + 1))
    echo "seed $seed: $verdicts"
done
echo "slowdown flagged on host-b (10% slower there) in $flagged_b of $seeds seeded runs; on host-a (no slowdown) in $flagged_a of $seeds"
