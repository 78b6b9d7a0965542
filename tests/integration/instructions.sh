#!/bin/bash
# metric: instructions where the machine has no PMU: the timed children run under valgrind's
# callgrind, whose count does not move with the neighbours: an A/A pair is the same count, 5%
# more work is a verdict with 5 samples, the preloaded allocator's instructions are counted, and
# a program with several threads is refused unless the spec accepts it.
. "$(dirname "$0")/lib.sh"

[[ -e /sys/bus/event_source/devices/cpu ]] &&
    skip_test "this machine has a PMU: instructions are counted by it, not by callgrind (counters.sh covers that)"
command -v valgrind >/dev/null || skip_test "valgrind is not installed (apt-get install valgrind; scripts/test.sh installs it)"

# An A/A pair, and 5% more work, each against glibc with 5 samples: one comparison each, as a
# CI gate would have it.
spec() { # spec NAME VARIANT-LINE: glibc against one other variant
    cat >"$WORK/$1.yaml" <<YAML
experiment: $1
command: ["$WORKLOAD", churn, "20000"]
allocators:
  glibc: {}
  $2
metric: instructions
samples: 5
timeout: 60s
verify: none
YAML
}
spec aa "same: {}"
run_alloclab 0 run "$WORK/aa.yaml"
expect_contains "$OUT" "instructions counted by valgrind's callgrind instead" "the run says how it counted"
# The samples' peak RSS is valgrind's: no memory overhead or trade-off is made of it.
expect_contains "$OUT" "not given: the samples ran under valgrind's callgrind" "no memory overhead of valgrind's RSS"
[[ $OUT != *"trade-off"* ]] || fail "a time/memory trade-off of valgrind's figures: $OUT"
counts() { # the samples' counts of EXPERIMENT's VARIANT, one line each
    q "SELECT s.instructions FROM samples s JOIN variants v ON v.id = s.variant_id JOIN runs r ON r.id = s.run_id
       JOIN experiments e ON e.id = r.experiment_id WHERE e.name = '$1' AND v.name = '$2' AND s.phase = 'sample'"
}
expect_eq "$(counts aa glibc | sort -u | wc -l)" 1 "one count in 5 samples ($(counts aa glibc | tr '\n' ' '))"
expect_eq "$(counts aa same | sort -u)" "$(counts aa glibc | sort -u)" "A/A: the same count"
expect_eq "$(q "SELECT count(*) FROM samples WHERE phase = 'sample' AND (page_faults IS NOT NULL OR cycles IS NOT NULL)")" 0 \
    "no kernel counter kept of valgrind's own work"
expect_eq "$(q "SELECT count(*) FROM samples WHERE phase = 'smoke' AND instructions IS NULL")" 2 "the smoke runs go without callgrind"
verdict() { # the verdict of VARIANT against glibc in the latest run, from show's JSON
    run_alloclab 0 show --format json
    echo "$OUT" | python3 -c "import json, sys; print(json.load(sys.stdin)['cells'][0]['results']['$1']['verdict'])"
}
expect_eq "$(verdict same)" same "A/A with 5 samples"

spec more "more: {command: [\"$WORKLOAD\", churn, \"21000\"]}"
run_alloclab 0 run "$WORK/more.yaml"
glibc=$(counts more glibc | head -1) more=$(counts more more | head -1)
(( more > glibc * 103 / 100 && more < glibc * 107 / 100 )) || fail "5% more work: $more instructions against $glibc"
expect_eq "$(verdict more)" higher "5% more work with 5 samples"

# The preloaded allocator's instructions are counted: callgrind does not replace malloc.
spec preloaded "jemalloc: {preload: jemalloc}"
sed -i 's/^samples: 5/samples: 2/' "$WORK/preloaded.yaml"
run_alloclab 0 run "$WORK/preloaded.yaml"
[[ $(counts preloaded jemalloc | head -1) != "$(counts preloaded glibc | head -1)" ]] ||
    fail "jemalloc's instructions are not counted: $(counts preloaded glibc | head -1) under both"

# Several threads: callgrind runs them one at a time, so the run refuses them unless told.
cat >"$WORK/threads.yaml" <<YAML
experiment: threads
command: ["$WORKLOAD", threads, "4", "2000"]
allocators: {glibc: {}}
metric: instructions
samples: 2
timeout: 60s
YAML
run_alloclab 9 run "$WORK/threads.yaml"
expect_contains "$(q "SELECT reason FROM exclusions")" "refused: metric instructions is counted by callgrind here (no PMU), which runs threads one at a time" \
    "a threaded program refused"
echo "callgrind_threads: accept" >>"$WORK/threads.yaml"
run_alloclab 0 run "$WORK/threads.yaml"
expect_eq "$(q "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.id = (SELECT max(id) FROM runs)
                AND s.phase = 'sample' AND s.instructions > 0")" 2 "measured when the spec accepts it"

# Processes one after another are not threads: a shell running the program twice is measured
# (the threads of a tree were summed over its processes, and gcc -c, three processes, was refused).
cat >"$WORK/tree.yaml" <<YAML
experiment: tree
command: [sh, -c, "$WORKLOAD churn 2000; $WORKLOAD churn 2000"]
allocators: {glibc: {}}
metric: instructions
samples: 2
timeout: 60s
verify: none
YAML
run_alloclab 0 run "$WORK/tree.yaml"
expect_eq "$(q "SELECT count(*) FROM exclusions e JOIN runs r ON r.id = e.run_id JOIN experiments x ON x.id = r.experiment_id
                WHERE x.name = 'tree'")" 0 "single-threaded processes of a tree are not refused"
sed -e 's/^experiment: tree/experiment: single/' -e "s|command: .*|command: [\"$WORKLOAD\", churn, \"2000\"]|" \
    "$WORK/tree.yaml" >"$WORK/single.yaml"
run_alloclab 0 run "$WORK/single.yaml"
tree=$(counts tree glibc | head -1) single=$(counts single glibc | head -1)
(( tree > single * 19 / 10 )) || fail "the tree's processes summed: $tree instructions, one process $single"
