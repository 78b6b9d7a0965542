#!/bin/bash
# alloclab prune: old runs lose their measured samples and keep their statistics and the values
# of their metric, from which show, compare, history and fleet print exactly what they printed
# before; export of their samples refuses and says why, a bundle carries them as pruned, and a
# dry run writes nothing. Real children (a program that reports a cost, and the workload timed
# by wall time), a real database.
. "$(dirname "$0")/lib.sh"

# A reported metric (sample_metrics) that rises in the last runs: a change point to keep.
cat >"$WORK/cost.yaml" <<YAML
experiment: kept
command: [sh, -c, 'echo "cost \$((\$(cat $WORK/cost-\$WHICH) + \$\$ % 3))" >&\$ALLOCLAB_METRICS_FD']
params: {size: ["1", "2"]}
allocators:
  base: {env: {WHICH: base}}
  candidate: {env: {WHICH: candidate}}
metric: reported:cost
verify: none
samples: 8
YAML
echo 100 >"$WORK/cost-base"
for cost in 100 100 100 100 120 120 120; do
    echo "$cost" >"$WORK/cost-candidate"
    run_alloclab 0 run "$WORK/cost.yaml" --quiet
done
# Wall time of real children, with the probe's smoke run kept.
cat >"$WORK/wall.yaml" <<YAML
experiment: timed
command: ["$WORKLOAD", which]
allocators: {glibc: {}, jemalloc: {preload: jemalloc}}
samples: 6
YAML
for _ in 1 2 3; do
    run_alloclab 0 run "$WORK/wall.yaml" --quiet
done

# A sample of run 2 that crashed (its round missing from the values kept: they keep their rounds).
q "UPDATE samples SET status = 'signal', signal = 11 WHERE id = (SELECT id FROM samples WHERE run_id = 2
   AND phase = 'sample' AND round = 3 LIMIT 1)"

# What every reader prints before (but for the lines that say what was pruned).
views() {
    unpruned_views "$@" | grep -v -e '^[0-9]* of these runs are pruned' -e '^run [0-9]* was pruned '
}
unpruned_views() {
    local db=${1:-$DB}
    ALLOCLAB_DB=$db "$ALLOCLAB" history kept --format csv
    ALLOCLAB_DB=$db "$ALLOCLAB" history kept
    ALLOCLAB_DB=$db "$ALLOCLAB" history kept --relative
    ALLOCLAB_DB=$db "$ALLOCLAB" history timed --format json
    ALLOCLAB_DB=$db "$ALLOCLAB" show 1 | grep -v '^pruned '
    # (which samples the quiet guard found busy is not kept: null)
    ALLOCLAB_DB=$db "$ALLOCLAB" show 1 --format json | grep -v -e '"pruned_at"' -e '"noisy_samples"'
    ALLOCLAB_DB=$db "$ALLOCLAB" show 8 | grep -v '^pruned '
    ALLOCLAB_DB=$db "$ALLOCLAB" compare 1 2
    ALLOCLAB_DB=$db "$ALLOCLAB" compare 1 2 --relative
    ALLOCLAB_DB=$db "$ALLOCLAB" compare 8 9
    ALLOCLAB_DB=$db "$ALLOCLAB" fleet kept
    # (the other metrics keep their statistics, but no values to compare)
    ALLOCLAB_DB=$db "$ALLOCLAB" export 1 --what stats --format csv | grep -e '^run_id,' -e ',reported:cost,'
}
before=$(views)
expect_contains "$before" "REGRESSION" "a change point in the history"
samples=$(q "SELECT count(*) FROM samples")

# Refusals, before anything is written.
run_alloclab 2 prune kept
expect_contains "$ERR" "say which runs keep their samples: --keep-last N, --older-than DURATION, or both" "no rule"
run_alloclab 2 prune kept --keep-last 2 --keep-every 0
expect_contains "$ERR" "--keep-every takes a number from 1, not '0'" "--keep-every 0"
run_alloclab 2 prune kept --keep-last 0
expect_contains "$ERR" "--keep-last takes a number from 1, not '0'" "--keep-last 0: every run"
run_alloclab 2 prune kept --older-than 5
expect_contains "$ERR" "--older-than takes a duration of at least 1s with its unit (90d, 12h), not '5'" "a bare number"
run_alloclab 2 prune kpet --keep-last 2
expect_contains "$ERR" "no runs of experiment 'kpet'" "a misspelt experiment"
run_alloclab 4 prune kept --keep-last 2 --db "$WORK/nosuch.db"
[[ ! -e $WORK/nosuch.db ]] || fail "prune made a database to prune"
dropped=$(q "SELECT count(*) FROM samples WHERE run_id <= 4 AND status = 'ok' AND phase IN ('sample', 'warmup')")
run_alloclab 0 prune kept --keep-last 3 --dry-run
expect_eq "$OUT" "would prune 4 runs ($dropped samples); nothing written" "a dry run"
run_alloclab 0 prune kept --keep-last 3 --older-than 1h
expect_contains "$OUT" "pruned 0 runs" "runs younger than an hour are kept"
expect_eq "$(q "SELECT count(*) FROM samples"),$(q "SELECT count(*) FROM runs WHERE pruned_at IS NOT NULL")" \
    "$samples,0" "nothing written by them"

# The 4 oldest runs of kept, and timed's first (one in 2 kept: its 1st and 3rd) lose their samples.
size=$(stat -c %s "$DB")
run_alloclab 0 prune kept --keep-last 3
expect_contains "$OUT" "pruned 4 runs: $dropped samples dropped, their statistics and the values of their metric kept" "prune"
run_alloclab 0 prune timed --keep-last 1 --keep-every 2
expect_contains "$OUT" "pruned 1 run:" "one run in 2 kept"
expect_eq "$(q "SELECT group_concat(id) FROM (SELECT id FROM runs WHERE pruned_at IS NOT NULL ORDER BY id)")" \
    "1,2,3,4,9" "the runs pruned"
expect_eq "$(q "SELECT count(*) FROM samples WHERE run_id IN (1, 2, 3, 4, 9) AND phase IN ('sample', 'warmup')
               AND status = 'ok'")" 0 "their measured and warm-up samples are gone"
expect_eq "$(q "SELECT status FROM samples WHERE run_id = 2 AND phase = 'sample'")" signal "the failed one stays"
expect_eq "$(q "SELECT count(*) FROM samples WHERE run_id = 9 AND phase = 'smoke'")" 2 "the smoke runs stay"
expect_eq "$(q "SELECT count(*) FROM sample_metrics WHERE sample_id NOT IN (SELECT id FROM samples)")" 0 \
    "their metrics go with them"
(($(stat -c %s "$DB") <= size)) || fail "the file grew"
expect_eq "$(q "PRAGMA integrity_check")" ok "integrity"
expect_eq "$(q "SELECT count(*) FROM pruned_values WHERE points LIKE '[[%'")" 1 "values with their rounds where one is missing"
expect_eq "$(views)" "$before" "every reader prints what it printed before"
run_alloclab 0 show 1
expect_contains "$OUT" "pruned $(q "SELECT pruned_at FROM runs WHERE id = 1"): its measured samples are gone" \
    "show says so"
run_alloclab 0 history kept
expect_contains "$OUT" "4 of these runs are pruned (alloclab prune)" "history says so"
run_alloclab 0 compare 1 2
expect_contains "$OUT" "run 1 was pruned " "compare says so"
run_alloclab 0 runs kept
expect_contains "$(grep '^1 ' <<<"$OUT")" "done,pruned" "runs says so"
run_alloclab 0 show 1 --format json
python3 -c 'import json, sys; assert json.load(sys.stdin)["pruned_at"]' <<<"$OUT" || fail "pruned_at in JSON: $OUT"
run_alloclab 4 export 1 --what samples
expect_contains "$ERR" "run 1 was pruned on" "export of the samples that are gone"
run_alloclab 0 prune kept --keep-last 3
expect_contains "$OUT" "pruned 0 runs" "pruned runs stay pruned"

# A bundle carries pruned runs as such.
run_alloclab 0 export all --bundle "$WORK/all.bundle"
expect_contains "$OUT" "10 runs, 5 of them pruned" "the bundle says so"
run_alloclab 0 import "$WORK/all.bundle" --db "$WORK/copy.db"
expect_contains "$OUT" "; 5 of the runs imported were pruned" "import says so"
expect_eq "$(views "$WORK/copy.db")" "$before" "the same from the imported copy"
run_alloclab 0 import "$WORK/all.bundle" --db "$WORK/copy.db"
expect_contains "$OUT" "10 already here" "a pruned run imported again: the same content"
