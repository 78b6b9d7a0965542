#!/bin/bash
# A bad spec is reported as FILE:LINE:COL with exit status 3, and nothing is written: no new
# database file, no rows in an existing one.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/bad.yaml" <<YAML
experiment: bad
command: ["$WORKLOAD", which]
allocators:
  glibc: {}
  je: {preload: jemaloc}
sample: 3
YAML

run_alloclab 3 run "$WORK/bad.yaml"
expect_eq "$ERR" "$WORK/bad.yaml:5:17: unknown allocator 'jemaloc' (did you mean 'jemalloc'?) (known: glibc, jemalloc, mimalloc, tcmalloc, tcmalloc_minimal, tbbmalloc, scudo; or an absolute path)
$WORK/bad.yaml:6:1: unknown key 'sample' (did you mean 'samples'?)" "diagnostics"
expect_eq "$OUT" "" "stdout"
[[ ! -e "$DB" ]] || fail "a bad spec created the database"

run_alloclab 3 check "$WORK/bad.yaml"

# An expansion bomb (issue 25): 340 KB within every limit of the file, 8 GB once each of its
# 40 variables repeats a 100 KB value 2000 times. Refused where each variable is written, without
# expanding it (check died of memory at 3.7 GB).
python3 - "$WORK/bomb.yaml" <<'PY'
import sys
lines = ["experiment: bomb", "command: [/bin/true]", "params:", '  a: ["%s"]' % ("x" * 100000), "env:"]
lines += ['  V%02d: "%s"' % (i, "{a}" * 2000) for i in range(40)]
lines += ["allocators: {glibc: {}}"]
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
run_alloclab 3 check "$WORK/bomb.yaml"
expect_eq "$(wc -l <<<"$ERR")" 40 "one diagnostic per variable"
expect_contains "$ERR" "$WORK/bomb.yaml:6:8: this variable expands to 200000004 bytes with each parameter at its longest value, more than the 131071 bytes an argument or a variable may have (the kernel's MAX_ARG_STRLEN)" \
    "the bomb, at its first variable"
run_alloclab 3 run "$WORK/bomb.yaml"
[[ ! -e "$DB" ]] || fail "a bomb created the database"

# With an existing database: nothing changes.
cat >"$WORK/good.yaml" <<YAML
experiment: good
command: ["$WORKLOAD", which]
allocators: {glibc: {}}
samples: 1
YAML
run_alloclab 0 run "$WORK/good.yaml" --quiet
before=$(q "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM samples), (SELECT count(*) FROM specs)")
run_alloclab 3 run "$WORK/bad.yaml"
expect_eq "$(q "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM samples), (SELECT count(*) FROM specs)")" \
    "$before" "rows after a bad spec"

# A missing program is an environment error (4), found before anything is written.
cat >"$WORK/missing.yaml" <<YAML
experiment: missing
command: [no-such-program-for-alloclab]
allocators: {glibc: {}}
YAML
run_alloclab 4 run "$WORK/missing.yaml"
expect_eq "$ERR" "$WORK/missing.yaml:2:10: cannot run 'no-such-program-for-alloclab': No such file or directory" "missing program, at the key that names it"
run_alloclab 4 check "$WORK/missing.yaml"
expect_eq "$(q "SELECT count(*) FROM runs")" 1 "runs after a missing program"
run_alloclab 3 check "$WORK/does-not-exist.yaml"
expect_contains "$ERR" "No such file or directory" "missing spec file"

# Every missing file of a spec is named at once, each once, where the spec names it: a user
# fixes the spec in one pass. The experiment's command is one problem, not one per variant.
cat >"$WORK/several.yaml" <<YAML
experiment: several
command: [no-such-program-for-alloclab, "{n}"]
params: {n: [1, 2]}
stdin: no-such-input.txt
cleanup: [no-such-cleanup-for-alloclab]
allocators:
  glibc: {}
  je: {preload: /no/such/libjemalloc.so.2}
  own: {command: [no-such-own-program]}
YAML
for command in check run; do
    run_alloclab 4 $command "$WORK/several.yaml"
    expect_eq "$ERR" "$WORK/several.yaml:8:17: variant je: cannot preload /no/such/libjemalloc.so.2: No such file or directory
$WORK/several.yaml:2:10: cannot run 'no-such-program-for-alloclab': No such file or directory
$WORK/several.yaml:5:10: cleanup: cannot run 'no-such-cleanup-for-alloclab': No such file or directory
$WORK/several.yaml:4:8: stdin: cannot read 'no-such-input.txt': No such file or directory
$WORK/several.yaml:9:18: variant own: cannot run 'no-such-own-program': No such file or directory" \
        "$command names every missing file of a spec once"
done
expect_eq "$(q "SELECT count(*) FROM runs")" 1 "runs after a spec with missing files"

# A directory as the command is searchable (X_OK) but no program: check refuses it.
mkdir "$WORK/a-directory"
cat >"$WORK/dir.yaml" <<YAML
experiment: dir
command: ["$WORK/a-directory"]
allocators: {glibc: {}}
YAML
run_alloclab 4 check "$WORK/dir.yaml"
expect_eq "$ERR" "$WORK/dir.yaml:2:10: cannot run '$WORK/a-directory': Is a directory" "a directory as command"

# metrics: every mistake at its place, at once: a pattern that does not compile, one with two
# groups, stderr without a pattern, a unit too long, an unknown key (with its suggestion).
cat >"$WORK/metrics.yaml" <<YAML
experiment: metrics
command: [/bin/true]
allocators: {glibc: {}}
metrics:
  a: {pattern: 'ops: ([0-9]+'}
  b: {pattern: '(a)(b)'}
  c: {from: stderr}
  d: {unit: "$(printf 'u%.0s' $(seq 33))"}
  e: {beter: higher}
YAML
run_alloclab 3 check "$WORK/metrics.yaml"
expect_contains "$ERR" "$WORK/metrics.yaml:5:16: pattern is not a POSIX extended regular expression: " "a pattern that does not compile"
expect_contains "$ERR" "$WORK/metrics.yaml:6:16: pattern has 2 groups: the value is its one group's text, or the whole match without a group" "two groups"
expect_contains "$ERR" "$WORK/metrics.yaml:7:6: metric c: from needs a pattern" "stderr without a pattern"
expect_contains "$ERR" "$WORK/metrics.yaml:8:13: unit must be 1-32 printable bytes" "a long unit"
expect_contains "$ERR" "$WORK/metrics.yaml:9:7: unknown key 'beter' (did you mean 'better'?)" "an unknown key"
expect_eq "$(wc -l <<<"$ERR")" 5 "every mistake once"

# verify_ignore: a pattern that does not compile at its place; and nothing to ignore under verify none.
printf 'experiment: vi\ncommand: [/bin/true]\nallocators: {glibc: {}}\nverify_ignore: ["a(", ok]\n' >"$WORK/vi.yaml"
run_alloclab 3 check "$WORK/vi.yaml"
expect_contains "$ERR" "$WORK/vi.yaml:4:17: verify_ignore pattern is not a POSIX extended regular expression: " "a bad pattern"
printf 'experiment: vi\ncommand: [/bin/true]\nallocators: {glibc: {}}\nverify: none\nverify_ignore: [x]\n' >"$WORK/vi.yaml"
run_alloclab 3 check "$WORK/vi.yaml"
expect_eq "$ERR" "$WORK/vi.yaml:5:16: verify_ignore needs a verified output: verify is none" "verify_ignore under verify none"

# Perl's \\d compiles as the letter d in POSIX ERE: refused with the class to write (on 19d64e5: ok).
printf 'experiment: pd\ncommand: [/bin/true]\nallocators: {glibc: {}}\nmetrics: {t: {pattern: "t: (\\\\d+)"}}\n' >"$WORK/pd.yaml"
run_alloclab 3 check "$WORK/pd.yaml"
expect_eq "$ERR" "$WORK/pd.yaml:4:24: pattern: '\\d' is Perl's, not POSIX extended regular expression syntax (it would match the letter 'd'): write [0-9]" "Perl's \\d"

# A Python one-liner's braces: the remedy is said (on 19d64e5: "placeholder is not a parameter name").
cat >"$WORK/braces.yaml" <<'YAML'
experiment: braces
command: [python3, -c, "print([{'k': i} for i in range(3)])"]
allocators: {glibc: {}}
YAML
run_alloclab 3 check "$WORK/braces.yaml"
expect_contains "$ERR" "placeholder is not a parameter name (write '{{' and '}}' for literal braces)" "literal braces, how"
