#!/bin/bash
# alloclab fleet: one experiment measured on two machines (the second machine's runs come from
# another database, filed there under its own machine name and with another host fingerprint,
# through bundles): per machine the within-run ratio of each variant to its baseline, and with
# machines as the unit the geometric mean, range, and on how many machines each verdict holds,
# over all and per hardware class. Samples of different machines never pool. Runs are read in
# the order they ran, whatever order their bundles arrived in; a fleet job's runs are found by
# their Slurm cluster and job, and --expect-machines fails when fewer machines finished.
. "$(dirname "$0")/lib.sh"

# The cost each variant reports comes from a file per variant: on this machine the candidate
# costs what the baseline does, on host-b 10% more, then 20% more.
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
# The same job id in two Slurm clusters: two jobs.
SLURM_JOB_ID=77 SLURM_CLUSTER_NAME=alpha SLURM_JOB_PARTITION=night SLURMD_NODENAME=n1 \
    run_alloclab 0 run "$WORK/spec.yaml" --quiet
echo 110 >"$WORK/cost-candidate"
run_alloclab 0 run "$WORK/spec.yaml" --quiet --db "$WORK/b.db" --machine host-b
echo 120 >"$WORK/cost-candidate"
SLURM_JOB_ID=77 SLURM_CLUSTER_NAME=beta ALLOCLAB_MACHINE=host-b run_alloclab 0 run "$WORK/spec.yaml" --quiet --db "$WORK/b.db"
expect_eq "$(sqlite3 "$WORK/b.db" "SELECT group_concat(machine) FROM runs")" "host-b,host-b" "--machine and ALLOCLAB_MACHINE"
run_alloclab 2 run "$WORK/spec.yaml" --quiet --db "$WORK/b.db" --machine "host b"
expect_contains "$ERR" "--machine 'host b' must be 1-64 letters, digits, '_', '-' or '.'" "a bad machine name"
ALLOCLAB_MACHINE=$'x\ty' run_alloclab 2 quick -a glibc --db "$WORK/b.db" -- true
expect_contains "$ERR" "ALLOCLAB_MACHINE 'x\x09y' must be" "a bad ALLOCLAB_MACHINE, shown escaped"
expect_eq "$(sqlite3 "$WORK/b.db" "SELECT count(*) FROM runs")" 2 "nothing run for them"
# host-b is another machine: another fingerprint, and another kernel (its hardware class).
sqlite3 "$WORK/b.db" "UPDATE runs SET host_fingerprint = 'bbbbbbbbbbbbbbbb'; UPDATE hosts SET kernel = '9.9.9-other'"
run_alloclab 0 export 1 --bundle "$WORK/b1.bundle" --db "$WORK/b.db"
run_alloclab 0 export 2 --bundle "$WORK/b2.bundle" --db "$WORK/b.db"
# The newer bundle first: its run gets the lower local number.
run_alloclab 0 import "$WORK/b2.bundle"
run_alloclab 0 import "$WORK/b1.bundle"
newer=$(sqlite3 "$DB" "ATTACH '$WORK/b.db' AS b; SELECT r.id FROM runs r JOIN b.runs x ON x.uuid = r.uuid WHERE x.id = 2")
expect_eq "$newer" 2 "the newer run arrived first"

run_alloclab 0 fleet fleet
expect_contains "$OUT" "fleet: fleet on 2 machines: the latest finished run of each by start time, metric reported:cost" "header"
expect_contains "$OUT" "host-b   $(hostname)" "host-b and the host it ran on"
expect_contains "$(grep '^host-b ' <<<"$OUT")" "$(q "SELECT uuid FROM runs WHERE id = 2")" "host-b's latest run by start time"
expect_contains "$(grep '^host-b ' <<<"$OUT")" "beta:77" "its Slurm cluster and job"
expect_contains "$(grep "^$(hostname) " <<<"$OUT")" "alpha:77 on n1 (night)" "this machine's Slurm job, node and partition"
expect_contains "$OUT" "class B: " "two hardware classes"
expect_contains "$OUT" "kernel 9.9.9-other" "host-b's class"
row=$(grep '^size=1 ' <<<"$OUT")
expect_contains "$row" "1.20x [1.20, 1.20] higher" "host-b's ratio and verdict, of its latest run"
expect_contains "$row" "1.00x [1.00, 1.00] same" "this machine's: the interval within +-min_effect"
# (t over 2 machines: 12.7 x the spread of their log ratios; they measured without spread and differ)
expect_contains "$row" "1.10x [0.34, 3.49]       1.00-1.20  higher on 1, same on 1 of 2 machines; machines disagree (heterogeneity p < 0.001)" \
    "machines as the unit: the geometric mean with its interval over machines, and their disagreement"
expect_contains "$(grep '^host-b ' <<<"$OUT")" "bbbbbbbbbbbb  +-0%" "a machine's noise: the change its run could detect"
expect_contains "$OUT" "per hardware class:" "a summary per class"

run_alloclab 0 fleet fleet --format json
python3 -c '
import json, math, sys
f = json.load(sys.stdin)
assert sorted(m["machine"] for m in f["machines"]) == sorted(["host-b", sys.argv[1]]), f["machines"]
assert len(f["ratios"]) == 2 * 2, f["ratios"]
assert len(f["classes"]) == 2, f["classes"]
s = next(x for x in f["summary"] if x["cell"] == "size=2")
assert s["machines"] == 2 and s["verdicts"] == {"inconclusive": 0, "same": 1, "lower": 0, "higher": 1}, s
assert abs(s["geomean_ratio"] - math.sqrt(1.2)) < 1e-9 and s["min_ratio"] == 1 and s["max_ratio"] == 1.2, s
assert s["ratio_ci_low"] < 1 < 1.2 < s["ratio_ci_high"] and s["heterogeneity"]["p"] < 0.001, s
assert all(m["detects"] == 0 and m["min_effect"] == 0.02 for m in f["machines"]), f["machines"]
' "$(hostname)" <<<"$OUT" || fail "fleet json: $OUT"
run_alloclab 0 fleet fleet --format csv
expect_eq "$(grep -c ",higher$" <<<"$OUT")" 2 "csv: a row per cell, variant and machine"

# history: host-b's series in the order its runs ran, not the order they arrived in.
run_alloclab 0 history fleet --cell size=1 --variant candidate --format csv
expect_eq "$(python3 -c '
import csv, sys
rows = [r for r in csv.DictReader(sys.stdin) if r["machine"] == "host-b"]
print(",".join(r["run_id"] + ":" + r["median"] for r in rows))' <<<"$OUT")" "3:110,2:120" "host-b's series by start time"
run_alloclab 0 runs
expect_eq "$(awk 'NR > 1 {printf "%s ", $1}' <<<"$OUT")" "2 3 1 " "runs: the latest started first"

# --compare-to latest compares with this machine's latest run, not host-b's (which started later).
echo 100 >"$WORK/cost-candidate"
cp "$DB" "$WORK/gate.db"
run_alloclab 0 run "$WORK/spec.yaml" --quiet --compare-to latest --format json --db "$WORK/gate.db"
expect_eq "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["comparison"]["run_a"])' <<<"$OUT")" 1 \
    "--compare-to latest: this machine's latest run"

# A machine whose run finished without measuring anything (its program fails everywhere) is
# no machine that finished for --expect-machines, and says so.
sed "s|^command: .*|command: [sh, -c, 'exit 3']|" "$WORK/spec.yaml" >"$WORK/dead.yaml"
run_alloclab 9 run "$WORK/dead.yaml" --quiet --db "$WORK/dead.db" --machine dead-d
expect_eq "$(sqlite3 "$WORK/dead.db" "SELECT status FROM runs")" done "a finished run"
run_alloclab 0 import "$WORK/b2.bundle" --db "$WORK/dead.db"
run_alloclab 1 fleet fleet --db "$WORK/dead.db" --expect-machines 2
expect_contains "$ERR" "1 machine finished a run of fleet (host-b), 2 were asked for; measured nothing: dead-d (every cell excluded or failed: alloclab show RUN says why)" \
    "a run that measured nothing"
expect_contains "$(grep '^dead-d ' <<<"$OUT")" "measured nothing (every cell excluded or failed)" "said in its row"

# A fleet job's runs: by cluster and job id, which alone would collide.
run_alloclab 0 fleet fleet --slurm-job alpha:77
expect_contains "$OUT" "fleet: fleet on 1 machine" "alpha's job 77 alone"
run_alloclab 1 fleet fleet --slurm-job alpha:77 --expect-machines 2
expect_contains "$ERR" "1 machine finished a run of fleet in Slurm job alpha:77 ($(hostname)), 2 were asked for" \
    "fewer machines than asked for"
run_alloclab 2 fleet fleet --slurm-job 77 --expect-machines 2
expect_contains "$ERR" "Slurm job 77 is a job of more than one cluster here (beta and alpha): give CLUSTER:77" \
    "a job id of two clusters"
run_alloclab 1 fleet fleet --slurm-job gamma:77 --expect-machines 2
expect_contains "$ERR" "0 machines finished a run of fleet in Slurm job gamma:77 (none), 2 were asked for; the others have no finished run" "no machine"
run_alloclab 2 fleet fleet --expect-machines 0

# Two machines' runs stay not comparable run against run.
run_alloclab 7 compare 1 2
expect_contains "$OUT" "NOT COMPARABLE" "compare across machines"
expect_contains "$OUT" "machine: $(hostname) -> host-b" "the machines named"
run_alloclab 2 fleet nosuch
expect_contains "$ERR" "no finished run of experiment 'nosuch' (see alloclab runs)" "unknown experiment"

# Machine identity: a run of another machine (machine-id) under this machine's name.
run_alloclab 0 run "$WORK/spec.yaml" --quiet --db "$WORK/c.db" --machine "$(hostname)"
sqlite3 "$WORK/c.db" "UPDATE runs SET host_fingerprint = 'cccccccccccccccc',
    host_facts = json_set(host_facts, '$.machine_id', 'another')"
run_alloclab 0 export latest --bundle "$WORK/c.bundle" --db "$WORK/c.db"
cp "$DB" "$WORK/before.db"
run_alloclab 4 import "$WORK/c.bundle"
expect_contains "$ERR" "machine $(hostname) has host fingerprint" "refused by default"
expect_contains "$ERR" "its machine-id differs: another machine under the same name?" "which difference"
expect_contains "$ERR" "--machine-policy split to file its runs apart, as $(hostname).cccccccc" "the way out"
run_alloclab 2 import "$WORK/c.bundle" --machine-policy merge
expect_contains "$ERR" "--machine-policy takes refuse, split or accept, not 'merge'" "an unknown policy"
run_alloclab 2 import "$WORK/c.bundle" --accept-host-change --machine-policy split
expect_contains "$ERR" "two machine policies (accept and split): give one" "two policies"
run_alloclab 0 import "$WORK/c.bundle" --machine-policy split --db "$WORK/split.db"
# (the split database has no runs of this machine yet: nothing to split from)
cp "$WORK/before.db" "$WORK/split.db"
run_alloclab 0 import "$WORK/c.bundle" --machine-policy split --db "$WORK/split.db"
expect_eq "$(sqlite3 "$WORK/split.db" "SELECT machine FROM runs ORDER BY id DESC LIMIT 1")" "$(hostname).cccccccc" "split"
run_alloclab 0 import "$WORK/c.bundle" --machine-policy split --db "$WORK/split.db"
expect_contains "$OUT" "1 already here" "a split run imported again: the same content"
# The split is remembered: that machine's next run goes there without being told again.
run_alloclab 0 run "$WORK/spec.yaml" --quiet --db "$WORK/c.db" --machine "$(hostname)"
sqlite3 "$WORK/c.db" "UPDATE runs SET host_fingerprint = 'cccccccccccccccc',
    host_facts = json_set(host_facts, '$.machine_id', 'another')"
run_alloclab 0 export latest --bundle "$WORK/c2.bundle" --db "$WORK/c.db"
run_alloclab 0 import "$WORK/c2.bundle" --db "$WORK/split.db"
expect_eq "$(sqlite3 "$WORK/split.db" "SELECT count(*) FROM runs WHERE machine = '$(hostname).cccccccc'")" 2 \
    "a split remembered"
# One machine under two names: said.
run_alloclab 0 run "$WORK/spec.yaml" --quiet --db "$WORK/twice.db" --machine one
run_alloclab 0 run "$WORK/spec.yaml" --quiet --db "$WORK/twice.db" --machine alias
run_alloclab 0 fleet fleet --db "$WORK/twice.db"
expect_contains "$OUT" "note: machines alias and one have one host fingerprint (" "one machine under two names"

# A split name stays a name: 64 characters at most.
long=$(printf 'm%.0s' $(seq 60))
run_alloclab 0 run "$WORK/spec.yaml" --quiet --db "$WORK/long-a.db" --machine "$long"
run_alloclab 0 run "$WORK/spec.yaml" --quiet --db "$WORK/long-b.db" --machine "$long"
sqlite3 "$WORK/long-b.db" "UPDATE runs SET host_fingerprint = 'dddddddddddddddd'"
run_alloclab 0 export latest --bundle "$WORK/long.bundle" --db "$WORK/long-b.db"
run_alloclab 0 import "$WORK/long.bundle" --db "$WORK/long-a.db" --machine-policy split
expect_eq "$(sqlite3 "$WORK/long-a.db" "SELECT max(length(machine)) FROM runs")" 64 "a split name of 64 characters"
run_alloclab 0 run "$WORK/spec.yaml" --quiet --db "$WORK/long-a.db" --machine "$(sqlite3 "$WORK/long-a.db" \
    "SELECT machine FROM runs WHERE length(machine) = 64")"
run_alloclab 0 fleet fleet --db "$WORK/split.db"
expect_contains "$OUT" "on 3 machines" "the split run is a machine of its own"
run_alloclab 0 import "$WORK/c.bundle" --machine-policy accept
expect_contains "$OUT" "1 accepted into their machine's series with another host fingerprint" "import says so"
expect_eq "$(q "SELECT machine FROM runs ORDER BY id DESC LIMIT 1")" "$(hostname)" "accepted as the same machine"
# Only its machine-id differs (a reinstall, a new instance of the same hardware): its series goes
# on, and compare does not hold the machine-id against it.
run_alloclab 0 history fleet --cell size=1 --variant candidate
expect_eq "$(grep -c "HOST CHANGED" <<<"$OUT")" 0 "the accepted run goes on in its machine's series"
run_alloclab 0 compare 1 "$(q "SELECT max(id) FROM runs")"
[[ $OUT != *machine_id* ]] || fail "compare held the accepted machine-id against the run: $OUT"
# Its kernel changed too: a new baseline.
q "UPDATE runs SET host_facts = json_set(host_facts, '$.kernel_cmdline', 'mitigations=off')
   WHERE id = (SELECT max(id) FROM runs)"
run_alloclab 0 history fleet --cell size=1 --variant candidate
expect_contains "$OUT" "HOST CHANGED" "a setup change starts a new baseline"

# A noisy machine: its costs wander +-30% from child to child, so its run cannot detect 2%; its
# "~" is never read as agreement with another machine's verdict. Its run measured its A/A noise
# floor too (aa_check), which its row shows.
{
    sed "s|^command: .*|command: [sh, -c, 'echo \"cost \$((\$(cat $WORK/cost-\$WHICH) + \$\$ % 60))\" >\&\$ALLOCLAB_METRICS_FD']|" \
        "$WORK/spec.yaml"
    echo "aa_check: true"
} >"$WORK/noisy.yaml"
grep -q '% 60' "$WORK/noisy.yaml" || fail "the noisy spec: $(cat "$WORK/noisy.yaml")"
echo 100 >"$WORK/cost-candidate"
run_alloclab 0 run "$WORK/noisy.yaml" --quiet --db "$WORK/noisy.db" --machine noisy-c
run_alloclab 0 import "$WORK/b2.bundle" --db "$WORK/noisy.db"
run_alloclab 0 fleet fleet --db "$WORK/noisy.db"
expect_contains "$(grep '^noisy-c ' <<<"$OUT")" "(too noisy for 2%); A/A +-" "the noisy machine flagged, with its A/A floor"
expect_contains "$OUT" "note: these runs ran 2 different specs of fleet" "machines that ran different specs"
row=$(grep '^size=1 ' <<<"$OUT")
expect_contains "$row" "~ (detects +-" "its cell: what it could detect"
expect_contains "$row" "higher on 1, inconclusive on 1 (1 could not detect 2%) of 2 machines" "its ~ said apart"
run_alloclab 0 fleet fleet --db "$WORK/noisy.db" --format json
python3 -c '
import json, sys
f = json.load(sys.stdin)
s = next(x for x in f["summary"] if x["cell"] == "size=1")
assert s["too_noisy"] == 1 and s["verdicts"]["inconclusive"] == 1, s
m = next(x for x in f["machines"] if x["machine"] == "noisy-c")
assert m["detects"] > m["min_effect"] and m["aa_noise_floor"] > m["min_effect"], m
assert next(x for x in f["machines"] if x["machine"] == "host-b")["aa_noise_floor"] is None, f["machines"]
' <<<"$OUT" || fail "fleet json of the noisy machine: $OUT"
