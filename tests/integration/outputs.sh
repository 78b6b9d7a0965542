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
run_alloclab 9 run "$WORK/file.yaml" --quiet
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
run_alloclab 9 run "$WORK/flood.yaml" --quiet
expect_contains "$OUT" "OUTPUT-LIMIT" "table mark"
expect_eq "$(q "SELECT s.status, s.output_size FROM samples s JOIN runs r ON r.id = s.run_id
                JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'flood'")" \
    "output-limit|5000" "output limit"

# A sparse 4 GiB output (stdout's memfd, or the verified file): output-limit from its size alone,
# and alloclab's memory stays bounded (it hashed every byte of it on 63f6da7, whatever the limit).
mkdir "$WORK/sparse"
cat >"$WORK/sparse.yaml" <<YAML
experiment: sparse
command: [python3, -c, "import os; os.ftruncate(1, 1 << 32) if '{where}' == 'stdout' else open('big', 'w').truncate(1 << 32)"]
cwd: "$WORK/sparse"
params: {where: [stdout, file]}
allocators: {glibc: {}}
samples: 1
warmup: 0
YAML
# peak_rss_kib CMD...: runs CMD and prints its peak RSS (its own, children excluded).
peak_rss_kib() {
    python3 - "$@" <<'PY'
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(p.pid, 0)
print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))
PY
}
read -r rss rc < <(peak_rss_kib "$ALLOCLAB" run "$WORK/sparse.yaml" --quiet)
expect_eq "$rc" 9 "exit code of a run whose variant was excluded for output-limit"
(( rss < 512 * 1024 )) || fail "alloclab's peak RSS was $rss KiB for a sparse 4 GiB output"
expect_eq "$(q "SELECT s.status, s.output_size FROM samples s JOIN runs r ON r.id = s.run_id
                JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'sparse' ORDER BY s.id")" \
    "output-limit|4294967296
ok|0
ok|0" "sparse stdout (and the other cell's empty stdout)"
sed -i 's|^samples: 1|samples: 1\nverify: file:big|' "$WORK/sparse.yaml"
read -r rss rc < <(peak_rss_kib "$ALLOCLAB" run "$WORK/sparse.yaml" --quiet)
expect_eq "$rc" 9 "exit code of a run whose variant was excluded for an over-limit output file"
(( rss < 512 * 1024 )) || fail "alloclab's peak RSS was $rss KiB for a sparse 4 GiB output file"
expect_eq "$(q "SELECT s.status FROM samples s JOIN runs r ON r.id = s.run_id
                JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'sparse' ORDER BY s.id DESC LIMIT 1")" \
    "output-limit" "sparse verified file"

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
run_alloclab 9 run "$WORK/stop.yaml" --quiet
expect_eq "$(q "SELECT r.status, r.message FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'stop'")" \
    "failed|stopped at the first failure (on_failure: stop)" "stopped run"
expect_eq "$(q "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'stop'")" \
    2 "samples until the stop (the good smoke run, the failing one)"

# A cwd that does not exist is found before anything runs.
sed -i "s|cwd: \"$WORK/cwd\"|cwd: \"$WORK/nowhere\"|" "$WORK/file.yaml"
run_alloclab 4 run "$WORK/file.yaml" --quiet
expect_eq "$ERR" "$WORK/file.yaml:3:6: cwd '$WORK/nowhere' is not a directory" "missing cwd, at the key that names it"
