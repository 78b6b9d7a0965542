#!/bin/bash
# A crashing variant and a variant that exits non-zero are recorded, shown loudly and excluded
# after their smoke run; the other variants are measured in full and the exit status is 1.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/spec.yaml" <<YAML
experiment: crash
command: ["$WORKLOAD", which]
params: {n: [1, 2]}
allocators:
  good: {}
  crasher: {command: ["$WORKLOAD", crash]}
  quitter: {command: ["$WORKLOAD", exit, "3"]}
samples: 4
warmup: 1
YAML

run_alloclab 9 run "$WORK/spec.yaml" --quiet
expect_contains "$OUT" "CRASH SIGSEGV" "crash mark in the table"
expect_contains "$OUT" "EXIT 3" "exit mark in the table"
expect_contains "$OUT" "killed by signal 11 (Segmentation fault)" "crash detail"

expect_eq "$(q "SELECT status FROM runs")" "done" "run status"
expect_eq "$(q "SELECT count(*) FROM samples s JOIN variants v ON v.id = s.variant_id WHERE v.name = 'good' AND s.status = 'ok'")" \
    12 "good variant: 2 cells x (smoke + warmup + 4 samples)"
expect_eq "$(q "SELECT s.phase, s.status, s.signal FROM samples s JOIN variants v ON v.id = s.variant_id WHERE v.name = 'crasher' GROUP BY s.cell_id")" \
    "smoke|signal|11
smoke|signal|11" "crasher: one smoke sample per cell, then excluded"
expect_eq "$(q "SELECT DISTINCT s.status, s.exit_code FROM samples s JOIN variants v ON v.id = s.variant_id WHERE v.name = 'quitter'")" \
    "exit|3" "quitter status"
expect_eq "$(q "SELECT count(*) FROM exclusions")" 4 "exclusions"
expect_eq "$(q "SELECT count(*) FROM stats s JOIN variants v ON v.id = s.variant_id WHERE v.name = 'good' AND s.metric = 'wall' AND s.n = 4")" \
    2 "statistics for the good variant"

# A variant whose every second run crashes after a good smoke run: the warmup and 3 of 6 samples.
# The table's mark counts the measured samples that failed, and JSON tells them from all phases (on
# 7fba13f: "!4 CRASH" for 3 failed samples, the warmup counted as one).
cat >"$WORK/flaky.yaml" <<YAML
experiment: flaky
command: [sh, -c, 'n=\$(cat "$WORK/count" 2>/dev/null || echo 0); echo \$((n + 1)) >"$WORK/count"; [ \$((n % 2)) = 1 ] && kill -SEGV \$\$; echo ok']
allocators: {glibc: {}}
samples: 6
warmup: 1
YAML
run_alloclab 1 run "$WORK/flaky.yaml" --quiet
expect_contains "$OUT" "!3 CRASH" "the mark counts failed samples"
run_alloclab 0 show latest --format json
expect_eq "$(python3 -c 'import json, sys; r = json.load(sys.stdin)["cells"][0]["results"]["glibc"]
print(r["failed_measured_samples"], r["failed_samples"])' <<<"$OUT")" "3 4" "JSON: measured samples, and all phases"
