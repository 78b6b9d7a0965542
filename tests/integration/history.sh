#!/bin/bash
# alloclab history: an experiment's medians over its runs, with change points flagged on the
# series of run medians (confirmed by the next run); filters by cell, variant, metric and count.
. "$(dirname "$0")/lib.sh"

# The cost each run reports comes from a file: 10 three times, then 15 three times (a
# regression, confirmed by the run after it), then 12 twice (an improvement of 20%, confirmed).
cat >"$WORK/spec.yaml" <<YAML
experiment: trend
command: [sh, -c, 'echo "cost \$(cat $WORK/cost)" >&\$ALLOCLAB_METRICS_FD']
params: {size: ["1", "2"]}
allocators: {glibc: {}, other: {}}
metric: reported:cost
verify: none
samples: 6
YAML
for cost in 10 10 10 15 15 15 12 12; do
    echo $cost >"$WORK/cost"
    run_alloclab 0 run "$WORK/spec.yaml" --quiet
done

run_alloclab 0 history trend --cell size=1 --variant glibc
expect_contains "$OUT" "history of trend, metric reported:cost, last 8 finished runs" "header"
expect_contains "$OUT" "[size=1] glibc" "series named"
expect_eq "$(grep -c '^[0-9]' <<<"$OUT")" 8 "a point per run"
expect_contains "$OUT" "REGRESSION 1.50x [1.39, 1.62] vs 3 runs 1-3, confirmed by run 5" "regression against the runs before"
expect_contains "$OUT" "IMPROVEMENT 0.80x [0.74, 0.86] vs 3 runs 4-6, confirmed by run 8" "improvement against the runs since the change"
expect_eq "$(grep -c 'REGRESSION\|IMPROVEMENT' <<<"$OUT")" 2 "steady runs are not flagged"
[[ $OUT != *"[size=2]"* && $OUT != *"] other"* ]] || fail "filters ignored: $OUT"

run_alloclab 0 history trend --format json
python3 -c '
import json, sys
rows = json.load(sys.stdin)
assert len(rows) == 4 * 8, len(rows)
changes = [(r["cell"], r["variant"], r["run_id"], r["change"]) for r in rows if r["change"]]
assert len(changes) == 8 and {c[3] for c in changes} == {"regression", "improvement"}, changes
r4 = next(r for r in rows if r["run_id"] == 4 and r["cell"] == "size=2" and r["variant"] == "other")
assert (r4["median"], r4["baseline_runs"], r4["baseline_from"]) == (15, 3, 1) and abs(r4["ratio"] - 1.5) < 1e-12, r4
assert r4["p_value"] < 0.01 and 1 < r4["ratio_ci_low"] < 1.5 and r4["ci_low"] == 15, r4
assert (r4["tentative"], r4["confirmed_by"], r4["out_of_line"]) == (False, 5, True), r4
assert 0 < r4["between_run_spread"] < 0.02, r4' <<<"$OUT" || fail "json history"

run_alloclab 0 history trend --last 2 --cell size=2 --variant other --format csv
expect_eq "$(wc -l <<<"$OUT")" 3 "--last 2: header and two runs"
expect_contains "$OUT" "trend,size=2,other,reported:cost,8," "the latest run"
run_alloclab 0 history trend --metric wall --cell size=1 --variant glibc --format csv
expect_eq "$(cut -d, -f4 <<<"$OUT" | sort -u | head -1)" "metric" "header"
expect_eq "$(tail -n +2 <<<"$OUT" | cut -d, -f4 | sort -u)" "wall" "another metric"

# A run on another machine (as its fingerprint says) is a new baseline, never a change point.
q "UPDATE runs SET host_fingerprint = 'another', host_facts = json_set(host_facts, '$.kernel_cmdline', 'another')
   WHERE id = 7"
run_alloclab 0 history trend --cell size=1 --variant glibc
expect_contains "$OUT" "HOST CHANGED (another fingerprint): a new baseline" "host change marked"
expect_eq "$(grep -c 'IMPROVEMENT' <<<"$OUT")" 0 "no change point across hosts"
run_alloclab 0 history trend --cell size=1 --variant glibc --format csv
expect_eq "$(awk -F, '$5 == 7 {print $13, $20}' <<<"$OUT")" " true" "csv: host_changed, no change"

run_alloclab 2 history trend --cell size
expect_contains "$ERR" "NAME=VALUE" "bad cell filter"
run_alloclab 2 history
run_alloclab 2 history nosuch
expect_contains "$ERR" "no finished run of experiment 'nosuch'" "unknown experiment (a usage error, as a run id; 4 on 7fba13f)"
run_alloclab 2 history trend --variant nosuch
expect_contains "$ERR" "experiment trend has no variant 'nosuch' (its latest run, 8, has: " \
    "a variant that is not there, with those that are (on 7fba13f: 'no measured samples match', exit 0)"
run_alloclab 2 history trend --cell size=9
expect_contains "$ERR" "no cell of experiment trend matches the --cell filter (its latest run, 8, has the cells size=1, size=2)" \
    "a cell that is not there, with those that are (on a7caab1: 'no measured samples match', exit 0)"
run_alloclab 2 history trend --metric bogus
# (the hardware counters among them where the machine has a PMU)
expect_contains "$ERR" "experiment trend records no metric 'bogus' (its latest run, 8, has: reported:cost, " \
    "a metric that is not there, with those that are"
expect_contains "$ERR" "context_switches, cpu_migrations, " "a metric that is not there, with those that are"
expect_contains "$ERR" ", maxrss, page_faults, sys, user, wall)" "a metric that is not there, with those that are"

# Two hosts whose runs interleave: one series per host, and a host's change-point baseline is
# its own runs, not reset by the other's (on 4b0a99e every point was a host change, and the
# regression on B was never flagged).
q "UPDATE runs SET host_fingerprint = (SELECT host_fingerprint FROM runs WHERE id = 1) WHERE id = 7"
cat >"$WORK/two.yaml" <<YAML
experiment: two-hosts
command: [sh, -c, 'echo "cost \$(cat $WORK/cost)" >&\$ALLOCLAB_METRICS_FD']
allocators: {glibc: {}}
metric: reported:cost
verify: none
samples: 6
YAML
for cost in 10 20 10 20 10 20 10 30 10 30; do # hosts A B A B A B A B A B
    echo $cost >"$WORK/cost"
    run_alloclab 0 run "$WORK/two.yaml" --quiet
done
q "INSERT INTO hosts (hostname, kernel, cpu_model, cpus, glibc, thp)
   SELECT 'host-b', kernel, cpu_model, cpus, glibc, thp FROM hosts LIMIT 1"
q "UPDATE runs SET host_id = (SELECT id FROM hosts WHERE hostname = 'host-b'), host_fingerprint = 'b',
   machine = 'host-b' WHERE experiment_id = (SELECT id FROM experiments WHERE name = 'two-hosts') AND id % 2 = 0"
run_alloclab 0 history two-hosts
expect_contains "$OUT" "[-] glibc on $(hostname)" "host A's series"
expect_contains "$OUT" "[-] glibc on host-b" "host B's series"
expect_eq "$(grep -c 'HOST CHANGED' <<<"$OUT")" 0 "interleaved hosts are no host changes"
expect_contains "$OUT" "REGRESSION 1.50x [1.39, 1.62] vs 3 runs 10-14, confirmed by run 18" "host B's regression against its own 3 runs"
expect_eq "$(grep -c 'REGRESSION\|IMPROVEMENT' <<<"$OUT")" 1 "nothing else flagged"

# A variant whose environment or allocator changes between runs measures something else from
# then on: a new segment, said so, never a change point against the runs before (on 95de033
# the env change below was a 2x REGRESSION).
cat >"$WORK/config.yaml" <<YAML
experiment: reconfigured
command: [sh, -c, 'echo "cost \$(cat $WORK/cost)" >&\$ALLOCLAB_METRICS_FD']
allocators: {tuned: {env: {KNOB: "1"}}}
metric: reported:cost
verify: none
samples: 6
YAML
echo 10 >"$WORK/cost"
for _ in 1 2; do run_alloclab 0 run "$WORK/config.yaml" --quiet; done
sed -i 's/KNOB: "1"/KNOB: "2"/' "$WORK/config.yaml"
echo 20 >"$WORK/cost"
for _ in 1 2; do run_alloclab 0 run "$WORK/config.yaml" --quiet; done
sed -i 's/{tuned: {env: {KNOB: "2"}}}/{tuned: {preload: jemalloc, env: {KNOB: "2"}}}/' "$WORK/config.yaml"
run_alloclab 0 run "$WORK/config.yaml" --quiet
run_alloclab 0 history reconfigured
expect_contains "$OUT" 'CONFIG CHANGED (env {"KNOB":"1"} -> {"KNOB":"2"}): a new baseline' "env change marked"
expect_contains "$OUT" "CONFIG CHANGED (preload glibc -> jemalloc): a new baseline" "preload change marked"
expect_eq "$(grep -c 'REGRESSION\|IMPROVEMENT' <<<"$OUT")" 0 "no change point across configurations"
sed -i 's/^command: \[sh, -c, /command: [sh, -xc, /' "$WORK/config.yaml"
run_alloclab 0 run "$WORK/config.yaml" --quiet
run_alloclab 0 history reconfigured
expect_contains "$OUT" 'CONFIG CHANGED (command ["sh","-c",' "a command change marked (on 7d4db64 it was compared)"
run_alloclab 0 history reconfigured --format csv
expect_eq "$(python3 -c 'import csv, sys; print(sum(bool(r["config_change"]) for r in csv.DictReader(sys.stdin)))' <<<"$OUT")" 3 \
    "csv: config_change on three runs"

# Numeric parameter values in numeric order: n=2 before n=10 (as text, n=10 came first).
cat >"$WORK/numbers.yaml" <<YAML
experiment: numbers
command: [sh, -c, 'echo "cost {n}" >&\$ALLOCLAB_METRICS_FD']
params: {n: ["10", "2", "100"]}
allocators: {glibc: {}}
metric: reported:cost
verify: none
samples: 2
YAML
run_alloclab 0 run "$WORK/numbers.yaml" --quiet
run_alloclab 0 history numbers
expect_eq "$(grep -o '^\[n=[0-9]*\]' <<<"$OUT" | tr '\n' ' ')" "[n=2] [n=10] [n=100] " "series in numeric order"

# --relative: each variant's ratio to the baseline within its run. Both variants cost twice as
# much from run 4 on (the machine, or the program: every variant alike), and the candidate 50%
# more again from run 7 on. Medians see a regression at run 4; ratios see none there, and the
# candidate's regression at run 7 (on 5374ab1 history had no --relative).
cat >"$WORK/relative.yaml" <<YAML
experiment: relative
command: [sh, -c, 'echo "cost \$(cat $WORK/base)" >&\$ALLOCLAB_METRICS_FD']
allocators:
  glibc: {}
  candidate: {command: [sh, -c, 'echo "cost \$(cat $WORK/candidate)" >&\$ALLOCLAB_METRICS_FD']}
metric: reported:cost
verify: none
samples: 6
YAML
for costs in 10:11 10:11 10:11 20:22 20:22 20:22 20:33 20:33; do
    echo "${costs%:*}" >"$WORK/base"
    echo "${costs#*:}" >"$WORK/candidate"
    run_alloclab 0 run "$WORK/relative.yaml" --quiet
done
first=$(q "SELECT min(r.id) FROM runs r JOIN experiments x ON x.id = r.experiment_id WHERE x.name = 'relative'")
run_alloclab 0 history relative --variant candidate
expect_contains "$OUT" "REGRESSION 2.00x" "medians: the common step at run 4"
run_alloclab 0 history relative --relative
expect_contains "$OUT" "of each round, the variant's value over the baseline variant's (glibc in the latest run)" \
    "relative: said so"
expect_eq "$(grep -c '^\[-\]' <<<"$OUT")" 1 "relative: one series, the baseline's own left out"
expect_contains "$OUT" "[-] candidate" "relative: the candidate's series"
expect_contains "$OUT" "1.100" "relative: the ratio in a run"
expect_contains "$OUT" "REGRESSION 1.50x" "relative: the candidate's own step"
expect_contains "$OUT" "vs 6 runs $first-$((first + 5)), confirmed by run $((first + 7))" \
    "relative: at run 7, against runs 1-6 (the common step at run 4 unseen)"
expect_eq "$(grep -c 'REGRESSION\|IMPROVEMENT' <<<"$OUT")" 1 "relative: nothing else flagged"
run_alloclab 0 history relative --relative --variant candidate --format json
python3 -c '
import json, sys
rows = json.load(sys.stdin)
assert len(rows) == 8 and {r["variant"] for r in rows} == {"candidate"}, rows
assert all(r["relative_to"] == "glibc" for r in rows), rows
assert abs(rows[3]["median"] - 1.1) < 1e-12 and rows[3]["change"] is None, rows[3]
assert rows[3]["n"] == 6 and abs(rows[3]["ci_low"] - 1.1) < 1e-12, rows[3]
assert abs(rows[6]["median"] - 1.65) < 1e-12 and rows[6]["change"] == "regression", rows[6]' <<<"$OUT" ||
    fail "relative json: $OUT"
# The baseline set up otherwise: its ratios measure something else from then on.
sed -i 's/  glibc: {}/  glibc: {env: {KNOB: "1"}}/' "$WORK/relative.yaml"
run_alloclab 0 run "$WORK/relative.yaml" --quiet
run_alloclab 0 history relative --relative
expect_contains "$OUT" 'CONFIG CHANGED (baseline glibc (preload glibc, env {}) -> glibc (preload glibc, env {"KNOB":"1"})): a new baseline' \
    "relative: the baseline's change marked"
run_alloclab 2 history two-hosts --relative
expect_contains "$ERR" "no variant besides the baseline" "relative without a variant to divide"
