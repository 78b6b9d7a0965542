#!/bin/bash
# kill -9 of `alloclab run` in the middle of a run: the database passes integrity_check, keeps
# every sample committed before the kill, and the run shows as interrupted afterwards.
# SIGTERM instead stops cleanly: exit status 5, run interrupted, samples kept.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/spec.yaml" <<YAML
experiment: killed
command: ["$WORKLOAD", sleep, "100"]
allocators: {glibc: {}, jemalloc: {preload: jemalloc}}
samples: 50
warmup: 0
YAML

wait_for_samples() {
    for _ in $(seq 200); do
        [[ -f "$DB" ]] && (( $(q "SELECT count(*) FROM samples WHERE run_id = $1" 2>/dev/null || echo 0) >= $2 )) && return 0
        sleep 0.05
    done
    fail "run $1 never reached $2 samples"
}

"$ALLOCLAB" run "$WORK/spec.yaml" --quiet >/dev/null 2>&1 &
pid=$!
wait_for_samples 1 5
kill -9 $pid
wait $pid 2>/dev/null || true
committed=$(q "SELECT count(*) FROM samples")
(( committed >= 5 )) || fail "only $committed samples survived"
expect_eq "$(q "PRAGMA integrity_check")" ok "integrity after kill -9"
expect_eq "$(q "SELECT status FROM runs WHERE id = 1")" running "status before the next open"

run_alloclab 0 runs
expect_contains "$OUT" "interrupted" "runs shows the interrupted run"
expect_eq "$(q "SELECT status FROM runs WHERE id = 1")" interrupted "status after the next open"
expect_eq "$(q "SELECT count(*) FROM samples")" "$committed" "committed samples kept"
run_alloclab 0 show 1
expect_contains "$OUT" "interrupted" "show of an interrupted run"

# SIGTERM: a clean stop.
"$ALLOCLAB" run "$WORK/spec.yaml" --quiet >/dev/null 2>"$WORK/term.err" &
pid=$!
wait_for_samples 2 3
kill -TERM $pid
rc=0
wait $pid || rc=$?
expect_eq "$rc" 5 "exit status after SIGTERM"
expect_eq "$(q "SELECT status, message FROM runs WHERE id = 2")" "interrupted|stopped by a signal" "run 2"
expect_eq "$(q "PRAGMA integrity_check")" ok "integrity after SIGTERM"
(( $(q "SELECT count(*) FROM samples WHERE run_id = 2") >= 3 )) || fail "samples of run 2 lost"
# The child being timed when SIGTERM arrived was killed, not left behind.
sleep 0.3
pgrep -f "$WORKLOAD sleep" >/dev/null && fail "a child outlived alloclab"
exit 0
