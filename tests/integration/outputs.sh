#!/bin/bash
# Output handling: verify: file:PATH compares the file each child writes (a file left by an
# earlier child does not count), output_limit turns a flood into a recorded failure, and
# on_failure: stop ends the run cleanly at the first failure.
. "$(dirname "$0")/lib.sh"

# verify: file:PATH, relative to the child's cwd, with a parameter in it.
mkdir "$WORK/cwd"
cat >"$WORK/file.yaml" <<YAML
experiment: verify-file
command: ["$WORKLOAD", env, "out-{n}.txt"]
cwd: "$WORK/cwd"
params: {n: [1, 2]}
env: {SAME: "x"}
allocators:
  a: {}
  b: {env: {EXTRA: "differs"}}
  c: {command: [/bin/true]}
verify: file:out-{n}.txt
samples: 2
YAML
run_alloclab 1 run "$WORK/file.yaml" --quiet
# a: the reference; b writes a different environment; c writes nothing, and the file a left
# behind must not be taken for its output.
expect_eq "$(q "SELECT v.name, s.status FROM samples s JOIN variants v ON v.id = s.variant_id
                WHERE s.phase = 'smoke' ORDER BY s.id")" \
    "a|ok
b|mismatch
c|no-output-file
a|ok
b|mismatch
c|no-output-file" "verify: file"
[[ -f "$WORK/cwd/out-2.txt" ]] || fail "the child did not run in its cwd"

# output_limit
cat >"$WORK/flood.yaml" <<YAML
experiment: flood
command: [/bin/sh, -c, "head -c 5000 /dev/zero"]
allocators: {glibc: {}}
output_limit: 4K
YAML
run_alloclab 1 run "$WORK/flood.yaml" --quiet
expect_contains "$OUT" "OUTPUT-LIMIT" "table mark"
expect_eq "$(q "SELECT s.status, s.output_size FROM samples s JOIN runs r ON r.id = s.run_id
                JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'flood'")" \
    "output-limit|5000" "output limit"

# on_failure: stop
cat >"$WORK/stop.yaml" <<YAML
experiment: stop
command: ["$WORKLOAD", which]
params: {n: [1, 2, 3]}
allocators:
  good: {}
  bad: {command: ["$WORKLOAD", exit, "7"]}
on_failure: stop
samples: 2
YAML
run_alloclab 1 run "$WORK/stop.yaml" --quiet
expect_eq "$(q "SELECT r.status, r.message FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'stop'")" \
    "failed|stopped at the first failure (on_failure: stop)" "stopped run"
expect_eq "$(q "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'stop'")" \
    2 "samples until the stop (the good smoke run, the failing one)"

# A cwd that does not exist is found before anything runs.
sed -i "s|cwd: \"$WORK/cwd\"|cwd: \"$WORK/nowhere\"|" "$WORK/file.yaml"
run_alloclab 4 run "$WORK/file.yaml" --quiet
expect_eq "$ERR" "alloclab run: variant a: cwd '$WORK/nowhere' is not a directory" "missing cwd"
