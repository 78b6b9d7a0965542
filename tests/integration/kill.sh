#!/bin/bash
# kill -9 of `alloclab run` in the middle of a run: the database passes integrity_check, keeps
# every sample committed before the kill, and the run shows as interrupted afterwards.
# SIGTERM instead stops cleanly: exit status 5, run interrupted, samples kept. Cgroups left by
# the killed alloclab are removed by the next run.
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
# Its cgroup outlived it (and the child in it, until the next run clears both).
killed_cgroup=$(q "SELECT cgroup FROM runs WHERE id = 1")

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
# The next run removed the cgroup of the alloclab that was killed with -9; SIGTERM left none.
if [[ -n $killed_cgroup ]]; then
    [[ ! -e $killed_cgroup ]] || fail "the cgroup of a killed alloclab is still there: $killed_cgroup"
    [[ ! -e $(q "SELECT cgroup FROM runs WHERE id = 2") ]] || fail "the cgroup of run 2 is still there"
fi
exit 0
