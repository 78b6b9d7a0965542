#!/bin/bash
# kill -9 of `alloclab run` mid-run, then `alloclab resume RUN`: the run completes with exactly
# the missing samples (every step of the plan recorded once), statistics for every cell, and
# the same result a user would read from an uninterrupted run.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/spec.yaml" <<YAML
experiment: resumable
command: ["$WORKLOAD", report, t, "{n}"]
params: {n: ["1", "2"]}
allocators: {glibc: {}, jemalloc: {preload: jemalloc}}
samples: 6
warmup: 1
order: randomized
metric: reported:t
YAML
# 2 cells x 2 variants x (1 smoke + 1 warmup + 6 samples)
total=32
# Slow the children down a little so that the kill lands mid-run.
sed -i "s|command: \\[\"$WORKLOAD\", report, t, \"{n}\"\\]|command: [/bin/sh, -c, \"sleep 0.05; exec $WORKLOAD report t {n}\"]|" "$WORK/spec.yaml"

"$ALLOCLAB" run "$WORK/spec.yaml" --quiet >/dev/null 2>&1 &
pid=$!
for _ in $(seq 200); do
    (( $(q "SELECT count(*) FROM samples" 2>/dev/null || echo 0) >= 12 )) && break
    sleep 0.05
done
kill -9 $pid
wait $pid 2>/dev/null || true
before=$(q "SELECT count(*) FROM samples")
(( before >= 12 && before < total )) || fail "the kill landed at $before of $total samples"

run_alloclab 2 resume 1 --samples 3
# A run continues only on the machine it started on (as if the database came from another host).
fingerprint=$(q "SELECT host_fingerprint FROM runs WHERE id = 1")
q "UPDATE runs SET host_fingerprint = 'feedfacefeedface' WHERE id = 1"
run_alloclab 4 resume 1 --quiet
expect_contains "$ERR" "run 1 cannot be resumed here: it was measured on $(hostname) (fingerprint feedfacefeed)" \
    "resume on another host"
expect_eq "$(q "SELECT count(*) FROM samples")" "$before" "nothing recorded by the refused resume"
q "UPDATE runs SET host_fingerprint = '$fingerprint' WHERE id = 1"
run_alloclab 0 resume 1 --quiet
expect_eq "$(q "SELECT status, message FROM runs WHERE id = 1")" "done|" "run status after resume"
expect_eq "$(q "SELECT count(*), count(DISTINCT step) FROM samples WHERE run_id = 1")" "$total|$total" \
    "every step recorded exactly once"
expect_eq "$(q "SELECT count(*) FROM stats WHERE run_id = 1 AND metric = 't' AND n = 6")" 4 \
    "statistics of every cell over all six samples"
expect_eq "$(q "SELECT c.label, s.median FROM stats s JOIN cells c ON c.id = s.cell_id
                JOIN variants v ON v.id = s.variant_id WHERE s.metric = 't' AND v.name = 'jemalloc'
                ORDER BY c.position")" "n=1|1.0
n=2|2.0" "medians"
expect_contains "$OUT" "resumable run 1: done" "resumed table"
run_alloclab 2 resume 1
expect_contains "$ERR" "run 1 is done: only interrupted runs can be resumed" "resume of a finished run"
expect_eq "$(q "PRAGMA integrity_check")" ok "integrity"
