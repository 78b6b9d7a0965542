#!/bin/bash
# alloclab compare: two runs of one experiment, change per cell and variant with interval and
# verdict; a different host, allocator file or spec is stated loudly and makes the exit status 1.
. "$(dirname "$0")/lib.sh"

# The cost each run reports comes from a file, so that one spec gives two different runs.
# jem preloads a copy of jemalloc, so that its file can change between runs.
cp "$(ldconfig -p | awk '/libjemalloc.so.2 .*x86-64/ {print $NF; exit}')" "$WORK/libjem.so"
cat >"$WORK/spec.yaml" <<YAML
experiment: compare
command: [sh, -c, 'echo "cost \$(cat $WORK/cost)" >&\$ALLOCLAB_METRICS_FD']
params: {size: ["1", "2"]}
allocators:
  glibc: {}
  jem: {preload: $WORK/libjem.so}
metric: reported:cost
verify: none
samples: 8
YAML
echo 10 >"$WORK/cost"
run_alloclab 0 run "$WORK/spec.yaml" --quiet
echo 20 >"$WORK/cost"
run_alloclab 0 run "$WORK/spec.yaml" --quiet
echo 10 >"$WORK/cost"
run_alloclab 0 run "$WORK/spec.yaml" --quiet

# Same spec, host and files: comparable, the doubled cost is "higher" in every cell. Runs are the
# unit: with no earlier run to measure how much a run's median moves from run to run, the
# assumed 2% (docs/analysis.md) makes the interval of one run against another wide, and says so.
run_alloclab 0 compare 1 2
expect_contains "$OUT" "comparable: same host fingerprint, allocator files, spec, cells and variants" "comparable"
expect_contains "$OUT" "size=1  glibc    10     20     2.00x [1.51, 2.65] higher" "change with interval"
expect_eq "$(grep -c ' higher$' <<<"$OUT")" 4 "every cell and variant"
expect_contains "$OUT" "a run's median moves from run to run by +-2.0%, assumed: no earlier runs of this experiment on" \
    "the between-run spread is said to be assumed"
expect_contains "$OUT" "(Holm over 4 comparisons)" "the correction is stated"
run_alloclab 0 compare 1 3
# Nothing rejected: the intervals are at Holm's level for it, 1 - 0.01 / 4, and the change each
# could have told is said.
expect_eq "$(grep -c '1.00x \[0.57, 1.76\] ~ (detects +-[0-9]*%)$' <<<"$OUT")" 4 "no change, and no claim of sameness one run cannot back"

run_alloclab 0 compare 1 2 --format json
python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["comparable"] is True and d["differences"] == [], d
c = d["changes"][0]
assert (c["median_a"], c["median_b"], c["ratio"], c["verdict"], c["test"]) == (10, 20, 2, "higher", "runs-t"), c
assert c["p_adjusted"] < 0.01 and c["p_value"] < c["p_adjusted"], c
assert (d["correction"], d["tests"], d["between_run_spread"], d["spread_runs"]) == ("holm", 4, 0.02, 0), d' <<<"$OUT" || fail "json comparison"
run_alloclab 0 compare 1 2 --format csv
expect_contains "$OUT" "run_a,run_b,cell,variant,metric,n_a,median_a,n_b,median_b,ratio,ratio_ci_low" "csv header"
comparable_column() { python3 -c 'import csv, sys; print(" ".join(r["comparable"] for r in csv.DictReader(sys.stdin)))' <<<"$OUT"; }
expect_eq "$(comparable_column)" "true true true true" "csv rows say comparable"

# Another allocator file under the same name: stated before and after the table, exit 7 (on
# 36dd084 exit 1, as for failed samples).
printf 'x' >>"$WORK/libjem.so"
run_alloclab 0 run "$WORK/spec.yaml" --quiet
run_alloclab 7 compare 1 4
expect_contains "$OUT" "!! NOT COMPARABLE: runs 1 and 4 differ in
!!   allocator file of jem (sha256): " "allocator file stated"
expect_eq "$(grep -c 'NOT COMPARABLE' <<<"$OUT")" 2 "stated before and after the changes"
expect_contains "$OUT" "size=2  jem      10     10     1.00x [0.57, 1.76] ~" "changes still shown"

# Another host (as a second machine would record it): never compared silently.
q "INSERT INTO hosts (hostname, kernel, cpu_model, cpus, glibc, thp)
   SELECT 'other-host', kernel, cpu_model, cpus, glibc, 'never' FROM hosts WHERE id = 1;
   UPDATE runs SET host_id = (SELECT max(id) FROM hosts) WHERE id = 3"
run_alloclab 7 compare 1 3
expect_contains "$OUT" "host name: $(q "SELECT hostname FROM hosts WHERE id = 1") -> other-host" "host named"
expect_contains "$OUT" "THP: $(q "SELECT thp FROM hosts WHERE id = 1") -> never" "THP named"
run_alloclab 7 compare 1 3 --format csv
expect_eq "$(comparable_column)" "false false false false" "csv rows say not comparable"
run_alloclab 7 compare 1 3 --format json
expect_eq "$(python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["comparable"], len(d["differences"]))' <<<"$OUT")" \
    "False 2" "json says not comparable"

# Host facts beyond the hosts table (stored per run with the fingerprint): a THP defrag mode
# another day (as /sys would have said) is named.
expect_eq "$(q "SELECT length(host_fingerprint), json_extract(host_facts, '$.aslr') IS NOT NULL FROM runs WHERE id = 2")" \
    "64|1" "fingerprint and facts stored"
defrag=$(q "SELECT json_extract(host_facts, '$.thp_defrag') FROM runs WHERE id = 2")
q "UPDATE runs SET host_facts = json_set(host_facts, '$.thp_defrag', 'changed') WHERE id = 2"
run_alloclab 7 compare 1 2
expect_contains "$OUT" "host thp_defrag: $(q "SELECT json_extract(host_facts, '$.thp_defrag') FROM runs WHERE id = 1") -> changed" \
    "host fact named"
expect_eq "$(q "SELECT count(DISTINCT program_sha256) FROM variants WHERE run_id = 1")" 1 "program hashed per variant"

# Another spec: what changed in it is named key by key (not two digests), and a different
# matrix cell by cell.
sed -e 's/size: \["1", "2"\]/size: ["1", "3"]/' -e 's/^samples: \(.*\)/samples: 9  # more samples/' \
    "$WORK/spec.yaml" >"$WORK/other.yaml"
printf 'warmup: 2\n' >>"$WORK/other.yaml"
run_alloclab 0 run "$WORK/other.yaml" --quiet
run_alloclab 7 compare 1 5
expect_contains "$OUT" "spec params.size[1]: 2 -> 3" "a changed list item named"
expect_contains "$OUT" "spec samples: $(sed -n 's/^samples: //p' "$WORK/spec.yaml") -> 9" "a changed value named"
expect_contains "$OUT" "spec warmup: only in run 5 (2)" "a new key named"
[[ $OUT != *"spec (sha256)"* ]] || fail "two digests instead of the keys: $OUT"
expect_contains "$OUT" "cell size=2: only in run 1" "missing cell named"
expect_contains "$OUT" "cell size=3: only in run 5" "new cell named"

run_alloclab 2 compare 1
run_alloclab 2 compare 1 x
run_alloclab 2 compare 1 1
expect_contains "$ERR" "run 1 against itself: give two different runs" "a run against itself"
run_alloclab 2 compare 1 99
expect_contains "$ERR" "no run 99" "missing run (exit 2, as run --compare-to 99; on 36dd084 exit 4)"

# A CI gate: --fail-on regression exits 6 when run B is worse (higher) than run A somewhere
# beyond the minimum effect, 7 when the runs are not comparable (whatever the verdicts), 0 for
# an improvement or no change (on 36dd084: 1 for a regression, 0 when not comparable).
q "UPDATE runs SET host_facts = json_set(host_facts, '$.thp_defrag', '$defrag') WHERE id = 2"
run_alloclab 6 compare 1 2 --fail-on regression
expect_contains "$OUT" "REGRESSION in 4 of 4: [size=1] glibc 2.00x, [size=1] jem 2.00x, [size=2] glibc 2.00x, [size=2] jem 2.00x" \
    "the gate names each regression"
run_alloclab 0 compare 2 1 --fail-on regression
expect_contains "$OUT" "no regression: nothing is significantly worse in run 1" "an improvement passes"
run_alloclab 7 compare 1 3 --fail-on regression --format markdown
expect_contains "$OUT" "- no regression" "the gate's line in markdown"
expect_contains "$OUT" "NOT COMPARABLE" "not comparable, said, and exit 7 under the gate"
run_alloclab 0 compare 1 2
expect_contains "$OUT" "comparable: same host fingerprint" "comparable again"
run_alloclab 0 compare 1 2 --fail-on regression --relative
# Colours on a terminal, as show's: the verdict after the interval and the REGRESSION line.
CLICOLOR_FORCE=1 run_alloclab 6 compare 1 2 --fail-on regression
expect_contains "$OUT" "$(printf '] \033[31mhigher\033[0m')" "a higher verdict in red"
expect_contains "$OUT" "$(printf '\033[1;31mREGRESSION\033[0m in 4 of 4')" "the REGRESSION line in bold red"
CLICOLOR_FORCE=1 run_alloclab 0 compare 2 1 --fail-on regression
expect_contains "$OUT" "$(printf '] \033[32mlower\033[0m')" "a lower verdict in green"
CLICOLOR_FORCE=1 run_alloclab 6 compare 1 2 --fail-on regression --format markdown
[[ $OUT != *$'\033'* ]] || fail "colours in markdown: $OUT"
run_alloclab 6 compare 1 2 --fail-on regression --format json
expect_eq "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["regressions"])' <<<"$OUT")" 4 "regressions in json"
run_alloclab 2 compare 1 2 --fail-on speed
expect_contains "$ERR" "--fail-on takes 'regression', not 'speed'" "an unknown gate"
run_alloclab 2 fleet compare --fail-on regression

# run --compare-to: the new run is compared with a given run, or the newest finished one of the
# experiment, as the gate does; a run that does not exist is refused before anything is written.
# A gate of its own (the history above doubled the cost once): two steady runs measure the
# between-run spread, and a 20% higher cost stands out of it.
sed 's/^experiment: compare$/experiment: gate/' "$WORK/spec.yaml" >"$WORK/gate.yaml"
runs_before=$(q "SELECT count(*) FROM runs")
run_alloclab 2 run "$WORK/gate.yaml" --quiet --compare-to 999
expect_contains "$ERR" "no run 999 to compare with" "a missing run to compare with"
expect_eq "$(q "SELECT count(*) FROM runs")" "$runs_before" "nothing written for it"
# A run of another experiment: NOT COMPARABLE, known before measuring (on 19d64e5 the whole run
# was measured first, then exit 7).
run_alloclab 7 run "$WORK/gate.yaml" --quiet --compare-to 1
expect_contains "$ERR" "--compare-to 1: run 1 is of another experiment than gate: NOT COMPARABLE; nothing was measured" \
    "another experiment, refused first"
expect_eq "$(q "SELECT count(*) FROM runs")" "$runs_before" "nothing written for it"
# No earlier run: a gate with nothing to compare with fails (exit 8, nothing measured), unless
# told that a first run may pass (on 36dd084 it passed, whatever the database path).
run_alloclab 8 run "$WORK/gate.yaml" --quiet --compare-to latest
expect_contains "$ERR" "--compare-to latest: no finished run of gate on machine $(hostname) in $DB to compare with; nothing was measured" \
    "a missing baseline fails"
expect_eq "$(q "SELECT count(*) FROM runs")" "$runs_before" "nothing written for a missing baseline"
# A database that does not exist (a mistyped --db) is said to be missing, and is not made (on
# 7fba13f: "no finished run", an empty database created, and the hint to allow a first run).
run_alloclab 8 run "$WORK/gate.yaml" --quiet --compare-to latest --db "$WORK/typo/results.db"
expect_contains "$ERR" "the database $WORK/typo/results.db does not exist" "a missing database named"
[[ ! -e "$WORK/typo" ]] || fail "a database was made for a gate that measured nothing"
run_alloclab 2 run "$WORK/gate.yaml" --quiet --allow-missing-baseline
expect_contains "$ERR" "--allow-missing-baseline is about --compare-to's run" "the option alone"
echo 10 >"$WORK/cost"
run_alloclab 0 run "$WORK/gate.yaml" --quiet --compare-to latest --allow-missing-baseline
expect_contains "$ERR" "no finished run of gate on machine $(hostname) in $DB yet: nothing to compare with (--allow-missing-baseline)" \
    "a first run allowed"
run_alloclab 0 run "$WORK/gate.yaml" --quiet --compare-to latest
expect_contains "$OUT" "no regression: nothing is significantly worse in run $((runs_before + 2))" "the same cost passes"
echo 12 >"$WORK/cost"
run_alloclab 6 run "$WORK/gate.yaml" --quiet --compare-to latest --label pr-7 --commit 0123456789abcdef
expect_contains "$OUT" "compare: run $((runs_before + 2)) (" "latest: the newest finished run"
expect_contains "$OUT" "REGRESSION in 4 of 4: [size=1] glibc 1.20x" "a 20% higher cost fails the gate"
expect_contains "$OUT" "measured over up to 2 earlier runs of this experiment on" "the spread measured from the history"
# JSON: one document with the run and the comparison (on a7caab1, two documents one after the
# other, which no JSON reader takes); CSV, two tables of different columns, is refused.
run_alloclab 0 run "$WORK/gate.yaml" --quiet --compare-to latest --format json --label pr-7 --commit 0123456789abcdef
python3 -c '
import json, sys
d = json.load(sys.stdin)
assert set(d) == {"run", "comparison"}, d.keys()
assert d["comparison"]["run_b"] == d["run"]["run_id"] and d["comparison"]["regressions"] == 0, d["comparison"]' <<<"$OUT" ||
    fail "run --compare-to --format json: $OUT"
run_alloclab 2 run "$WORK/gate.yaml" --quiet --compare-to latest --format csv
expect_contains "$ERR" "--format csv with --compare-to would print two tables" "csv with a comparison refused"

# A run's label and commit: stored, in runs and show (the report's test has the HTML).
run_alloclab 0 runs
expect_contains "$OUT" "pr-7 @0123456789ab" "label and commit in runs"
run_alloclab 0 show latest
expect_contains "$OUT" "label pr-7, commit 0123456789abcdef" "label and commit in show"
run_alloclab 0 show latest --format json
expect_eq "$(python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["label"], d["commit"])' <<<"$OUT")" \
    "pr-7 0123456789abcdef" "label and commit in json"
run_alloclab 2 run "$WORK/spec.yaml" --quiet --label "$(printf 'a\033[2Jb')"
expect_contains "$ERR" "--label must be UTF-8 text without control characters" "a label with control characters"
# A right-to-left override reorders what a terminal shows; import takes no such label.
run_alloclab 2 run "$WORK/spec.yaml" --quiet --commit "$(printf 'abc\342\200\256fed')"
expect_contains "$ERR" "--commit must be UTF-8 text without control characters" "a commit with U+202E"
run_alloclab 0 history gate --cell size=1 --variant glibc
expect_contains "$OUT" "$(q "SELECT max(id) FROM runs WHERE label = 'pr-7'") (pr-7)" "the label in history"
run_alloclab 0 history gate --format json
expect_contains "$OUT" '"label": "pr-7"' "the label in history's json"

# A against B and B against A are judged alike: the between-run spread comes from the runs up to
# the older of the two, never from the newer (on 7fba13f, `compare NEW OLD` counted the newer
# run's change as noise: +-64.6% and "~" where `compare OLD NEW` said "slower").
sed 's/^experiment: compare$/experiment: reverse/' "$WORK/spec.yaml" >"$WORK/reverse.yaml"
echo 10 >"$WORK/cost"
for _ in 1 2 3; do run_alloclab 0 run "$WORK/reverse.yaml" --quiet; done
old=$(q "SELECT max(id) FROM runs")
echo 30 >"$WORK/cost"
run_alloclab 0 run "$WORK/reverse.yaml" --quiet
new=$(q "SELECT max(id) FROM runs")
echo 10 >"$WORK/cost"
run_alloclab 0 compare "$old" "$new"
forward=$OUT
run_alloclab 0 compare "$new" "$old"
expect_eq "$(grep -c ' higher$' <<<"$forward") $(grep -c ' lower$' <<<"$OUT")" "4 4" "both directions decided"
expect_eq "$(grep -o 'moves from run to run by [^,]*' <<<"$OUT")" "$(grep -o 'moves from run to run by [^,]*' <<<"$forward")" \
    "the same spread both ways"

# A variant excluded in the new run has a status of its own, 9, unless the gate has one: a
# regression beside it exits 6 (on 4f065eb both exited 1 or 6 alike, an exclusion as a crash).
cat >"$WORK/excluded.yaml" <<YAML
experiment: excluded
command: [sh, -c, 'echo "cost \$(cat $WORK/cost)" >&\$ALLOCLAB_METRICS_FD']
params: {size: ["1", "2"]}
allocators:
  glibc: {}
  fragile: {command: [sh, -c, 'test ! -e $WORK/broken && echo "cost \$(cat $WORK/cost)" >&\$ALLOCLAB_METRICS_FD']}
metric: reported:cost
verify: none
samples: 8
YAML
echo 10 >"$WORK/cost"
for _ in 1 2; do run_alloclab 0 run "$WORK/excluded.yaml" --quiet; done
first=$(q "SELECT max(id) FROM runs")
touch "$WORK/broken"
run_alloclab 9 run "$WORK/excluded.yaml" --quiet --compare-to "$first"
expect_contains "$OUT" "no regression: nothing is significantly worse in run $((first + 1)) among the 2 of 4 compared" \
    "an exclusion alone: 9, and what was compared"
expect_contains "$OUT" "not compared, 2 of 4:" "what was not"
expect_contains "$OUT" "[size=1] fragile: excluded in run $((first + 1)) (exit: exit code 1)" "and why"
# The gate of compare passes only what it compared (on 7fba13f it exited 0: "no regression").
run_alloclab 9 compare "$first" "$((first + 1))" --fail-on regression
run_alloclab 0 compare "$first" "$((first + 1))"
run_alloclab 9 compare "$first" "$((first + 1))" --fail-on regression --format json
expect_eq "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["not_compared"])' <<<"$OUT")" 2 "JSON: not compared"
echo 12 >"$WORK/cost"
run_alloclab 6 run "$WORK/excluded.yaml" --quiet --compare-to "$first"
expect_contains "$OUT" "REGRESSION in 2 of 2 compared: " "a regression beside an exclusion: the gate's 6"
run_alloclab 6 run "$WORK/excluded.yaml" --quiet --compare-to "$first" --format json
rm "$WORK/broken"
echo 10 >"$WORK/cost"

# --relative: each variant's ratio to the baseline within each run, compared across the runs.
# The whole machine twice as slow moves every median (the absolute gate fails) but no ratio; a
# candidate 20% slower than the baseline within its run fails the relative gate.
echo 1 >"$WORK/machine"
echo 10 >"$WORK/candidate"
cat >"$WORK/relative.yaml" <<YAML
experiment: relative
command: [sh, -c, 'echo "cost \$((\$(cat $WORK/machine) * 10))" >&\$ALLOCLAB_METRICS_FD']
allocators:
  glibc: {}
  candidate: {command: [sh, -c, 'echo "cost \$((\$(cat $WORK/machine) * \$(cat $WORK/candidate)))" >&\$ALLOCLAB_METRICS_FD']}
metric: reported:cost
verify: none
samples: 6
YAML
for _ in 1 2 3; do run_alloclab 0 run "$WORK/relative.yaml" --quiet; done
first=$(q "SELECT max(id) FROM runs")
echo 2 >"$WORK/machine"
run_alloclab 0 run "$WORK/relative.yaml" --quiet
run_alloclab 6 compare "$first" "$((first + 1))" --fail-on regression
expect_contains "$OUT" "REGRESSION in 2 of 2" "the slower machine fails the absolute gate"
run_alloclab 0 compare "$first" "$((first + 1))" --fail-on regression --relative
expect_contains "$OUT" "-     candidate  1.000x  1.000x  1.00x [" "the ratios, unmoved"
expect_contains "$OUT" "Change = (variant / glibc within run $((first + 1))) / (variant / glibc within run $first)" \
    "what is compared, said"
[[ $OUT != *"glibc    "* ]] || fail "the baseline compared with itself: $OUT"
echo 12 >"$WORK/candidate"
run_alloclab 6 run "$WORK/relative.yaml" --quiet --compare-to latest --relative
expect_contains "$OUT" "REGRESSION in 1 of 1: [-] candidate 1.20x" "a candidate 20% slower within its run fails"
run_alloclab 0 compare "$first" "$((first + 2))" --relative --format json
python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["relative"] is True and d["baseline"] == "glibc", d
c = d["changes"]
assert len(c) == 1 and (c[0]["variant"], c[0]["ratio_to_baseline_a"], c[0]["ratio_to_baseline_b"]) == ("candidate", 1, 1.2), c' <<<"$OUT" ||
    fail "relative json: $OUT"
run_alloclab 2 run "$WORK/relative.yaml" --quiet --relative
expect_contains "$ERR" "--relative is about --compare-to's run; give --compare-to too" "--relative alone"
run_alloclab 2 fleet relative --relative
expect_contains "$ERR" "unrecognized option '--relative'" "fleet takes no --relative"
# --relative needs a variant besides the baseline; it says so rather than passing an empty gate.
cat >"$WORK/single.yaml" <<YAML
experiment: single
command: [sh, -c, 'echo "cost 10" >&\$ALLOCLAB_METRICS_FD']
allocators: {glibc: {}}
metric: reported:cost
verify: none
samples: 6
YAML
for _ in 1 2; do run_alloclab 0 run "$WORK/single.yaml" --quiet; done
single=$(q "SELECT max(id) FROM runs")
# run --compare-to --relative refuses what compare would refuse before it measures anything
# (on a7caab1 it measured and stored a run, then refused the comparison).
runs_before=$(q "SELECT count(*) FROM runs")
run_alloclab 2 run "$WORK/single.yaml" --quiet --compare-to latest --relative
expect_contains "$ERR" "the spec has no variant besides the baseline; nothing was measured" "a single variant, refused first"
sed 's/^samples: 6/samples: 6\norder: blocked/' "$WORK/relative.yaml" >"$WORK/blocked.yaml"
run_alloclab 2 run "$WORK/blocked.yaml" --quiet --compare-to latest --relative
expect_contains "$ERR" "the spec measures in blocked order" "blocked order, refused first"
expect_eq "$(q "SELECT count(*) FROM runs")" "$runs_before" "nothing measured for either"
run_alloclab 2 compare "$((single - 1))" "$single" --relative --fail-on regression
expect_contains "$ERR" "--relative compares each variant's ratio to the baseline variant 'glibc' within each run, and run $((single - 1)) has no other variant" \
    "nothing to compare relatively, said"

# No earlier runs, but run A measured its noise floor (aa_check): that, not the assumed 2%, says
# how much a median moves. Each child's cost cycles 10/20/30 (x 1.5 in run B): with 2% assumed
# the 1.5x would be a regression; the A/A check's floor says the run cannot tell (on a7caab1 the
# gate failed with "+-2.0%, assumed" beside a noise floor of +-25%).
echo 0 >"$WORK/tick"
echo 10 >"$WORK/unit"
cat >"$WORK/floor.yaml" <<YAML
experiment: floor
command: [sh, -c, 'n=\$((\$(cat $WORK/tick) + 1)); echo \$n >$WORK/tick; echo "cost \$(( (n % 3 + 1) * \$(cat $WORK/unit) ))" >&\$ALLOCLAB_METRICS_FD']
allocators: {glibc: {}}
aa_check: true
metric: reported:cost
verify: none
samples: 6
YAML
run_alloclab 0 run "$WORK/floor.yaml" --quiet
floor_a=$(q "SELECT max(id) FROM runs")
echo 15 >"$WORK/unit"
run_alloclab 0 run "$WORK/floor.yaml" --quiet
run_alloclab 9 compare "$floor_a" "$((floor_a + 1))" --fail-on regression
expect_contains "$OUT" "from run $floor_a's A/A noise floor of +-" "the spread from the A/A check, said"
# Within the noise floor, the 1.5x is no proven regression, but neither is it "no regression": the
# gate cannot tell, says so and exits 9 (on 19d64e5: "no regression", exit 0, passing a 2.7x).
expect_contains "$OUT" "cannot tell: 2 of 2 are worse in run $((floor_a + 1)) by at least 2%, but not significantly ([-] glibc 1.50x [" \
    "a change the size of a regression that the runs cannot tell from noise"
run_alloclab 0 compare "$floor_a" "$((floor_a + 1))" --format json
expect_eq "$(python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["spread_aa_floor"] > 0.2, d["between_run_spread"] > 0.02)' <<<"$OUT")" \
    "True True" "json: the floor and the spread it gave"

# A run whose own samples scatter far more than runs usually move is judged by its own error,
# not the calm runs' spread: three runs at a steady 10, then one whose children cost 6, 12 and 18
# in turn (median 12): its median is 1.2x, and it cannot tell (on 04a893d: a REGRESSION).
echo 0 >"$WORK/scatter"
cat >"$WORK/scatter.yaml" <<YAML
experiment: scatter
command: [sh, -c, 'n=\$((\$(cat $WORK/tick) + 1)); echo \$n >$WORK/tick; [ \$(cat $WORK/scatter) = 1 ] && c=\$(( (n % 3 + 1) * 6 )) || c=10; echo "cost \$c" >&\$ALLOCLAB_METRICS_FD']
allocators: {glibc: {}}
metric: reported:cost
verify: none
samples: 6
YAML
for _ in 1 2 3; do run_alloclab 0 run "$WORK/scatter.yaml" --quiet; done
echo 1 >"$WORK/scatter"
run_alloclab 0 run "$WORK/scatter.yaml" --quiet
scatter=$(q "SELECT max(id) FROM runs")
run_alloclab 9 compare "$((scatter - 1))" "$scatter" --fail-on regression
expect_contains "$OUT" "1.20x" "the medians' ratio"
expect_contains "$OUT" "or by the two runs' own standard errors where they are larger" "the rule, said"
[[ $OUT != *REGRESSION* ]] || fail "a scattered run called a regression by the calm runs' spread: $OUT"
expect_contains "$OUT" "cannot tell: 1 of 1" "nor passed as no regression"

# A spec that spells out a default or writes a value another way is the same spec: comparable, no
# "spec" line (on ab58ed7: "spec warmup: only in run N (1)" and NOT COMPARABLE).
echo 10 >"$WORK/cost"
run_alloclab 0 run "$WORK/spec.yaml" --quiet
plain=$(q "SELECT max(id) FROM runs")
{ cat "$WORK/spec.yaml"; printf 'warmup: 1\norder: interleaved\ntimeout: 10m\nalpha: 1e-2\n'; } >"$WORK/spelled.yaml"
run_alloclab 0 run "$WORK/spelled.yaml" --quiet
run_alloclab 0 compare "$plain" "$((plain + 1))"
expect_contains "$OUT" "comparable: same host fingerprint, allocator files, spec, cells and variants" \
    "defaults spelled out: the same spec"
[[ $OUT != *"spec warmup"* && $OUT != *"NOT COMPARABLE"* ]] || fail "a default spelled out counted as a change: $OUT"
