#!/bin/bash
# CPU placement (spec cpus): children pinned before exec (their Cpus_allowed_list says so),
# auto away from CPU 0, the placement recorded and shown, an unavailable CPU refused.
. "$(dirname "$0")/lib.sh"

allowed=$(grep Cpus_allowed_list /proc/self/status | cut -f2)
last=$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')
cat >"$WORK/spec.yaml" <<YAML
experiment: cpus
command: [sh, -c, 'grep Cpus_allowed_list /proc/self/status >"$WORK/child.cpus"']
allocators: {glibc: {}}
samples: 1
warmup: 0
verify: none
cpus: [$last]
YAML
run_alloclab 0 run "$WORK/spec.yaml" --quiet
expect_eq "$(cut -f2 "$WORK/child.cpus")" "$last" "the child runs on the listed CPU"
expect_eq "$(q "SELECT cpus FROM runs WHERE id = 1")" "$last" "placement recorded"
run_alloclab 0 show 1
expect_contains "$OUT" "cpus: children pinned to $last, alloclab on " "placement shown"

if (( $(python3 -c 'import os; print(len(os.sched_getaffinity(0)))') >= 2 )); then
    sed -i "s/^cpus: .*/cpus: auto/" "$WORK/spec.yaml"
    run_alloclab 0 run "$WORK/spec.yaml" --quiet
    expect_eq "$(cut -f2 "$WORK/child.cpus")" "$last" "auto: the highest CPU, away from CPU 0"
    runner=$(q "SELECT runner_cpus FROM runs WHERE id = 2")
    [[ -n $runner && $runner != *"$last"* ]] || fail "auto: alloclab stays off the child's CPU ($runner)"
fi

# Without cpus the child may run anywhere alloclab may.
sed -i "/^cpus:/d" "$WORK/spec.yaml"
run_alloclab 0 run "$WORK/spec.yaml" --quiet
expect_eq "$(cut -f2 "$WORK/child.cpus")" "$allowed" "no pinning by default"
expect_eq "$(q "SELECT cpus IS NULL FROM runs ORDER BY id DESC LIMIT 1")" 1 "nothing recorded"

printf 'cpus: [%d]\n' $((last + 1)) >>"$WORK/spec.yaml"
run_alloclab 4 run "$WORK/spec.yaml" --quiet
expect_contains "$ERR" "cpus: CPU $((last + 1)) is not available here (allowed: $allowed)" "unavailable CPU"
printf 'experiment: x\ncommand: [/bin/true]\nallocators: {glibc: {}}\ncpus: [1, 1]\n' >"$WORK/twice.yaml"
run_alloclab 3 check "$WORK/twice.yaml"
expect_contains "$ERR" "twice.yaml:4:11: cpus: CPU 1 is listed twice" "duplicate CPU"
