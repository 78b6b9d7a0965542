#!/bin/bash
# The quiet-machine guard (spec quiet): with CPU hogs running, the CPU pressure rises past the
# spec's limit; the runner waits its bounded time, then runs and marks each sample noisy, and
# records what it read. The reading happens between children only. Other work while a sample
# runs marks it too; the run's own children never do.
. "$(dirname "$0")/lib.sh"
[[ -r /proc/pressure/cpu ]] || skip_test "no PSI (/proc/pressure/cpu) on this kernel: the guard has nothing to read"

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
expect_contains "$OUT" "Quiet-machine guard: all 3 measured samples met a machine busier than the guard allows" \
    "noisy samples shown"
run_alloclab 0 show --format json
expect_eq "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["cells"][0]["results"]["glibc"]["noisy_samples"])' <<<"$OUT")" \
    3 "noisy samples in json"
# All of them noisy: one line, not one per cell and variant (a quick run of 4 cells x 2 variants
# printed 16); and no word of a spec that a quick run does not have.
# The default guard judges the sample by the other work while it ran: a sample long enough for
# the kernel's tick counters to see the hogs past their slack ((CPUs + 2) ticks: 40 ms on 2 CPUs).
# A spin of 240 million turns takes 220 ms alone here; 60 million (55 ms) left a sample the
# scheduler ran uncontested under the slack, not noisy, one run in three.
run_alloclab 0 quick -a glibc,jemalloc --param n=240000000,240000001,240000002,240000003 -r 2 -w 0 --quiet -- \
    "$WORKLOAD" spin '{n}'
run_alloclab 0 show
guard=$(sed -n '/^Quiet-machine guard/,/^$/p' <<<"$OUT")
expect_contains "$guard" "all 16 measured samples met a machine busier" "one summary line"
expect_contains "$guard" "other processes or the hypervisor took more than 0.25 CPUs while a sample ran" "the default limit"
# Who took the time: the hogs are processes; where the hypervisor's steal was larger (a VM whose
# host is busy), the line says so instead.
steal_most=$(q "SELECT count(*) FROM samples WHERE phase = 'sample' AND noisy AND steal_ns > other_cpu_ns
                AND run_id = (SELECT max(id) FROM runs)")
if ((steal_most == 0)); then
    expect_contains "$guard" "; other processes took the time in 16; they are kept" "who took the machine"
else
    expect_contains "$guard" "the hypervisor (steal) in" "who took the machine: the hypervisor's steal"
fi
expect_eq "$(grep -c . <<<"$guard")" 1 "the summary alone"
[[ $guard != *"the spec's"* ]] || fail "a quick run's guard speaks of a spec: $guard"
expect_contains "$guard" "a spec sets other limits with quiet:, and quick --print-spec writes one" "what a quick user can do"

# on_busy: skip: a sample the machine stays too busy for is not run, and says why.
sed 's/max_wait: 300ms}/max_wait: 200ms, on_busy: skip}/' "$WORK/spec.yaml" >"$WORK/skip.yaml"
run_alloclab 1 run "$WORK/skip.yaml" --quiet
expect_eq "$(q "SELECT count(*), min(status), max(status), sum(noisy), max(wall_ns) FROM samples
                WHERE phase = 'sample' AND run_id = (SELECT max(id) FROM runs)")" \
    "3|skipped-busy|skipped-busy|3|0" "busy: skipped"
run_alloclab 0 show
expect_contains "$OUT" "skipped-busy: not run: still busy after 0.2 s (CPU pressure" "skip reason shown"
# Skipped samples are not "kept", and the machine was judged before they started.
expect_contains "$OUT" "the machine was above the limits before it started in 3 (CPU pressure and load count the run's own children too); none of them was run (on_busy: skip)" \
    "skipped samples said as skipped, and why"
[[ $OUT != *"kept and marked noisy"* ]] || fail "skipped samples said to be kept: $OUT"

# Without a quiet: key the guard marks what other work shared the machine with, and never waits;
# quiet: off turns it off.
sed -e '/^quiet:/d' -e 's/exit, "0"/spin, "240000000"/' "$WORK/spec.yaml" >"$WORK/default.yaml"
run_alloclab 0 run "$WORK/default.yaml" --quiet
expect_eq "$(q "SELECT count(*), sum(noisy), min(other_cpu_ns > cpu_us * 1000 / 2), max(quiet_wait_ns) < 50000000 FROM samples
                WHERE phase = 'sample' AND run_id = (SELECT max(id) FROM runs)")" \
    "3|3|1|1" "default guard: marks the other work it saw, does not wait (its 100 ms poll never runs)"
printf 'quiet: off\n' >>"$WORK/default.yaml"
run_alloclab 0 run "$WORK/default.yaml" --quiet
expect_eq "$(q "SELECT count(*), count(noisy), count(other_cpu_ns) FROM samples WHERE phase = 'sample' AND run_id = (SELECT max(id) FROM runs)")" \
    "3|0|0" "quiet: off"

# Without the hogs the same spec finds the machine quiet enough within a generous wait: only
# where nothing else keeps it busy.
stop_hogs
for _ in $(seq 200); do # the 10 s average of the hogs' pressure takes a while to fade
    awk '{ split($2, a, "="); exit !(a[2] <= 5) }' /proc/pressure/cpu && break
    sleep 0.2
done
if machine_is_quiet; then
    sed -i 's/max_wait: 300ms/max_wait: 60s/' "$WORK/spec.yaml"
    run_alloclab 0 run "$WORK/spec.yaml" --quiet
    expect_eq "$(q "SELECT count(*), sum(noisy), max(cpu_some_avg10) <= 5 FROM samples WHERE phase = 'sample' AND run_id = (SELECT max(id) FROM runs)")" \
        "3|0|1" "quiet: not noisy"
else
    skip_part "a quiet machine found quiet: $QUIET_REASON"
fi

# The run's own load is not the machine's: 4 busy threads on fewer CPUs raise the CPU pressure
# past 10% by themselves (it marked 28 of 28 samples noisy, and on_busy: skip skipped them), but
# the guard counts only what is not the run's.
cat >"$WORK/threads.yaml" <<YAML
experiment: own-load
command: ["$WORKLOAD", threads, "4", "1000000"]
allocators: {glibc: {}}
samples: 6
verify: none
YAML
sed 's/^verify: none$/verify: none\nquiet: {on_busy: skip, max_wait: 5s}/' "$WORK/threads.yaml" >"$WORK/threads-skip.yaml"
for spec in threads threads-skip; do
    if ! machine_is_quiet; then
        skip_part "the run's own threads are not other work ($spec): $QUIET_REASON"
        continue
    fi
    run_alloclab 0 run "$WORK/$spec.yaml" --quiet
    run=$(q "SELECT max(id) FROM runs")
    # Its own children's CPU time is never counted as other work, quiet machine or not.
    expect_eq "$(q "SELECT count(*), sum(other_cpu_ns < cpu_us * 1000 / 4) FROM samples WHERE run_id = $run AND phase = 'sample'")" \
        "6|6" "$spec: the children's CPU time is the run's own"
    # Marked with other work or steal of a quarter CPU or more while it ran: a load that came
    # (the hypervisor's steal is invisible to machine_is_quiet), a reason to skip; marked or
    # skipped without: blamed on the run's own threads, a failure on a quiet machine.
    noisy=$(q "SELECT count(*) FROM samples WHERE run_id = $run AND phase = 'sample' AND (noisy OR status = 'skipped-busy')")
    seen=$(q "SELECT count(*) FROM samples WHERE run_id = $run AND phase = 'sample' AND noisy
              AND (other_cpu_ns + steal_ns) * 4 > wall_ns")
    if ((noisy == 0)); then
        : # judged quiet, as it was
    elif ((seen == noisy)); then
        skip_part "the run's own threads are not other work ($spec): other work or the hypervisor's steal came while it ran ($seen samples)"
    elif ! machine_is_quiet; then
        skip_part "the run's own threads are not other work ($spec): another load came while it ran ($QUIET_REASON)"
    else
        fail "$spec: $noisy samples marked noisy or skipped for the run's own threads: $(q "SELECT status, noisy, wall_ns, cpu_us, other_cpu_ns, steal_ns, cpu_some_avg10 FROM samples WHERE run_id = $run AND phase = 'sample'")"
    fi
done
printf 'experiment: x\ncommand: [/bin/true]\nallocators: {glibc: {}}\nquiet: {max_cpu_some_avg10: 200}\n' >"$WORK/bad.yaml"
run_alloclab 3 check "$WORK/bad.yaml"
expect_contains "$ERR" "bad.yaml:4:29: max_cpu_some_avg10: expected a number from 0 to 100, got '200'" "bad limit"
printf 'experiment: x\ncommand: [/bin/true]\nallocators: {glibc: {}}\nquiet: {max_other_cpu: -0.5}\n' >"$WORK/bad.yaml"
run_alloclab 3 check "$WORK/bad.yaml"
expect_contains "$ERR" "bad.yaml:4:24: max_other_cpu: expected a number from 0 to 4096, got '-0.5'" "bad other-work limit"
