#!/bin/bash
# alloclab quick (an experiment from the command line) and the spec's hooks and stdin: setup,
# prepare and cleanup run where docs/spec.md says, outside the clock, without the preload; a
# failing hook is recorded as such; stdin feeds every child afresh.
. "$(dirname "$0")/lib.sh"
cd "$WORK"

# --- quick: measures, stores, and its spec round-trips through a file -------------------------
run_alloclab 0 quick -a glibc,jemalloc -r 3 -w 0 --quiet -- "$WORKLOAD" which
grep -Eq "quick-alloclab-workload-[0-9a-f]{6} run 1: done" <<<"$OUT" || fail "quick's header: $OUT"
expect_contains "$OUT" "jemalloc" "quick's table"
expect_eq "$(q "SELECT count(*) FROM samples WHERE phase = 'sample' AND status = 'ok'")" 6 "3 samples x 2 variants"
expect_contains "$(q 'SELECT yaml FROM specs')" "# Made by alloclab quick" "the stored spec"

run_alloclab 0 quick -a glibc,je=jemalloc -e je:MALLOC_CONF=narenas:2 --param n=10,20 -r 1 -w 0 --name vals \
    --print-spec -- "$WORKLOAD" vallocs '{n}' '{literal}'
printf '%s\n' "$OUT" >vals.yaml
expect_contains "$OUT" '"{n}", "{{literal}}"' "a --param stays a template, other braces are literal"
expect_contains "$OUT" '"je": {preload: "jemalloc", env: {"MALLOC_CONF": "narenas:2"}}' "a named variant with its env"
expect_eq "$(q 'SELECT count(*) FROM runs')" 1 "--print-spec runs nothing"
run_alloclab 0 check vals.yaml
expect_contains "$OUT" "2 cells x 2 variants" "the printed spec as a file"

# A lone operand with shell syntax runs with sh -c.
run_alloclab 0 quick -a glibc -r 1 -w 0 --quiet --name shell 'echo {x} | tr x y'
expect_contains "$(q "SELECT yaml FROM specs JOIN runs ON runs.spec_id = specs.id WHERE runs.id = 2")" \
    'command: "echo {{x}} | tr x y"' "the shell command"

# One experiment per command: the same program with other arguments is another experiment (its
# history never joins this one's), the same command again continues it (on 7d4db64 both were
# quick-alloclab-workload, and history compared one command with the other).
first=$(q "SELECT name FROM experiments ORDER BY id LIMIT 1")
run_alloclab 0 quick -a glibc -r 1 -w 0 --quiet -- "$WORKLOAD" which
expect_eq "$(q "SELECT count(*) FROM runs r JOIN experiments x ON x.id = r.experiment_id WHERE x.name = '$first'")" 2 \
    "the same command continues its experiment"
run_alloclab 0 quick -a glibc -r 1 -w 0 --quiet -- "$WORKLOAD" spin 1000
other=$(q "SELECT x.name FROM runs r JOIN experiments x ON x.id = r.experiment_id ORDER BY r.id DESC LIMIT 1")
[[ $other == quick-alloclab-workload-* && $other != "$first" ]] || fail "other arguments, same experiment: $other"
# A program whose name is long: its experiment name is cut to leave room for the hash.
long="$WORK/$(printf 'a%.0s' $(seq 70))"
ln -s /bin/true "$long"
run_alloclab 0 quick -a glibc --print-spec -- "$long"
printf '%s\n' "$OUT" >long.yaml
run_alloclab 0 check long.yaml
# hyperfine's habit, two commands as two operands: said what quick measures, nothing run.
runs_now=$(q 'SELECT count(*) FROM runs')
run_alloclab 2 quick -a glibc 'sort -n' 'sort -r'
expect_contains "$ERR" "'sort -n' and what follows look like several commands (hyperfine's habit)" "two commands refused"
expect_eq "$(q 'SELECT count(*) FROM runs')" "$runs_now" "nothing run for them"

# Bad input: a clear error, nothing written.
run_alloclab 2 quick -- true
expect_contains "$ERR" "-a ALLOCATORS is required" "quick without allocators"
run_alloclab 3 quick -a glibc,jemaloc -- true
expect_contains "$ERR" "did you mean 'jemalloc'" "a misspelt allocator"
expect_contains "$ERR" "--print-spec" "where the position points"
run_alloclab 2 quick -a glibc --label $'a\tb' -- true
expect_eq "$(q 'SELECT count(*) FROM runs')" 4 "runs after the refusals"

# --- hooks: where they run, and with what -----------------------------------------------------
cat >hooks.yaml <<YAML
experiment: hooks
command: "cat > got-\$V-{n}.txt"
params: {n: [1, 2]}
setup: "echo setup {n} \$V \${{LD_PRELOAD:-nopreload}} >> log; printf 'input {n}' > in-{n}.txt"
prepare: ["sh", "-c", "echo prepare {n} \$V >> log"]
cleanup: "echo cleanup {n} \$V >> log"
stdin: in-{n}.txt
allocators:
  glibc: {env: {V: glibc}}
  jemalloc: {preload: jemalloc, env: {V: jemalloc}}
samples: 2
warmup: 1
YAML
run_alloclab 0 run hooks.yaml --quiet
# Per cell: each variant's setup before its first run, prepare before each of its 4 runs
# (smoke, warm-up, 2 samples), cleanup after the cell's last run.
expect_eq "$(grep -c '^setup' log) $(grep -c '^prepare' log) $(grep -c '^cleanup' log)" "4 16 4" "hook counts"
expect_eq "$(grep -v nopreload log | grep -c '^setup')" 0 "hooks run without the preload"
expect_eq "$(sed -n 1,2p log | tr '\n' ' ')" "setup 1 glibc nopreload prepare 1 glibc " "setup, then prepare"
expect_eq "$(grep -n '' log | grep -E 'cleanup 1 jemalloc|setup 2 glibc' | cut -d: -f1 | tr '\n' ' ')" \
    "$(grep -n '' log | grep -E 'cleanup 1 jemalloc' | cut -d: -f1) $(( $(grep -n '' log | grep -E 'cleanup 1 jemalloc' | cut -d: -f1) + 1 )) " \
    "cell 1's cleanups before cell 2's setups"
for v in glibc jemalloc; do
    for n in 1 2; do
        expect_eq "$(cat "got-$v-$n.txt")" "input $n" "stdin of $v in cell n=$n"
    done
done

# A failing hook is recorded as what it is, and the run goes on.
sed -e 's/^experiment: hooks/experiment: hooks-fail/' \
    -e 's/^prepare: .*/prepare: "test {n} = 1 -o \\"$V\\" = glibc || (echo no prepare for {n} >\&2; exit 7)"/' \
    -e 's/^cleanup: .*/cleanup: "test {n} = 2 || exit 3"/' hooks.yaml >fail.yaml
run_alloclab 9 run fail.yaml --quiet
expect_eq "$(q "SELECT count(*) FROM samples WHERE status = 'prepare-failed'")" 1 \
    "jemalloc's smoke run in cell n=2 could not be prepared (and the variant left the cell)"
expect_contains "$OUT" "prepare-failed: prepare 'test 2 = 1" "the failed prepare in show"
expect_contains "$OUT" "no prepare for 2" "its output kept"
expect_contains "$OUT" "[n=1] glibc: cleanup-failed: cleanup 'test 1 = 2 || exit 3' failed: exit code 3" "cleanup failure"
sed -e 's/^experiment: hooks/experiment: hooks-setup/' -e 's/^setup: .*/setup: "test \\"$V\\" = glibc"/' \
    -e 's/^stdin: .*//' hooks.yaml >setup.yaml
run_alloclab 9 run setup.yaml --quiet
expect_contains "$OUT" "[n=1] jemalloc: setup-failed: setup 'test \"\$V\" = glibc' failed: exit code 1" "setup failure excludes"
expect_eq "$(q "SELECT count(*) FROM samples WHERE status = 'setup-failed'")" 2 "one failed setup per cell"

# A process a hook leaves behind does not outlive it.
sed -e 's/^experiment: hooks/experiment: hooks-daemon/' -e "s|^setup: .*|setup: \"sleep 317 \&\"|" \
    -e 's/^stdin: .*//' hooks.yaml >daemon.yaml
run_alloclab 0 run daemon.yaml --quiet
pgrep -f 'sleep 317' && fail "a setup's background process outlived it"

# A stdin nothing makes is an error before the run, at its position in the spec.
printf 'experiment: nostdin\ncommand: [cat]\nstdin: missing.txt\nallocators: {glibc: {}}\n' >nostdin.yaml
run_alloclab 4 run nostdin.yaml
expect_contains "$ERR" "nostdin.yaml:3:8: stdin: cannot read 'missing.txt': No such file" "missing stdin"
printf 'experiment: emptyhook\ncommand: [cat]\nprepare: []\nallocators: {glibc: {}}\n' >empty.yaml
run_alloclab 3 check empty.yaml
expect_contains "$ERR" "empty.yaml:3:10: prepare must not be empty" "an empty hook"

# A {NAME} close to a --param but not one is a typo, said before anything runs (on 7fba13f it ran
# as literal text and stored a run of failures); braces of shells, awk or JSON stay literal.
runs_before=$(q "SELECT count(*) FROM runs")
run_alloclab 2 quick -a glibc --param rows=1,2 -r 2 -w 0 --quiet -- sh -c 'echo {rowz}'
expect_contains "$ERR" "'{rowz}' names no --param (did you mean '{rows}'?)" "a misspelt parameter"
run_alloclab 2 quick -a glibc --param rows=1,2 -r 2 -w 0 --quiet --prepare 'echo {rowz}' -- "$WORKLOAD" which
expect_contains "$ERR" "did you mean '{rows}'?" "in a hook too"
expect_eq "$(q "SELECT count(*) FROM runs")" "$runs_before" "nothing run for a typo"
run_alloclab 0 quick -a glibc --param rows=1,2 -r 2 -w 0 --quiet -- sh -c 'echo ${HOME} {rows} "{}" | wc -c'

# A program found by a bare name that is a script (a pyenv shim) is said to be one: the measured
# tree is its interpreter and what it starts (on 7fba13f only show --allocators revealed a
# 32-process bash tree behind "python3"). A path the command gives is not remarked on.
mkdir -p "$WORK/shims"
printf '#!/usr/bin/env sh\nexec "%s" which\n' "$WORKLOAD" >"$WORK/shims/wrapped" && chmod +x "$WORK/shims/wrapped"
PATH="$WORK/shims:$PATH" run_alloclab 0 quick -a glibc -r 2 -w 0 --quiet -- wrapped
expect_contains "$ERR" "note: wrapped is $WORK/shims/wrapped, a script run by sh: the measured tree is that interpreter" \
    "a script behind a bare name"
run_alloclab 0 quick -a glibc -r 2 -w 0 --quiet -- "$WORK/shims/wrapped"
[[ $ERR != *"a script run by"* ]] || fail "a note for a script the command names by its path: $ERR"

# The usage names every allocator of the catalog (it is written from the catalog, not by hand).
run_alloclab 0 quick --help
usage=$(tr -s ' \n' ' ' <<<"$OUT")
for name in $("$ALLOCLAB" allocators | awk 'NR > 1 { print $1 }'); do
    [[ $usage == *" $name,"* || $usage == *"($name,"* || $usage == *" $name)"* ]] ||
        fail "quick --help does not name the catalog's $name: $usage"
done
