#!/bin/bash
# Fleet power: a 10% slowdown injected on one machine is flagged there and nowhere else, and
# machines with the same effect are not said to disagree. Three machines (host-a, host-b,
# host-c: this machine, each database filed under its own machine name and fingerprint) each run
# an experiment whose candidate variant does as much work as the baseline on host-a and host-c
# and 10% more on host-b (the workload's spin count: real children, wall time); their bundles are
# merged and `alloclab fleet` gives each machine's within-run verdict, and over a and b, and a
# and c, whether the machines disagree (Cochran's Q on their ratios, stats/pool.h). Repeated for
# SEEDS seeds. Targets: slower on host-b in >= 19 of 20, on host-a in 0 of 20 (issue 13); a and b
# said to disagree in most seeds (power), a and c in at most 1 of 20 (false alarms, 5% level).
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
flagged_a=0 flagged_b=0 disagree_ab=0 disagree_ac=0
# disagree PAIR: whether fleet over those two machines says they disagree
disagree() {
    "$alloclab" import "$work/$1-$seed.bundle" "$work/$2-$seed.bundle" --db "$work/$1$2-$seed.db" >/dev/null
    "$alloclab" fleet power --db "$work/$1$2-$seed.db" --format json |
        python3 -c 'import json, sys; print(int(json.load(sys.stdin)["summary"][0]["heterogeneity"]["p"] < 0.05))'
}
for seed in $(seq "$seeds"); do
    spec "$spin" "$seed" >"$work/a.yaml"
    spec "$((spin * 11 / 10))" "$seed" >"$work/b.yaml"
    for h in a b c; do
        "$alloclab" run "$work/$([[ $h == b ]] && echo b || echo a).yaml" --db "$work/$h-$seed.db" --quiet \
            --machine "host-$h" >/dev/null
        sqlite3 "$work/$h-$seed.db" "UPDATE runs SET host_fingerprint = '$h'"
        "$alloclab" export all --bundle "$work/$h-$seed.bundle" --db "$work/$h-$seed.db" >/dev/null
    done
    "$alloclab" import "$work/a-$seed.bundle" "$work/b-$seed.bundle" --db "$work/fleet-$seed.db" >/dev/null
    verdicts=$("$alloclab" fleet power --db "$work/fleet-$seed.db" --format csv |
        awk -F, 'NR > 1 {printf "%s=%s(%.3f) ", $4, $14, $10}')
    [[ $verdicts == *"host-a=slower"* ]] && flagged_a=$((flagged_a + 1))
    [[ $verdicts == *"host-b=slower"* ]] && flagged_b=$((flagged_b + 1))
    ab=$(disagree a b) ac=$(disagree a c)
    disagree_ab=$((disagree_ab + ab)) disagree_ac=$((disagree_ac + ac))
    echo "seed $seed: $verdicts disagree: a-b $ab, a-c $ac"
done
echo "slowdown flagged on host-b (10% slower there) in $flagged_b of $seeds seeded runs; on host-a (no slowdown) in $flagged_a of $seeds"
echo "machines said to disagree: host-a and host-b (10% apart) in $disagree_ab of $seeds; host-a and host-c (the same) in $disagree_ac of $seeds"
