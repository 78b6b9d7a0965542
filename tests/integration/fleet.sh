#!/bin/bash
# alloclab fleet: one experiment measured on two hosts (the second host's runs come from another
# database, renamed there as another machine would have named them, through a bundle): per host
# the within-run ratio of each variant to its baseline, and with hosts as the unit the geometric
# mean, range, and on how many hosts each verdict holds. Samples of different hosts never pool.
. "$(dirname "$0")/lib.sh"

# The cost each variant reports comes from a file per variant: on host A the candidate costs
# what the baseline does, on host B 10% more.
cat >"$WORK/spec.yaml" <<YAML
experiment: fleet
command: [sh, -c, 'echo "cost \$(cat $WORK/cost-\$WHICH)" >&\$ALLOCLAB_METRICS_FD']
params: {size: ["1", "2"]}
allocators:
  base: {env: {WHICH: base}}
  candidate: {env: {WHICH: candidate}}
metric: reported:cost
verify: none
samples: 6
YAML
echo 100 >"$WORK/cost-base"
echo 100 >"$WORK/cost-candidate"
run_alloclab 0 run "$WORK/spec.yaml" --quiet
echo 110 >"$WORK/cost-candidate"
run_alloclab 0 run "$WORK/spec.yaml" --quiet --db "$WORK/b.db"
sqlite3 "$WORK/b.db" "UPDATE hosts SET hostname = 'host-b'; UPDATE runs SET host_fingerprint = 'bbbbbbbbbbbbbbbb'"
run_alloclab 0 export latest --bundle "$WORK/b.bundle" --db "$WORK/b.db"
run_alloclab 0 import "$WORK/b.bundle"

run_alloclab 0 fleet fleet
expect_contains "$OUT" "fleet: fleet on 2 hosts: the latest finished run of each, metric reported:cost" "header"
expect_contains "$OUT" "host-b  2    $(q "SELECT uuid FROM runs WHERE id = 2")" "host B and its run"
row=$(grep '^size=1 ' <<<"$OUT")
expect_contains "$row" "1.10x [1.10, 1.10] higher" "host B's ratio and verdict"
expect_contains "$row" "1.00x [1.00, 1.00] same" "host A's: the interval within +-min_effect"
expect_contains "$row" "1.05x           1.00-1.10  higher on 1, same on 1 of 2 hosts" "hosts as the unit"

run_alloclab 0 fleet fleet --format json
python3 -c '
import json, math, sys
f = json.load(sys.stdin)
assert [h["host"] for h in f["hosts"]] == sorted(["host-b", sys.argv[1]]), f["hosts"]
assert len(f["ratios"]) == 2 * 2, f["ratios"]
s = next(x for x in f["summary"] if x["cell"] == "size=2")
assert s["hosts"] == 2 and s["verdicts"] == {"inconclusive": 0, "same": 1, "lower": 0, "higher": 1}, s
assert abs(s["geomean_ratio"] - math.sqrt(1.1)) < 1e-9 and s["min_ratio"] == 1 and s["max_ratio"] == 1.1, s
' "$(hostname)" <<<"$OUT" || fail "fleet json: $OUT"
run_alloclab 0 fleet fleet --format csv
expect_eq "$(grep -c ",higher$" <<<"$OUT")" 2 "csv: a row per cell, variant and host"

# Two hosts' runs stay not comparable run against run.
run_alloclab 7 compare 1 2
expect_contains "$OUT" "NOT COMPARABLE" "compare across hosts"
run_alloclab 4 fleet nosuch
expect_contains "$ERR" "no finished run of experiment 'nosuch'" "unknown experiment"
