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
expect_eq "$(q "SELECT DISTINCT s.status FROM samples s JOIN variants v ON v.id = s.variant_id WHERE v.name = 'silent'")" \
    "missing-metric" "variant without the metric"
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
