#!/bin/bash
# A workload whose output depends on the allocator (malloc_usable_size(malloc(1)): 24 under
# glibc, 8 under jemalloc) is flagged as a mismatch against the glibc reference.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/spec.yaml" <<YAML
experiment: mismatch
command: ["$WORKLOAD", usable]
allocators:
  glibc: {}
  jemalloc: {preload: jemalloc}
samples: 3
YAML

run_alloclab 9 run "$WORK/spec.yaml" --quiet
expect_contains "$OUT" "MISMATCH" "mismatch mark in the table"
expect_contains "$OUT" "output differs from the reference at byte 0 (2 bytes, reference 3)" "mismatch detail"
expect_eq "$(q "SELECT s.phase, s.status, s.mismatch_offset, s.output_size, s.reference_size FROM samples s JOIN variants v ON v.id = s.variant_id WHERE v.name = 'jemalloc'")" \
    "smoke|mismatch|0|2|3" "jemalloc smoke sample"
expect_eq "$(q "SELECT count(*) FROM samples s JOIN variants v ON v.id = s.variant_id WHERE v.name = 'glibc' AND s.status = 'ok'")" \
    5 "glibc samples"
# The line where the outputs part, of each: what varies shows (it said only "at byte 0").
expect_eq "$(q "SELECT reason FROM exclusions")" \
    "mismatch: output differs from the reference at byte 0 (2 bytes, reference 3), line 1: the reference has '24', this run '8'" \
    "exclusion reason, with the lines"

# verify: none turns the check off: both variants are measured.
sed -i 's/^samples: 3/samples: 3\nverify: none/' "$WORK/spec.yaml"
run_alloclab 0 run "$WORK/spec.yaml" --quiet
expect_eq "$(q "SELECT count(*) FROM samples WHERE run_id = 2 AND status = 'ok'")" 10 "samples without verification"

# Output that differs from run to run whatever the allocator (here the 4th child of the run):
# the failed sample is listed, and the run says the output is not deterministic and what to do.
rm -f "$WORK/count"
cat >"$WORK/flaky.yaml" <<YAML
experiment: flaky
command: [sh, -c, 'n=\$((\$(cat "$WORK/count" 2>/dev/null || echo 0) + 1)); echo \$n >"$WORK/count"; [ \$n = 4 ] && echo other || echo same']
allocators: {glibc: {}, twin: {}}
samples: 3
warmup: 0
YAML
run_alloclab 1 run "$WORK/flaky.yaml" --quiet
expect_contains "$OUT" "[-] twin: the output is not deterministic: 1 sample differed from the reference's and 2 matched; leave the lines that vary out of the comparison (verify_ignore: ['^seed ']), verify a file the program writes the same every time (verify: file:PATH), or turn verification off (verify: none)" \
    "non-deterministic output explained"

# A program that prints a random number: even the baseline's own samples differ from its
# reference run, every sample fails, and the run says why (on b92b5e7: 6 MISMATCH lines, no word
# of why, since the hint needed some sample that matched).
cat >"$WORK/random.yaml" <<YAML
experiment: random
command: [python3, -c, 'import random; print(random.random())']
allocators: {glibc: {}, twin: {}}
samples: 3
warmup: 0
YAML
run_alloclab 9 run "$WORK/random.yaml" --quiet
expect_contains "$OUT" "[-] the output is not deterministic: 3 of the baseline glibc's own runs failed, the first a mismatch with the reference run's output, so no variant's output can be checked against it; leave the lines" \
    "a random output explained"
[[ $OUT != *"twin: the output is not deterministic"* ]] || fail "said twice: $OUT"
# From quick, the advice is what quick can do (it has no verify: key to set).
run_alloclab 9 quick -a glibc,twin=glibc -r 2 -w 0 --quiet -- python3 -c 'import random; print(random.random())'
expect_contains "$OUT" "or turn verification off (--verify none); a spec can leave the lines that vary out (verify_ignore) or verify a file instead (quick --print-spec writes one)" \
    "quick's advice"

# A program whose output is empty matches an empty reference: nothing was compared, and the run
# says so (before, "verify stdout" without a word), per cell where only some were empty.
cat >"$WORK/empty.yaml" <<YAML
experiment: empty
command: [sh, -c, 'test {lines} = 0 || echo {lines}']
params: {lines: ["0", "1"]}
allocators: {glibc: {}, twin: {}}
samples: 2
warmup: 0
YAML
run_alloclab 0 run "$WORK/empty.yaml" --quiet
expect_contains "$OUT" "verify stdout (the output was empty in 1 of 2 cells: nothing was compared there)" "empty in one cell"
run_alloclab 0 show latest --format json
expect_eq "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["cells_nothing_verified"])' <<<"$OUT")" 1 "JSON"
run_alloclab 0 quick -a glibc,twin=glibc -r 2 -w 0 --quiet -- /bin/true
expect_contains "$OUT" "verify stdout (the output was empty: nothing was compared)" "empty everywhere"
run_alloclab 0 quick -a glibc,twin=glibc -r 2 -w 0 --quiet -- echo hi
[[ $OUT != *"nothing was compared"* ]] || fail "a note for an output that was compared: $OUT"

# Output that holds timings: every sample mismatched, the reference's own variant's included; with
# verify_ignore the varying lines are left out of the comparison, what was left out is said, and a
# real difference still mismatches (on ab58ed7 the only remedy was verify: none).
cat >"$WORK/timed.yaml" <<YAML
experiment: timed
command: [sh, -c, 'echo "result \$RESULT"; echo "elapsed \$(date +%N) ns"']
env: {RESULT: "42"}
allocators:
  glibc: {}
  jemalloc: {}
  wrong: {preload: glibc, env: {RESULT: "43"}}
samples: 2
warmup: 0
YAML
run_alloclab 9 run "$WORK/timed.yaml" --quiet --db "$WORK/timed.db"
expect_eq "$(sqlite3 "$WORK/timed.db" "SELECT DISTINCT status FROM samples WHERE phase = 'sample' AND variant_id IN (SELECT id FROM variants WHERE name = 'glibc')")" \
    mismatch "without verify_ignore, the reference's own variant mismatches"
printf "verify_ignore: ['^elapsed [0-9]+ ns$']\n" >>"$WORK/timed.yaml"
run_alloclab 9 run "$WORK/timed.yaml" --db "$WORK/timed.db"
expect_eq "$(sqlite3 "$WORK/timed.db" "SELECT v.name, group_concat(DISTINCT s.status) FROM samples s JOIN variants v ON v.id = s.variant_id
             WHERE s.run_id = 2 GROUP BY v.name ORDER BY v.position")" \
    "glibc|ok
jemalloc|ok
wrong|mismatch" "the varying line left out; a real difference still found (at the smoke run)"
expect_contains "$OUT" "verify stdout, without the lines matching '^elapsed [0-9]+ ns\$'" "what was left out, said"
# The difference is located in what verify_ignore left (not in stdout, whose lines it shifts).
expect_contains "$OUT" "mismatch: what verify_ignore left of the output differs from the reference's at byte 8 (10 bytes, reference 10), line 1: the reference has 'result 42', this run 'result 43'" \
    "where the filtered outputs part, said to be in them"
# Every line left out: nothing was compared, and not "the output was empty".
sed '/^verify_ignore:/d' "$WORK/timed.yaml" >"$WORK/all.yaml"
printf "verify_ignore: ['.']\n" >>"$WORK/all.yaml"
sed -i '/^  wrong:/d' "$WORK/all.yaml"
run_alloclab 0 run "$WORK/all.yaml" --db "$WORK/timed.db"
expect_contains "$OUT" "verify stdout (what verify_ignore left of the output was empty: nothing was compared), without the lines matching '.'" \
    "every line left out"
run_alloclab 0 show 2 --db "$WORK/timed.db" --format json
expect_eq "$(/usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["verify_ignore"])' <<<"$OUT")" \
    "['^elapsed [0-9]+ ns\$']" "JSON lists the patterns"
