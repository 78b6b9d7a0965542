#!/bin/bash
# Metrics reported on ALLOCLAB_METRICS_FD are stored per sample, and `metric: reported:NAME`
# makes one of them the primary metric; a sample that does not report it is a failure.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/spec.yaml" <<YAML
experiment: reported
command: ["$WORKLOAD", report, read_time, "{t}"]
params: {t: ["0.25", "1.5"]}
allocators:
  glibc: {}
  silent: {command: ["$WORKLOAD", report, other_name, "1"]}
metric: reported:read_time
verify: none
samples: 3
YAML

run_alloclab 9 run "$WORK/spec.yaml" --quiet
expect_eq "$(q "SELECT c.label, s.median, s.n FROM stats s JOIN cells c ON c.id = s.cell_id
                JOIN variants v ON v.id = s.variant_id WHERE s.metric = 'read_time' ORDER BY c.position")" \
    "t=0.25|0.25|3
t=1.5|1.5|3" "reported metric statistics"
expect_eq "$(q "SELECT count(*) FROM sample_metrics WHERE name = 'read_time'")" 10 "stored metric values"
expect_eq "$(q "SELECT DISTINCT s.status || ': ' || s.detail FROM samples s JOIN variants v ON v.id = s.variant_id WHERE v.name = 'silent'")" \
    "missing-metric: metric read_time: the program wrote no 'read_time VALUE' line to ALLOCLAB_METRICS_FD, and the spec's metrics: gives it no pattern to read from its output" \
    "variant without the metric, and why"
expect_eq "$(q "SELECT metric FROM runs")" "reported:read_time" "run metric"
expect_contains "$OUT" "MISSING-METRIC" "table mark"

# A metrics line alloclab cannot take fails the sample as bad-metrics, and says which line and why
# (it said bad-metrics alone).
name65=$(printf 'n%.0s' $(seq 65))
for bad in "ok 1;$name65 2|metrics line 2 '${name65:0:40}...': a name is 1-64 letters" \
    "speed fast|metrics line 1 'speed fast': the value is not a finite number" \
    "no-value|metrics line 1 'no-value': not NAME VALUE"; do
    cat >"$WORK/bad.yaml" <<YAML
experiment: bad-metrics
command: [sh, -c, 'printf "${bad%%|*}\n" | tr ";" "\n" >&\$ALLOCLAB_METRICS_FD']
allocators: {glibc: {}}
verify: none
samples: 1
warmup: 0
probe: never
YAML
    run_alloclab 9 run "$WORK/bad.yaml" --quiet --db "$WORK/bad.db"
    expect_eq "$(sqlite3 "$WORK/bad.db" "SELECT status FROM samples ORDER BY id DESC LIMIT 1")" bad-metrics "a bad metrics line"
    expect_contains "$(sqlite3 "$WORK/bad.db" "SELECT detail FROM samples ORDER BY id DESC LIMIT 1")" "${bad#*|}" "which line and why"
done

# A program's own figure, read from its output by the spec's pattern (metrics:), with no shell
# around it: the last matching line counts, from stdout or stderr; a crash stays a crash.
cat >"$WORK/pattern.yaml" <<YAML
experiment: pattern
command: ["$WORKLOAD", report, unused, "1"]
allocators:
  glibc: {command: [sh, -c, 'echo "ops: 7 ops/s"; echo "ops: 12.5 ops/s"; echo "total 42"; echo "lat: 3" >&2']}
  crash: {command: ["$WORKLOAD", crash]}
  words: {command: [sh, -c, 'echo "ops: many ops/s"']}
  none: {command: [sh, -c, 'echo "nothing here"']}
metric: reported:ops
metrics:
  ops: {pattern: '^ops: ([^ ]+) ops/s', unit: ops/s, better: higher}
  lat: {pattern: 'lat: ([0-9]+)', from: stderr}
  total: {pattern: '[0-9]+$'}
verify: none
samples: 1
warmup: 0
YAML
run_alloclab 9 run "$WORK/pattern.yaml" --quiet --db "$WORK/pattern.db"
p() { sqlite3 "$WORK/pattern.db" "$1"; }
expect_eq "$(p "SELECT group_concat(m.name || '=' || m.value, ' ') FROM sample_metrics m JOIN samples s ON s.id = m.sample_id
                JOIN variants v ON v.id = s.variant_id WHERE v.name = 'glibc' AND s.phase = 'sample' ORDER BY m.name")" \
    "lat=3.0 ops=12.5 total=42.0" "the last line's group, from stdout or stderr; the whole match without a group"
expect_eq "$(p "SELECT DISTINCT s.status FROM samples s JOIN variants v ON v.id = s.variant_id WHERE v.name = 'crash'")" \
    signal "a crash stays a crash"
expect_eq "$(p "SELECT DISTINCT s.status || ': ' || s.detail FROM samples s JOIN variants v ON v.id = s.variant_id WHERE v.name = 'none'")" \
    "missing-metric: metric ops: no line of its stdout matches '^ops: ([^ ]+) ops/s'" \
    "no line matches the primary metric, and which pattern on which stream is said (on 19d64e5: nothing)"
expect_contains "$(p "SELECT detail FROM samples s JOIN variants v ON v.id = s.variant_id WHERE v.name = 'words' LIMIT 1")" \
    "metric ops: the pattern matched 'many', which is not a finite number" "text that is not a number, named"
expect_eq "$(p "SELECT metric_defs FROM runs")" \
    '{"lat":{"better":"lower"},"ops":{"better":"higher","unit":"ops/s"},"total":{"better":"lower"}}' \
    "every metric's direction and unit stored"

# better: higher makes a lower value the regression: compare's gate and run --compare-to judge
# so (on ab58ed7 a lower throughput passed the gate, a higher one failed it).
echo 20 >"$WORK/tp"
cat >"$WORK/tp.yaml" <<YAML
experiment: throughput
command: [sh, -c, 'echo "throughput \$(cat $WORK/tp)"']
allocators: {glibc: {}}
metric: reported:throughput
metrics: {throughput: {pattern: '^throughput ([0-9]+)', better: higher, unit: Mops/s}}
verify: none
samples: 8
YAML
run_alloclab 0 run "$WORK/tp.yaml" --quiet --db "$WORK/tp.db"
expect_contains "$OUT" "20 Mops/s" "values shown with their unit"
sed 's/^metric: reported:throughput$/metric: reported:throughpt/' "$WORK/tp.yaml" >"$WORK/typo.yaml"
run_alloclab 0 check "$WORK/typo.yaml"
expect_contains "$ERR" "alloclab check: warning: metric reported:throughpt is none of the metrics: the spec defines (did you mean 'throughput'?)" \
    "a primary metric the spec's metrics: does not define, said by check"
echo 10 >"$WORK/tp"
run_alloclab 6 run "$WORK/tp.yaml" --quiet --db "$WORK/tp.db" --compare-to latest
run_alloclab 6 compare 1 2 --db "$WORK/tp.db" --fail-on regression
expect_contains "$OUT" "REGRESSION in 1 of 1: [-] glibc 0.50x" "half the throughput is the regression"
run_alloclab 0 compare 2 1 --db "$WORK/tp.db" --fail-on regression
expect_contains "$OUT" "no regression" "twice the throughput is none"
run_alloclab 6 compare 1 2 --db "$WORK/tp.db" --fail-on regression --format json
expect_eq "$(/usr/bin/python3 -c 'import json, sys; r = json.load(sys.stdin); print(r["metric_better"], r["metric_unit"], r["regressions"])' <<<"$OUT")" \
    "higher Mops/s 1" "compare's JSON says which way is worse"
run_alloclab 0 show 2 --db "$WORK/tp.db" --format json
expect_eq "$(/usr/bin/python3 -c 'import json, sys; r = json.load(sys.stdin); print(r["metric_better"], r["metric_unit"])' <<<"$OUT")" \
    "higher Mops/s" "JSON says the direction and unit"

# A fixed-duration program: wall time the same under every variant while its figure differs, said;
# under metric wall, said too.
cat >"$WORK/flat.yaml" <<YAML
experiment: flat
command: [sh, -c, 'sleep 0.5; echo "ops \$OPS"']
allocators:
  glibc: {env: {OPS: "10"}}
  more: {preload: glibc, env: {OPS: "20"}}
metric: reported:ops
metrics: {ops: {pattern: '^ops ([0-9]+)', better: higher}}
verify: none
samples: 8
warmup: 0
YAML
run_alloclab 0 run "$WORK/flat.yaml" --db "$WORK/flat.db"
expect_contains "$OUT" "Wall time flat:" "the flat wall time noted"
run_alloclab 0 show --db "$WORK/flat.db" --format json
[[ $OUT == *'"wall_flat_note": "every variant'* ]] || fail "the note in JSON: $OUT"
expect_contains "$OUT" "while ops differs by up to 100%: the program runs for a fixed time, and its figure, not its time, tells the allocators apart" \
    "its figure said to be what tells them apart"
sed -i -e '/^metric:/d' -e 's/^samples: 8/samples: 3/' "$WORK/flat.yaml"
run_alloclab 0 run "$WORK/flat.yaml" --db "$WORK/flat.db"
expect_contains "$OUT" "either the allocator matters little to this program, or it runs for a fixed time" \
    "under metric wall"
expect_contains "$OUT" "\`metric: reported:ops\` would judge the figure the spec's metrics: reads already" \
    "the figure the spec reads already pointed to (on 19d64e5: 'measured by it with metrics:')"

# The Pareto front weighs the primary metric, the better way round, against peak RSS (it weighed
# wall time whatever the metric: on ab58ed7 "big" was off the front although it has the lowest
# cost). big: a cost of 10 and 20 MB more memory; small: a cost of 20.
cat >"$WORK/front.yaml" <<YAML
experiment: front
command: [sh, -c, 'echo "cost 20"']
allocators:
  small: {preload: glibc}
  big: {preload: glibc, command: [sh, -c, 'x=\$(head -c 20000000 /dev/zero | tr "\\\\0" a); echo "cost 10"']}
metric: reported:cost
metrics: {cost: {pattern: '^cost ([0-9]+)'}}
verify: none
samples: 3
warmup: 0
YAML
front() {
    /usr/bin/python3 -c 'import json, sys; r = json.load(sys.stdin)
print(r["pareto_metric"], " ".join("%s=%s" % (n, e["pareto"]) for n, e in zip([v["name"] for v in r["variants"]], r["cells"][0]["results"].values())))' <<<"$1"
}
run_alloclab 0 run "$WORK/front.yaml" --quiet --db "$WORK/front.db"
run_alloclab 0 show --db "$WORK/front.db" --format json
expect_eq "$(front "$OUT")" "reported:cost small=True big=True" "a lower cost and a smaller peak: both on the front"
run_alloclab 0 show --db "$WORK/front.db"
expect_contains "$OUT" "Metric/memory trade-off (Pareto front of median cost, less is better, and median peak RSS)" \
    "the front's axes said"
sed -i "s/pattern: '^cost (\[0-9\]+)'}/pattern: '^cost ([0-9]+)', better: higher}/" "$WORK/front.yaml"
run_alloclab 0 run "$WORK/front.yaml" --quiet --db "$WORK/front.db"
run_alloclab 0 show --db "$WORK/front.db" --format json
expect_eq "$(front "$OUT")" "reported:cost small=True big=False" "more is better: small is better in both"
run_alloclab 0 show --db "$WORK/front.db"
expect_contains "$OUT" "gain %" "two variants where more is better: a gain column, not a cost (on 19d64e5: cost %)"

# A metric that is not the primary one keeps its direction and unit: history judges a lower
# throughput a regression (on 19d64e5: IMPROVEMENT), and a unit replaces the one its name gives.
cat >"$WORK/side.yaml" <<YAML
experiment: side
command: [sh, -c, 'echo "throughput \$(cat $WORK/tp)"; echo "took 0.25"']
allocators: {glibc: {}}
metrics:
  throughput: {pattern: '^throughput ([0-9]+)', better: higher, unit: ops/s}
  took_seconds: {pattern: '^took ([0-9.]+)', unit: s}
verify: none
samples: 3
warmup: 0
YAML
for tp in 20 20 20 10 10; do
    echo $tp >"$WORK/tp"
    run_alloclab 0 run "$WORK/side.yaml" --quiet --db "$WORK/side.db"
done
run_alloclab 0 history side --metric reported:throughput --db "$WORK/side.db"
expect_contains "$OUT" "REGRESSION" "half the throughput, a regression"
[[ $OUT != *IMPROVEMENT* ]] || fail "a lower throughput called an improvement: $OUT"
expect_contains "$OUT" "10 ops/s" "history in the metric's unit"
run_alloclab 0 history side --metric reported:took_seconds --db "$WORK/side.db"
expect_contains "$OUT" "0.25 s" "the spec's unit"
[[ $OUT != *"ms s"* ]] || fail "two units: $OUT"
