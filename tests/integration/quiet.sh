#!/bin/bash
# The quiet-machine guard (spec quiet): with CPU hogs running, the CPU pressure rises past the
# spec's limit; the runner waits its bounded time, then runs and marks each sample noisy, and
# records what it read. The reading happens between children only.
. "$(dirname "$0")/lib.sh"
[[ -r /proc/pressure/cpu ]] || { echo "no PSI on this kernel: nothing to test"; exit 0; }

hogs=()
stop_hogs() {
    for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
    hogs=()
}
trap 'stop_hogs; rm -rf "$WORK"' EXIT
# One more busy process than CPUs: some task is always waiting, so "some" pressure climbs.
for _ in $(seq $(( $(nproc) + 1 ))); do
    sh -c 'while :; do :; done' &
    hogs+=($!)
done
for _ in $(seq 100); do
    awk '{ split($2, a, "="); exit !(a[2] > 20) }' /proc/pressure/cpu && break
    sleep 0.1
done

cat >"$WORK/spec.yaml" <<YAML
experiment: quiet
command: ["$WORKLOAD", exit, "0"]
allocators: {glibc: {}}
samples: 3
warmup: 0
verify: none
quiet: {max_cpu_some_avg10: 5, max_wait: 300ms}
YAML
run_alloclab 0 run "$WORK/spec.yaml" --quiet
expect_eq "$(q "SELECT count(*), sum(noisy), min(cpu_some_avg10) > 5, min(quiet_wait_ns) >= 300000000
                FROM samples WHERE phase = 'sample'")" "3|3|1|1" "busy: waited, then ran and marked noisy"
expect_eq "$(q "SELECT count(*) FROM samples WHERE phase = 'smoke' AND noisy IS NULL")" 1 "only measured samples are guarded"
run_alloclab 0 show
expect_contains "$OUT" "Quiet-machine guard: 3 of 3 measured samples started on a busier machine" "noisy samples shown"
run_alloclab 0 show --format json
expect_eq "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["cells"][0]["results"]["glibc"]["noisy_samples"])' <<<"$OUT")" \
    3 "noisy samples in json"

# Without the hogs the same spec finds the machine quiet enough within a generous wait.
stop_hogs
sed -i 's/max_wait: 300ms/max_wait: 60s/' "$WORK/spec.yaml"
run_alloclab 0 run "$WORK/spec.yaml" --quiet
expect_eq "$(q "SELECT count(*), sum(noisy), max(cpu_some_avg10) <= 5 FROM samples WHERE phase = 'sample' AND run_id = 2")" \
    "3|0|1" "quiet: not noisy"
printf 'experiment: x\ncommand: [/bin/true]\nallocators: {glibc: {}}\nquiet: {max_cpu_some_avg10: 200}\n' >"$WORK/bad.yaml"
run_alloclab 3 check "$WORK/bad.yaml"
expect_contains "$ERR" "bad.yaml:4:29: max_cpu_some_avg10: expected a number from 0 to 100, got '200'" "bad limit"
