#!/bin/bash
# A child that hangs, with a grandchild in its process group: both are killed at the timeout,
# the sample is recorded as a timeout, and the run goes on with the next variant.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/spec.yaml" <<YAML
experiment: hang
command: ["$WORKLOAD", which]
allocators:
  good: {}
  hanger: {command: ["$WORKLOAD", hang, "$WORK/grandchild.pid"]}
samples: 2
warmup: 0
timeout: 500ms
YAML

start=$(date +%s%N)
run_alloclab 9 run "$WORK/spec.yaml" --quiet
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
expect_contains "$OUT" "TIMEOUT" "timeout mark in the table"
# The smoke run is the probed one, slower than a sample: a timeout there says so.
expect_contains "$OUT" "timeout: killed at the timeout after 0.5" "the smoke run's timeout"
expect_contains "$OUT" "in the smoke run, which counts every allocator call under the probe" "and why it may come there first"

expect_eq "$(q "SELECT s.status, s.wall_ns >= 500000000, s.wall_ns < 5000000000 FROM samples s JOIN variants v ON v.id = s.variant_id WHERE v.name = 'hanger'")" \
    "timeout|1|1" "hanger sample"
expect_eq "$(q "SELECT count(*) FROM samples s JOIN variants v ON v.id = s.variant_id WHERE v.name = 'good' AND s.status = 'ok'")" \
    3 "good variant measured after the timeout"
[[ -s "$WORK/grandchild.pid" ]] || fail "the grandchild never started"
grandchild=$(cat "$WORK/grandchild.pid")
# The grandchild was re-parented when its parent died; give init a moment to reap it.
for _ in $(seq 50); do
    [[ -e /proc/$grandchild ]] && grep -q '^State:.*Z' /proc/$grandchild/status 2>/dev/null && break
    [[ -e /proc/$grandchild ]] || break
    sleep 0.1
done
if [[ -e /proc/$grandchild ]] && ! grep -q '^State:.*Z' /proc/$grandchild/status; then
    fail "grandchild $grandchild survived the timeout"
fi
(( elapsed_ms < 20000 )) || fail "the run took ${elapsed_ms} ms"
